"""TLS settings of the start-up check's broker connections.

``scheduler-server`` opens a plain kombu connection to each broker host
at start-up to check that it answers; ``ssl_options(conf, hostname)``
gives that connection the TLS parameters the servers' own connections
use (``scheduler.transport.broker``, from ``[oslo_messaging_rabbit]``
``ssl``, ``ssl_ca_file``, ``ssl_cert_file``, ``ssl_key_file`` and
``ssl_version``, as oslo.messaging reads them), so a TLS-only broker
passes the check and an untrusted certificate fails it with a clear
reason (``describe_error``).
"""

import ssl

from scheduler.transport import broker as transport_broker

GROUP = 'oslo_messaging_rabbit'


def ssl_options(conf, hostname):
    """kombu's ``ssl`` argument: False, True, or a dict of parameters."""
    return transport_broker.Broker(conf).ssl_options(hostname)


def describe_error(conf, exc):
    """``exc`` as text, with what to check when it is a TLS failure."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        return ('TLS certificate not trusted (%s); check [%s] ssl_ca_file '
                '= %s' % (exc, GROUP, getattr(conf, GROUP).ssl_ca_file))
    if isinstance(exc, ssl.SSLError):
        return ('TLS handshake failed (%s); check the [%s] ssl options'
                % (exc, GROUP))
    return str(exc)
