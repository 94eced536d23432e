"""AttributeStore: decoded on demand, derived values once per row change."""

import json

import pytest

from scheduler.host_state.attributes import AttributeStore
from tests.unit.filters import hosts


def _store(*rows):
    store = AttributeStore()
    store.extend(json.dumps(r) if r is not None else None for r in rows)
    return store


class _Counter:
    """A derive function that counts its calls."""

    def __init__(self, key):
        self.key = key
        self.calls = 0

    def __call__(self, attributes):
        self.calls += 1
        return attributes.get(self.key)


def test_derived_is_computed_once_per_row():
    store = _store({'a': 1}, {'a': 2})
    count = _Counter('a')
    assert [store.derived(r, 'a', count) for r in (0, 1, 0, 1)] == \
        [1, 2, 1, 2]
    assert count.calls == 2


# (what the row is set to, the derived value read after it)
RESETS = [
    ('json text', json.dumps({'a': 7}), 7),
    ('a dict', {'a': 8}, 8),
    ('nothing', None, None),
]


@pytest.mark.parametrize('value, expected', [r[1:] for r in RESETS],
                         ids=[r[0] for r in RESETS])
def test_setting_a_row_drops_what_was_derived_from_it(value, expected):
    store = _store({'a': 1}, {'a': 2})
    count = _Counter('a')
    store.derived(0, 'a', count)
    store.derived(1, 'a', count)
    store.set(0, value)
    assert store.derived(0, 'a', count) == expected
    assert store.derived(1, 'a', count) == 2  # the other row kept
    assert count.calls == 3


def test_an_exception_is_not_cached():
    store = _store({'a': 1})
    calls = []

    def failing(attributes):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError('first time')
        return 'ok'

    with pytest.raises(ValueError):
        store.derived(0, 'x', failing)
    assert store.derived(0, 'x', failing) == 'ok'


def test_host_re_reporting_refreshes_its_derived_value():
    table = hosts.table(dict(host='h1', running_vms=1),
                        dict(host='h2', running_vms=5))
    count = _Counter('running_vms')
    assert table.view(0).derived('vms', count) == 1
    table.apply([hosts.provider(1, host='h1', running_vms=4)])
    assert [table.view(r).derived('vms', count) for r in (0, 1)] == [4, 5]
    assert count.calls == 3


def test_extend_matches_append_and_set():
    texts = [json.dumps({'a': 1}), None, '']
    one_by_one = AttributeStore()
    for row, text in enumerate(texts):
        one_by_one.append()
        one_by_one.set(row, text)
    at_once = AttributeStore()
    at_once.extend(texts)
    assert at_once._raw == one_by_one._raw
    assert [at_once[r] for r in range(3)] == [{'a': 1}, {}, {}]


def test_texts_are_what_is_stored_not_what_is_decoded():
    store = _store({'a': 1}, None, {'b': 2})
    assert store[0] == {'a': 1}  # decoding keeps the text
    store.set(2, {'b': 3})  # a dict replaces the text
    assert list(store.texts()) == [json.dumps({'a': 1}), None, None]
