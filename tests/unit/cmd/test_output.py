"""Tables and JSON printed by the operator commands."""

import datetime
import json

from scheduler.cmd import output


def test_table_aligns_columns_and_renders_cells():
    text = output.table(['name', 'ratio', 'when'], [
        ['h1', 1.5, datetime.datetime(2026, 3, 1, 12, 0, 5)],
        ['longer-name', None, None]])
    lines = text.splitlines()
    assert lines[0] == lines[2] == lines[-1]
    assert len({len(line) for line in lines}) == 1
    assert '| h1          | 1.5   | 2026-03-01 12:00:05 |' in lines
    assert '| longer-name | -     | -                   |' in lines


def test_empty_table_has_only_the_header():
    assert len(output.table(['a'], []).splitlines()) == 4


def test_json_renders_datetimes():
    text = output.to_json({'b': datetime.datetime(2026, 3, 1), 'a': 1})
    assert json.loads(text) == {'a': 1, 'b': '2026-03-01 00:00:00'}
    assert text.index('"a"') < text.index('"b"')
