"""Resource trackers in a process of their own: push stats, then exit.

    python -m tests.functional.tracker --config-file F [--per-second N] \
        REPORTS.json

``REPORTS.json`` is a list of ``[name, stats]`` pairs (``name`` a host or
a ``[host, node]`` pair, ``stats`` a dict of compute_nodes fields). Each is
sent with ``SchedulerClient.update_resource_stats``, built from the same
config file as the scheduler, exactly as a compute host would.

``--per-second N`` paces the reports (N a second, as trackers of a
cloud report), instead of sending them as fast as the broker takes them.

``push_stats(server, reports, per_second=None)`` runs this module as a
subprocess from the test process and fails the test if it does not exit
0.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import time
import uuid

import pytest
from oslo_config import cfg

from scheduler.client import SchedulerClient
from scheduler.context import RequestContext

ROOT = pathlib.Path(__file__).resolve().parents[2]
TIMEOUT = 120


def push_stats(server, reports, per_second=None):
    """Send ``reports`` from a new process; returns its stdout."""
    path = server.workdir / ('reports-%s.json' % uuid.uuid4().hex[:8])
    path.write_text(json.dumps(reports))
    pace = ['--per-second', str(per_second)] if per_second else []
    result = subprocess.run(
        [sys.executable, '-m', 'tests.functional.tracker', '--config-file',
         str(server.config_path), *pace, str(path)],
        cwd=ROOT,
        capture_output=True, text=True, timeout=TIMEOUT)
    if result.returncode != 0:
        pytest.fail('tracker process exited with %d:\n%s%s' % (
            result.returncode, result.stdout, result.stderr), pytrace=False)
    return result.stdout


def main(argv=None):
    parser = argparse.ArgumentParser(prog='tracker')
    parser.add_argument('--config-file', required=True)
    parser.add_argument('--per-second', type=float)
    parser.add_argument('reports')
    args = parser.parse_args(argv)
    with open(args.reports) as f:
        reports = json.load(f)
    conf = cfg.ConfigOpts()
    conf(['--config-file', args.config_file], project='scheduler',
         default_config_files=[])
    client = SchedulerClient(conf)
    ctxt = RequestContext(user_id='tracker', project_id='service',
                          roles=['service'])
    start = time.monotonic()
    try:
        for index, (name, stats) in enumerate(reports):
            if args.per_second:
                time.sleep(max(0.0, start + index / args.per_second
                               - time.monotonic()))
            if isinstance(name, list):
                name = tuple(name)
            client.update_resource_stats(ctxt, name, stats)
    finally:
        client.close()
    print('pushed %d reports' % len(reports))
    return 0


if __name__ == '__main__':
    sys.exit(main())
