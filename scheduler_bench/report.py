"""Tables, targets, JSON files and charts of the benchmark scenarios.

A scenario's result is a plain dict (JSON-ready). ``Target`` states one
figure the issue asks for; ``judge(targets, result)`` gives a row per
target with the measured figure and whether it is met. ``write_json``
stores the result with the machine it was measured on; ``save_chart``
draws it with matplotlib, which is optional (``pip install matplotlib``,
or the ``bench`` extra).
"""

import dataclasses
import datetime
import json
import math
import operator
import os
import platform
import sys

from scheduler.cmd import output

_OPS = {'<=': operator.le, '>=': operator.ge, '==': operator.eq,
        '<': operator.lt}


@dataclasses.dataclass(frozen=True)
class Target:
    """``path`` (keys into the result) ``op`` ``limit`` ``unit``."""

    name: str
    path: tuple
    op: str
    limit: float
    unit: str = ''

    def measured(self, result):
        value = result
        for key in self.path:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return value

    def met(self, value):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        return _OPS[self.op](value, self.limit)


def judge(targets, result):
    """One dict per target: name, measured, target, met (None: not run)."""
    rows = []
    for target in targets:
        value = target.measured(result)
        rows.append({'target': target.name, 'measured': value,
                     'required': '%s %g %s' % (target.op, target.limit,
                                               target.unit),
                     'met': target.met(value)})
    return rows


def targets_table(rows):
    verdict = {True: 'met', False: 'NOT MET', None: 'not measured'}
    return output.table(
        ['target', 'measured', 'required', 'verdict'],
        [[r['target'], _fmt(r['measured']), r['required'].strip(),
          verdict[r['met']]] for r in rows])


def table(columns, rows):
    return output.table(columns, [[_fmt(v) for v in row] for row in rows])


def _fmt(value):
    if isinstance(value, float):
        if math.isnan(value):
            return '-'
        if abs(value) >= 100:
            return '%.0f' % value
        return '%.2f' % value if abs(value) < 10 else '%.1f' % value
    return value


def environment(options):
    return {'date': datetime.datetime.now(datetime.timezone.utc)
            .strftime('%Y-%m-%dT%H:%M:%SZ'),
            'python': platform.python_version(),
            'machine': platform.machine(), 'cpus': os.cpu_count(),
            'load_average': [round(x, 2) for x in os.getloadavg()],
            'database': options.db, 'quick': options.quick}


def write_json(options, name, result):
    os.makedirs(options.output_dir, exist_ok=True)
    path = os.path.join(options.output_dir, '%s.json' % name)
    with open(path, 'w') as f:
        json.dump(result, f, indent=2, sort_keys=True, default=str)
        f.write('\n')
    return path


def load_pyplot():
    """matplotlib.pyplot with a file-only backend, or None."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use('Agg')
    from matplotlib import pyplot
    return pyplot


def save_chart(options, name, draw, result):
    """Call ``draw(pyplot, result)`` and save ``<name>.png``; the path.

    Returns None (and says how to get it) when matplotlib is missing.
    """
    pyplot = load_pyplot()
    if pyplot is None:
        print('scheduler-bench: --plot needs matplotlib: pip install '
              'matplotlib (or pip install "openstack-scheduler[bench]")',
              file=sys.stderr)
        return None
    os.makedirs(options.output_dir, exist_ok=True)
    path = os.path.join(options.output_dir, '%s.png' % name)
    figure = draw(pyplot, result)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)
    return path
