"""Scenario ``cost``: CPU per operation, beside a bare oslo.messaging floor.

    scheduler-bench cost [--database postgresql|mariadb|sqlite]
                         [--hosts 10000] [--json]

Latency on a shared machine moves with its neighbours; the CPU spent per
operation does not, or less. This scenario measures, in one run:

* **the floor**: an oslo.messaging echo server in its own process (the
  threading executor, ``scheduler_bench.rpcfloor.EchoServer``) on the
  same broker, running through the whole run, sent 2,000 sequential
  calls and then 2,000 casts at the tracker rate below, each carrying a
  tracker report as the client serializes it: first on its own (the
  ``bare`` rows), then again **right beside each phase of the
  scheduler** (2,000 casts before the reports; 500 calls before each
  round of placements, below). Each ratio divides by the floor measured
  next to it: this machine's speed moves by a third within minutes
  (other guests of its host), and a floor measured minutes before a
  phase made ratios of the same code move from 3.4x to 5.1x;
* **the scheduler**, per worker layout (2 workers; 2 workers and one
  report worker, ``[DEFAULT] report_workers = 1``), each on a fresh 10k
  host cluster (30% used) and a fresh ``scheduler-server``: a separate
  tracker process (``scheduler_bench.churn``'s) casts 3,000 changed
  reports at 300/s, counted until the server is idle again; then one
  conductor sends 1,000 single-instance ``select_destinations`` one
  after the other, in 4 rounds of 250, each right after 500 bare calls
  (a floor taken once beside a phase of a few seconds still left the
  same code's placement ratio at 2.6x in one run and 3.5x in the next;
  interleaved, the drift weighs on both sides of each round alike). The
  placement's figures are pooled over the rounds (CPU over operations,
  the floor's likewise), and each round's own ratio is kept
  (``round_ratios``) to show the spread. Before each round one request
  that fits nowhere opens the conductor's connection: its CPU is in the
  round, 1/250 of it, not its count.

CPU is utime + stime from ``/proc`` (``scheduler_bench.cost_cpu``) of
every process of the server (the launcher and its descendants), of the
echo server, and of the database: on PostgreSQL the backends that
serve the run's database and the server's background processes (WAL
writer, checkpointer; other databases' sessions are left out), on
MariaDB the ``mariadbd`` process, on SQLite nothing (the database runs
inside the workers). Each meter's idle rate, measured over 5 s just
before each phase (before the first round of the placements, for all
of their rounds; ``/proc`` counts in 10 ms ticks per process, so a
shorter window blurs it), is subtracted over the phase. Reports
absorbed are counted as in ``churn`` (the stored ``bench_beat``), after
the phase.

Each cost is printed per operation and as a ratio to the floor it rides
on (a report to a bare cast, a placement to a bare call, each measured
right before it), against issue 22's targets: a report <= 1.5x a cast and <=
0.2 ms of database CPU, a placement <= 2.5x a call and <= 0.8 ms of
database CPU.
"""

import time

import sqlalchemy as sa

from scheduler import objects
from scheduler.context import RequestContext
from scheduler_bench import churn
from scheduler_bench import cluster
from scheduler_bench import conductors
from scheduler_bench import cost_cpu
from scheduler_bench import report
from scheduler_bench import rpcfloor
from scheduler_bench import workload
from scheduler_bench.deployment import Deployment

NAME = 'cost'
HOSTS, QUICK_HOSTS = 10000, 1000
USED = 0.3
BARE_OPS, QUICK_BARE_OPS = 2000, 300
REPORTS, QUICK_REPORTS = 3000, 600
REPORT_RATE = 300.0
PLACEMENTS, QUICK_PLACEMENTS = 1000, 100
#: rounds of (bare calls, placements) the placements are measured in
ROUNDS, QUICK_ROUNDS = 4, 1
IDLE_S, QUICK_IDLE_S = 5.0, 1.0
WARMUP_CALLS = 20

#: (key, name, server options): the worker layouts, the judged one first
LAYOUTS = (('default', '2 workers', None),
           ('report_worker', '2 workers + 1 report worker',
            {'DEFAULT': {'report_workers': 1}}))
#: operation: (label, floor, ratio limit, database ms limit)
OPERATIONS = {'report': ('absorbed report (cast)', 'cast', 1.5, 0.2),
              'placement': ('placement (1 instance, call)', 'call', 2.5,
                            0.8)}

TARGETS = tuple(
    target
    for op, (label, floor, ratio, db_ms) in OPERATIONS.items()
    for target in (
        report.Target('cost: server CPU per %s / bare %s' % (op, floor),
                      ('layouts', 'default', op, 'ratio'), '<=', ratio,
                      'x'),
        report.Target('cost: database CPU per %s' % op,
                      ('layouts', 'default', op, 'database_ms'), '<=',
                      db_ms, ' ms')))


def report_payload():
    """A tracker report's arguments as the client puts them on the wire."""
    host = workload.host_name(0)
    node = objects.ComputeNode.from_stats(host, host, churn._stats(0, 1))
    serializer = objects.SchedulerObjectSerializer()
    return {'name': host,
            'stats': serializer.serialize_entity(RequestContext(), node)}


def _phase(options, meters, work, idle=None):
    """Run ``work()`` between two readings of ``meters``, until the
    server is idle again; (CPU seconds per meter, what work returned).
    ``idle``: the meters' idle rates, measured just before (else here)."""
    phase = cost_cpu.Phase(meters)
    if idle is None:
        idle = phase.idle(options.pick(IDLE_S, QUICK_IDLE_S))
    else:
        phase.idle_rate = dict(idle)
    phase.start()
    value = work()
    drain = phase.until_idle()
    cpu = phase.stop()
    cpu['idle_cores'] = {k: round(v, 3) for k, v in idle.items()}
    cpu['drain_s'] = round(drain, 1)
    return cpu, value


def _figures(cpu, ops, **extra):
    return dict(extra, ops=ops, elapsed_s=round(cpu['elapsed_s'], 1),
                idle_cores=cpu['idle_cores'], drain_s=cpu['drain_s'],
                server_ms=cost_cpu.per_op_ms(cpu['server'], ops),
                database_ms=cost_cpu.per_op_ms(cpu.get('database'), ops))


def _paced(send, count, rate):
    """Call ``send()`` ``count`` times at ``rate`` per second."""
    started = time.monotonic()
    for i in range(count):
        delay = started + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        send()
    return count


def echo_floor():
    """The floor's echo server, sent tracker reports
    (``rpcfloor.EchoServer``)."""
    return rpcfloor.EchoServer(report_payload(), warmup=WARMUP_CALLS)


def bare(options, floor=None):
    """The echo server's CPU per call and per cast of a report, on its
    own (``floor``: an open ``echo_floor()``, else one for this)."""
    if floor is None:
        with echo_floor() as floor:
            return bare(options, floor)
    return {kind: floor_of(options, floor, kind) for kind in ('call', 'cast')}


def floor_of(options, floor, kind, count=None, idle=None):
    """One phase of the floor: sequential calls, or casts at the tracker
    rate (``count``: the scenario's number by default; ``idle``: the
    echo server's idle rate, measured here if not given)."""
    count = count or options.count(BARE_OPS, QUICK_BARE_OPS)
    send, rate = {'call': (floor.call, 1e9),
                  'cast': (floor.cast, REPORT_RATE)}[kind]
    cpu, ops = _phase(options, {'server': floor.meter},
                      lambda: _paced(send, count, rate),
                      None if idle is None else {'server': idle})
    return _figures(cpu, ops)


def _database_meter(kind, dep, engines):
    """The database's meter (None on SQLite: it runs in the workers)."""
    if kind == 'mariadb':
        return cost_cpu.Meter(cost_cpu.processes_named(
            {'mariadbd', 'mysqld'}))
    if kind != 'postgresql':
        return None
    admin = sa.create_engine(cluster.ADMIN_URLS['postgresql'])
    engines.append(admin)
    name = sa.engine.make_url(dep.values['database']['connection']).database
    return cost_cpu.Meter(cost_cpu.postgres_backends(admin, name))


def _reports(options, dep, server, meters):
    count = options.count(REPORTS, QUICK_REPORTS)
    seconds = count / REPORT_RATE
    with conductors.ProcessGroup(churn._tracker_main, [(
            dep.client(server), dep.hosts, 0, REPORT_RATE,
            seconds)]) as trackers:
        trackers.wait_ready()

        def send():
            trackers.go()
            return sum(r['sent'] for r in trackers.results(seconds + 120))
        cpu, sent = _phase(options, meters, send)
    absorbed = churn._absorbed(dep.db)
    return _figures(cpu, absorbed, sent=sent)


def _placements(options, dep, server, meters, floor):
    """Placements in rounds, each right after bare calls on the floor
    (module docstring), pooled (``pool_rounds``)."""
    rounds = options.pick(ROUNDS, QUICK_ROUNDS)
    count = options.count(PLACEMENTS, QUICK_PLACEMENTS) // rounds
    calls = options.count(BARE_OPS, QUICK_BARE_OPS) // rounds
    mix = workload.RequestMix(options.seed)
    client = dep.client(server)
    idle = cost_cpu.Phase(dict(meters, floor=floor.meter)).idle(
        options.pick(IDLE_S, QUICK_IDLE_S))
    floor_idle = idle.pop('floor')
    measured = []
    for _ in range(rounds):
        bare_calls = floor_of(options, floor, 'call', calls, floor_idle)
        load = conductors.Load(
            client=client, threads=1, duration=3600.0,
            requests=[(f, 1, z) for f, z in
                      (mix.next() for _ in range(count))],
            max_requests=count)
        cpu, results = _phase(options, meters,
                              lambda: conductors.run(load), idle)
        measured.append((bare_calls, _figures(
            cpu, len(results.samples), placed=results.placed(),
            errors=len(results.errors()))))
    return pool_rounds(measured)


def pool_rounds(rounds):
    """One operation's figures from ``[(floor figures, figures)]`` of
    its rounds: CPU summed over operations, the floor's likewise
    (``floor_ms``), counts and seconds summed, and each round's own
    ratio (``round_ratios``)."""
    def total(figures, key):
        value = figures[key]
        return None if value is None else value * figures['ops']

    def pooled(pairs, key):
        parts = [total(figures, key) for figures in pairs]
        ops = sum(figures['ops'] for figures in pairs)
        if None in parts or not ops:
            return None
        return round(sum(parts) / ops, 3)

    floors = [f for f, _ in rounds]
    ops = [o for _, o in rounds]
    out = {key: sum(o[key] for o in ops)
           for key in ('ops', 'placed', 'errors')}
    out.update(elapsed_s=round(sum(o['elapsed_s'] for o in ops), 1),
               drain_s=round(sum(o['drain_s'] for o in ops), 1),
               idle_cores=ops[0]['idle_cores'],
               server_ms=pooled(ops, 'server_ms'),
               database_ms=pooled(ops, 'database_ms'),
               floor_ms=pooled(floors, 'server_ms'),
               round_ratios=[_ratio(o['server_ms'], f['server_ms'])
                             for f, o in rounds])
    return out


def layout(options, hosts, extra, floor):
    """Reports, then placements, on a fresh cluster and server, each
    right after the floor it rides on (``floor_ms``)."""
    engines = []
    try:
        with Deployment(options, hosts, used=USED, label='cost') as dep:
            database = _database_meter(options.db, dep, engines)
            with dep.server(2, extra) as server:
                meters = {'server': cost_cpu.Meter(
                    cost_cpu.process_tree(server.process.pid))}
                if database is not None:
                    meters['database'] = database
                casts = floor_of(options, floor, 'cast')
                measured = {'report': dict(
                    _reports(options, dep, server, meters),
                    floor_ms=casts['server_ms'])}
                measured['placement'] = _placements(options, dep, server,
                                                    meters, floor)
                return measured
    finally:
        for engine in engines:
            engine.dispose()


def _ratio(server_ms, floor_ms):
    """An operation's CPU as a multiple of its floor's (None if either
    is unknown)."""
    if server_ms is None or not floor_ms:
        return None
    return round(server_ms / floor_ms, 2)


def judge(figures, floor_ms, ratio_limit, db_limit):
    """Add the ratio to the floor and the verdicts to ``figures``."""
    server_ms, db_ms = figures.get('server_ms'), figures.get('database_ms')
    figures['ratio'] = _ratio(server_ms, floor_ms)
    figures['ratio_met'] = (None if figures['ratio'] is None
                            else figures['ratio'] <= ratio_limit)
    figures['database_met'] = None if db_ms is None else db_ms <= db_limit
    return figures


def run(options):
    hosts = options.size(HOSTS, QUICK_HOSTS)
    result = {'scenario': NAME, 'hosts': hosts, 'database': options.db,
              'workers': 2, 'report_rate': REPORT_RATE, 'layouts': {}}
    with echo_floor() as floor:
        result['bare'] = bare(options, floor)
        for key, name, extra in LAYOUTS:
            measured = layout(options, hosts, extra, floor)
            for op, (_, kind, ratio, db_ms) in OPERATIONS.items():
                judge(measured[op], measured[op].get('floor_ms') or
                      result['bare'][kind]['server_ms'], ratio, db_ms)
            result['layouts'][key] = dict(measured, name=name)
    return result


_VERDICT = {True: 'met', False: 'missed', None: '-'}


def _rows(result):
    bare_rows = result['bare']
    rows = [['bare oslo.messaging', '%s (echo)' % kind,
             bare_rows[kind]['ops'], bare_rows[kind]['server_ms'], None,
             None, None, '', ''] for kind in ('call', 'cast')]
    for key, _, _ in LAYOUTS:
        measured = result['layouts'].get(key)
        if measured is None:
            continue
        for op, (label, floor, ratio, db_ms) in OPERATIONS.items():
            f = measured[op]
            rows.append([
                measured['name'], label, f['ops'], f['server_ms'],
                f['database_ms'],
                f.get('floor_ms') or bare_rows[floor]['server_ms'],
                f['ratio'], '<= %gx, db <= %g ms' % (ratio, db_ms),
                'ratio %s, db %s' % (_VERDICT[f['ratio_met']],
                                     _VERDICT[f['database_met']])])
    return rows


def _spread(ratios):
    if not ratios:
        return '-'
    return ' / '.join('-' if r is None else '%.2fx' % r for r in ratios)


def render(result):
    text = report.table(
        ['layout', 'per operation', 'ops', 'server CPU ms',
         'database CPU ms', 'floor ms', 'ratio', 'target',
         'verdict'], [[float('nan') if v is None else v for v in row]
                      for row in _rows(result)])
    notes = ['%d hosts, %s, 2 workers; reports at %g/s; each ratio is to '
             'the floor measured beside its phase (floor ms: casts right '
             'before the reports, calls before each round of placements, '
             'pooled); the bare rows: the floor at the start of the run' % (
                 result['hosts'], result['database'],
                 result['report_rate'])]
    for key, _, _ in LAYOUTS:
        measured = result['layouts'].get(key)
        if measured is not None:
            placement = measured['placement']
            notes.append('%s: %d reports sent, %d absorbed; %d placed, '
                         '%d errors; placement / call by round: %s' % (
                             measured['name'], measured['report']['sent'],
                             measured['report']['ops'],
                             placement['placed'], placement['errors'],
                             _spread(placement.get('round_ratios'))))
    return text + '\n' + '\n'.join(notes)


def draw(pyplot, result):
    figure, axis = pyplot.subplots(figsize=(6, 4))
    labels, server, database = [], [], []
    for key, name, _ in LAYOUTS:
        for op in OPERATIONS:
            f = result['layouts'][key][op]
            labels.append('%s\n%s' % (op, name))
            server.append(f['server_ms'] or 0)
            database.append(f['database_ms'] or 0)
    axis.bar(labels, server, label='server')
    axis.bar(labels, database, bottom=server, label='database')
    for kind in ('call', 'cast'):
        axis.axhline(result['bare'][kind]['server_ms'], linestyle='--',
                     label='bare %s (at the start)' % kind)
    axis.set_ylabel('CPU ms per operation')
    axis.legend(fontsize=7)
    return figure
