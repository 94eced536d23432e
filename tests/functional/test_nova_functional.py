"""Nova's own functional tests, with this scheduler as their scheduler.

Runs ``tools/nova-functional`` (nova 34.0.0's unmodified functional tests,
the scheduler started by ``tests/nova_functional/harness.py`` behind
``start_service('scheduler')``, with its Placement feed and write-back)
on the CI subset, ``tools/nova-functional-ci.txt``: tests of every module
of the selection (server groups, aggregates, zones, the scheduler's own
tests, cold and live migration, resize, evacuate, unshelve, rebuild,
reschedules) that pass with nova-scheduler. Every one must pass here too;
the whole selection and its comparison with nova-scheduler are in
doc/source/nova-functional.rst.

The side virtualenv (nova, Placement, nova's test requirements) is built
by the tool, once per machine; ``.ci/run`` builds it before the tests.
Where it cannot be built the test is skipped, except with ``CI=true``.
"""

import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOL = ROOT / 'tools' / 'nova-functional'
SUBSET = ROOT / 'tools' / 'nova-functional-ci.txt'
RESULT = re.compile(r'^\{\d+\} (\S+) \[[\d.]+s\] \.\.\. (ok|FAILED|SKIPPED)',
                    re.MULTILINE)


def _subset():
    return [line.strip() for line in SUBSET.read_text().splitlines()
            if line.strip() and not line.startswith('#')]


def _prepared():
    result = subprocess.run([str(TOOL), '--prepare'], capture_output=True,
                            text=True, timeout=1800)
    if result.returncode != 0:
        message = ('nova\'s side virtualenv could not be built (%s): %s'
                   % (TOOL.name, result.stderr[-1500:]))
        if os.environ.get('CI') == 'true':
            pytest.fail(message)
        pytest.skip(message)


def test_nova_s_functional_tests_pass_with_this_scheduler():
    _prepared()
    wanted = _subset()
    result = subprocess.run(
        [str(TOOL), '--scheduler', 'this', '--concurrency', '1'] +
        ['^%s$' % re.escape(test) for test in wanted],
        capture_output=True, text=True, timeout=1800, cwd=ROOT)
    outcomes = dict(RESULT.findall(result.stdout))
    failed = sorted(t for t, outcome in outcomes.items() if outcome != 'ok')
    missing = sorted(set(wanted) - set(outcomes))
    assert not failed and not missing, (
        'nova functional tests failed with this scheduler: %s; not run: %s'
        '\n%s' % (failed, missing, result.stdout[-6000:]))
    assert result.returncode == 0, result.stdout[-3000:]
