"""Human-readable tables and JSON for the operator commands."""

import datetime
import json


def _cell(value):
    if value is None:
        return '-'
    if isinstance(value, float):
        return '%g' % value
    if isinstance(value, datetime.datetime):
        return value.strftime('%Y-%m-%d %H:%M:%S')
    return str(value)


def table(columns, rows):
    """``columns``: header names; ``rows``: lists of values."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells])
              for i, c in enumerate(columns)]
    line = '+' + '+'.join('-' * (w + 2) for w in widths) + '+'
    out = [line, '| ' + ' | '.join(c.ljust(w) for c, w in
                                    zip(columns, widths)) + ' |', line]
    for row in cells:
        out.append('| ' + ' | '.join(c.ljust(w) for c, w in
                                      zip(row, widths)) + ' |')
    out.append(line)
    return '\n'.join(out)


def to_json(value):
    return json.dumps(value, indent=2, sort_keys=True, default=_cell)
