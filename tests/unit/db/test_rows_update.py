"""scheduler.db.rows_update: the MySQL/MariaDB statement's text and runs.

The statement itself runs on MariaDB in
``tests/functional/test_report_writes.py``."""

import sqlalchemy as sa

from scheduler.db import rows_update

_META = sa.MetaData()
_T = sa.Table('things', _META,
              sa.Column('a', sa.Integer), sa.Column('b', sa.String(10)),
              sa.Column('n', sa.Integer), sa.Column('note', sa.Text))
_UPDATE = rows_update.RowsUpdate(_T, ('a', 'b'), {
    'n': rows_update.as_reported,
    'note': lambda value: sa.func.coalesce(value, _T.c.note)})


def test_the_mysql_statement_joins_the_rows_to_the_table_by_its_keys():
    text = _UPDATE.mysql_text(3)
    assert text.startswith('UPDATE (SELECT %s AS a, %s AS b, %s AS n, '
                           '%s AS note UNION ALL SELECT %s, %s, %s, %s '
                           'UNION ALL SELECT %s, %s, %s, %s) AS v '
                           'STRAIGHT_JOIN things ON ')
    assert text.endswith('ON things.a = v.a AND things.b = v.b SET '
                         'things.n = v.n, '
                         'things.note = coalesce(v.note, things.note)')
    assert text.count('%s') == 12
    assert _UPDATE.mysql_text(3) is text        # built once per count


def _row(i, note=''):
    return {'a': i, 'b': 'x', 'n': i, 'note': note}


def test_rows_go_in_runs_bounded_by_count_and_text(monkeypatch):
    monkeypatch.setattr(rows_update, 'MYSQL_ROWS', 3)
    monkeypatch.setattr(rows_update, 'MYSQL_TEXT', 10)
    sizes = [len(c) for c in rows_update._chunks(
        [_row(i) for i in range(7)])]
    assert sizes == [3, 3, 1]
    # text: 'x' and the note count (5 a row, then 21, then 1); a row
    # larger than the bound goes alone
    runs = list(rows_update._chunks(
        [_row(0, 'a' * 4), _row(1, 'b' * 4), _row(2, 'c' * 20), _row(3)]))
    assert [[r['a'] for r in run] for run in runs] == [[0, 1], [2], [3]]
    assert list(rows_update._chunks([])) == []
