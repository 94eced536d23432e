"""The length of the text a message was read from, which the edge bounds
the number of its values by (``scheduler.transport.wire.text_length``)."""

from oslo_serialization import jsonutils

from scheduler.transport import wire


def test_the_inner_text_of_the_envelope_is_measured():
    message = {'method': 'build_failed', 'args': {'name': 'h1'}}
    body = wire.pack(message)
    assert wire.text_length(body) == len(jsonutils.dumps(message))
    assert wire.unpack(body) == message


def test_a_text_that_may_hold_a_lone_surrogate_has_no_stated_length():
    """The edge then walks the message's strings itself."""
    for value in ('\ud800', 'a\U0001f600', '\\ud800'):
        assert wire.text_length(wire.pack({'args': {'a': value}})) is None
    inner = jsonutils.dumps({'args': {'a': 'x'}}).replace('x', '\ud800')
    assert wire.text_length({wire.VERSION_KEY: '2.0',
                             wire.MESSAGE_KEY: inner}) is None
    assert wire.text_length(wire.pack({'args': {'a': 'é\u00e9'}})) == \
        len(jsonutils.dumps({'args': {'a': 'éé'}}))


def test_a_body_without_the_envelope_has_no_known_length():
    assert wire.text_length({'method': 'build_failed'}) is None
    assert wire.text_length({wire.VERSION_KEY: '2.0',
                             wire.MESSAGE_KEY: {'not': 'text'}}) is None
