"""The start-up broker check uses oslo.messaging's TLS settings."""

import ssl

import pytest

from scheduler.service import broker_tls
from scheduler import conf as sched_conf


def _conf(**rabbit):
    conf = sched_conf.new_config()
    conf([], default_config_files=[])
    for name, value in rabbit.items():
        conf.set_override(name, value, 'oslo_messaging_rabbit')
    return conf


def test_no_tls_by_default():
    assert broker_tls.ssl_options(_conf(), 'rabbit1') is False


def test_tls_without_a_ca_encrypts_only():
    assert broker_tls.ssl_options(_conf(ssl=True), 'rabbit1') is True


def test_a_ca_file_verifies_the_certificate_and_host_name():
    options = broker_tls.ssl_options(
        _conf(ssl=True, ssl_ca_file='/etc/ca.pem', ssl_cert_file='/c.pem',
              ssl_key_file='/k.pem'), 'rabbit1')
    assert options == {'ca_certs': '/etc/ca.pem',
                       'cert_reqs': ssl.CERT_REQUIRED,
                       'server_hostname': 'rabbit1',
                       'certfile': '/c.pem', 'keyfile': '/k.pem'}


def test_an_untrusted_certificate_names_the_ca_option():
    conf = _conf(ssl=True, ssl_ca_file='/etc/ca.pem')
    error = ssl.SSLCertVerificationError(1, 'certificate verify failed')
    text = broker_tls.describe_error(conf, error)
    assert text.startswith('TLS certificate not trusted')
    assert 'ssl_ca_file = /etc/ca.pem' in text
    assert broker_tls.describe_error(conf, OSError('refused')) == 'refused'


@pytest.mark.parametrize('options, words', [
    ({'rabbit_ha_queues': True, 'rabbit_quorum_queue': True},
     'rabbit_ha_queues and a quorum queue option'),
    ({'rabbit_stream_fanout': True},
     'rabbit_stream_fanout needs rabbit_transient_quorum_queue'),
    ({'ssl': True, 'ssl_version': 'tlsv9'}, "ssl_version 'tlsv9'"),
])
def test_broker_options_no_broker_accepts_stop_the_start(options, words):
    """Checked before any worker starts, with the option named."""
    from scheduler import exception
    from scheduler.service import startup_checks
    conf = _conf()
    conf.set_override('transport_url', 'rabbit://guest:guest@rabbit1:5672/')
    for name, value in options.items():
        conf.set_override(name, value, group='oslo_messaging_rabbit')
    with pytest.raises(exception.ConfigInvalid, match=words):
        startup_checks.check_config(conf)
