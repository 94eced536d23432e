"""``scheduler-bench``: measure the scheduler against its scale targets.

    scheduler-bench [latency|storm|fill|churn|batch|steady|writers|million|
                     providers|edge|soak|cost|nova_path|all]
                    [--quick]
                    [--db postgresql|mariadb|sqlite]
                    [--output-dir bench-results] [--plot] [--hosts N ...]
                    [--json]

Each scenario prints a table of its figures and one of its targets (met or
not), and writes ``<scenario>.json`` (and with ``--plot`` a PNG chart) to
the output directory. Scenarios that talk RPC need RabbitMQ on
127.0.0.1:5672 (guest/guest); PostgreSQL (postgres@127.0.0.1:5432, db
``test``) or MariaDB (root@127.0.0.1:3306, db ``test``) host the fresh,
uniquely named databases the runs create and drop. ``latency --db sqlite
--no-rpc``, ``fill --db sqlite`` and ``edge`` need no service at all.

Exit status: 0 when every measured target is met, 1 when one is not, 2 on
a usage or service error.
"""

import argparse
import importlib
import json
import os
import shutil
import sys
import time

from scheduler_bench import cluster
from scheduler_bench import report
from scheduler import version
from scheduler_bench.options import Options

SCENARIOS = ('latency', 'storm', 'fill', 'churn', 'batch', 'steady', 'writers',
             'million', 'providers', 'edge', 'soak', 'cost', 'nova_path')
RPC_ONLY = ('storm', 'churn', 'batch', 'steady', 'soak', 'cost', 'nova_path')
# not for 'all': run by name (soak: 10 minutes, 1 with --quick;
# nova_path: needs nova's venv with Placement)
LONG = ('soak', 'nova_path')


def _parser():
    parser = argparse.ArgumentParser(
        prog='scheduler-bench',
        description='Benchmark the scheduler: latency, storm, fill, churn '
                    'and batch scenarios.')
    parser.add_argument('--version', action='version',
                        version='%(prog)s ' + version.release())
    parser.add_argument('scenario', nargs='?', default='all',
                        choices=SCENARIOS + ('all',),
                        help='scenario to run (default: all)')
    parser.add_argument('--quick', action='store_true',
                        help='smaller clusters and shorter runs (all '
                             'scenarios in about two minutes)')
    parser.add_argument('--db', '--database', choices=cluster.KINDS,
                        default='postgresql',
                        help='database that holds the claims (default: '
                             'postgresql)')
    parser.add_argument('--db-url', metavar='URL',
                        help='an administrator URL of the server of --db '
                             'to create the bench database on, e.g. a '
                             'Galera cluster behind HAProxy: '
                             'mysql+pymysql://root@127.0.0.1:3307/test '
                             '(default: the local server)')
    parser.add_argument('--output-dir', default='bench-results',
                        help='where JSON results and charts go')
    parser.add_argument('--plot', action='store_true',
                        help='also draw a PNG chart per scenario '
                             '(needs matplotlib)')
    parser.add_argument('--hosts', type=int, nargs='+', metavar='N',
                        help='cluster size(s): every size for latency, the '
                             'first for the other scenarios')
    parser.add_argument('--no-rpc', action='store_true',
                        help='skip what needs RabbitMQ: the end-to-end part '
                             'of latency, and storm, churn and batch')
    parser.add_argument('--requests', type=int, metavar='N',
                        help='requests per measured series (default: each '
                             'scenario\'s own)')
    parser.add_argument('--seed', type=int, default=1,
                        help='seed of the cluster and the request mix')
    parser.add_argument('--no-progress', action='store_true',
                        help='no progress bar on stderr')
    parser.add_argument('--json', action='store_true',
                        help='print each result as one JSON document on '
                             'stdout instead of its tables')
    parser.add_argument('--keep-logs', action='store_true',
                        help='keep the server configs and logs (their '
                             'directory is printed)')
    return parser


def run_scenario(name, options, as_json=False):
    """Run one scenario: print its tables, write its JSON (and chart)."""
    module = importlib.import_module('scheduler_bench.%s' % name)
    started = time.monotonic()
    load_before = [round(x, 2) for x in os.getloadavg()]
    result = module.run(options)
    result['elapsed_s'] = round(time.monotonic() - started, 1)
    result['environment'] = report.environment(options)
    result['environment']['load_average_before'] = load_before
    result['targets'] = report.judge(module.TARGETS, result)
    # with --json, stdout holds only the JSON documents
    notes = sys.stderr if as_json else sys.stdout
    print('\n== %s (%.0fs, %s, load average %.1f before, %.1f after) =='
          % (name, result['elapsed_s'], options.db, load_before[0],
             result['environment']['load_average'][0]), file=notes)
    if as_json:
        print(json.dumps(result, indent=2, sort_keys=True, default=str))
    else:
        print(module.render(result))
        print(report.targets_table(result['targets']))
    path = report.write_json(options, name, result)
    print('results: %s' % path, file=notes)
    if options.plot:
        chart = report.save_chart(options, name, module.draw, result)
        if chart:
            print('chart: %s' % chart)
    sys.stdout.flush()
    return result


def main(argv=None):
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    if (args.hosts and min(args.hosts) < 1) or (
            args.requests is not None and args.requests < 1):
        print('scheduler-bench: --hosts and --requests must be positive',
              file=sys.stderr)
        return 2
    if args.plot and report.load_pyplot() is None:
        print('scheduler-bench: --plot needs matplotlib, which is not '
              'installed: pip install matplotlib', file=sys.stderr)
        return 2
    options = Options(db=args.db, db_url=args.db_url, quick=args.quick,
                      output_dir=args.output_dir, plot=args.plot,
                      hosts=args.hosts, seed=args.seed,
                      progress=not args.no_progress, rpc=not args.no_rpc,
                      requests=args.requests)
    names = ([n for n in SCENARIOS if n not in LONG]
             if args.scenario == 'all' else (args.scenario,))
    if args.no_rpc:
        names = [n for n in names if n not in RPC_ONLY]
        if not names:
            print('scheduler-bench: %s needs RabbitMQ; drop --no-rpc' %
                  args.scenario, file=sys.stderr)
            return 2
    verdicts = []
    try:
        for name in names:
            result = run_scenario(name, options, args.json)
            verdicts.extend(t['met'] for t in result['targets'])
    except KeyboardInterrupt:
        print('scheduler-bench: interrupted', file=sys.stderr)
        return 130
    except Exception as exc:
        print('scheduler-bench: %s: %s' % (type(exc).__name__, exc),
              file=sys.stderr)
        return 2
    finally:
        if args.keep_logs:
            print('server configs and logs: %s' % options.workdir,
                  file=sys.stderr)
        else:
            shutil.rmtree(options.workdir, ignore_errors=True)
    return 1 if False in verdicts else 0


if __name__ == '__main__':
    sys.exit(main())
