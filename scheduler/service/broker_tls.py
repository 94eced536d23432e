"""TLS settings for our own broker connections, as oslo.messaging's.

The RPC transport itself is oslo.messaging's: it reads
``[oslo_messaging_rabbit] ssl``, ``ssl_ca_file``, ``ssl_cert_file``,
``ssl_key_file`` and ``ssl_version``. ``scheduler-server`` also opens a
plain kombu connection at start-up to check that the broker answers;
``ssl_options(conf, hostname)`` gives that connection the same TLS
parameters, so a TLS-only broker passes the check and an untrusted
certificate fails it with a clear reason (``describe_error``). Like
oslo.messaging, a CA file turns on certificate and host name
verification; ``ssl = true`` without one encrypts only.
"""

import ssl

GROUP = 'oslo_messaging_rabbit'


def ssl_options(conf, hostname):
    """kombu's ``ssl`` argument: False, True, or a dict of parameters."""
    group = getattr(conf, GROUP)
    if not group.ssl:
        return False
    params = {}
    if group.ssl_version:
        params['ssl_version'] = getattr(ssl, 'PROTOCOL_' + group.ssl_version)
    if group.ssl_key_file:
        params['keyfile'] = group.ssl_key_file
    if group.ssl_cert_file:
        params['certfile'] = group.ssl_cert_file
    if group.ssl_ca_file:
        params['ca_certs'] = group.ssl_ca_file
        params['cert_reqs'] = ssl.CERT_REQUIRED
        params['server_hostname'] = hostname
    return params or True


def describe_error(conf, exc):
    """``exc`` as text, with what to check when it is a TLS failure."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        return ('TLS certificate not trusted (%s); check [%s] ssl_ca_file '
                '= %s' % (exc, GROUP, getattr(conf, GROUP).ssl_ca_file))
    if isinstance(exc, ssl.SSLError):
        return ('TLS handshake failed (%s); check the [%s] ssl options'
                % (exc, GROUP))
    return str(exc)
