"""``scheduler-manage`` commands for upgrades and pushed data, and the
checks every command runs before it touches the database.

``service list`` shows the service records (``scheduler.db.services``),
``aggregate list`` / ``aggregate show NAME_OR_UUID`` the aggregates
pushed with ``update_aggregates``, ``db purge`` deletes the records of
workers long gone and the tombstones of aggregates and instances deleted
as long ago (``scheduler.db.send_order.purge_tombstones``).
``schema_problem`` returns the "run db sync" hint when the schema is
missing or behind, whatever the backend;
``migration.missing_sqlite_file`` keeps a command from creating an empty SQLite
file by merely opening it.
"""

import datetime
import sys

from scheduler.cmd import output
from scheduler.db import aggregates as db_aggregates
from scheduler.db import migration
from scheduler.db import send_order
from scheduler.db import services as db_services


def add_parsers(groups):
    service = groups.add_parser('service', help='scheduler workers') \
        .add_subparsers(dest='action', required=True)
    output.command(service, 'list',
                   help='workers, their versions, up or down')
    aggregate = groups.add_parser('aggregate', help='pushed aggregates') \
        .add_subparsers(dest='action', required=True)
    output.command(aggregate, 'list',
                   help='aggregates with hosts and metadata')
    show = output.command(aggregate, 'show', help='one aggregate')
    show.add_argument('name', help='aggregate name or UUID')


def schema_problem(database):
    """Why the schema is not usable by this release, or None (at the
    newest revision this release knows, or at a later release's)."""
    current = migration.db_version(database)
    head = migration.head_revision()
    if current is None:
        return ('the database has no scheduler schema; run '
                '"scheduler-manage db sync" first')
    if current != head and migration.is_known_revision(current):
        return ('the database schema is at revision %s, this release '
                'needs %s; run "scheduler-manage db sync" first' % (
                    current, head))
    return None


def _down_for(service, now):
    return '-' if service['up'] else str(
        now - service['heartbeat_at']).split('.')[0]


def service_list(database, args):
    now = db_services.now()
    services = db_services.list_services(database,
                                         args.conf.worker_down_time, now)
    if args.format == 'json':
        print(output.to_json(services))
        return
    print(output.table(
        ['host', 'pid', 'worker', 'release', 'rpc', 'state', 'down for',
         'last heartbeat'],
        [[s['host'], s['pid'], s['worker'], s['release'], s['rpc_version'],
          'up' if s['up'] else 'DOWN', _down_for(s, now), s['heartbeat_at']]
         for s in services]))
    releases = sorted({s['release'] for s in services if s['up']})
    if len(releases) > 1:
        print('Live workers run %d releases: %s' % (len(releases),
                                                    ', '.join(releases)))


def _live_aggregates(database):
    return sorted((a for a in db_aggregates.load_aggregate_changes(database)
                   if not a['deleted']),
                  key=lambda a: (a['name'] or '', a['uuid']))


def aggregate_list(database, args):
    aggregates = _live_aggregates(database)
    if args.format == 'json':
        print(output.to_json(aggregates))
        return
    print(output.table(
        ['uuid', 'name', 'hosts', 'metadata'],
        [[a['uuid'], a['name'], ', '.join(a['hosts']),
          ', '.join('%s=%s' % kv for kv in sorted(a['metadata'].items()))]
         for a in aggregates]))


def aggregate_show(database, args):
    found = [a for a in _live_aggregates(database)
             if args.name in (a['uuid'], a['name'])]
    if not found:
        print('No aggregate named %s' % args.name, file=sys.stderr)
        return 1
    if args.format == 'json':
        print(output.to_json(found if len(found) > 1 else found[0]))
        return
    for agg in found:
        print(output.table(['field', 'value'], [
            ['uuid', agg['uuid']], ['name', agg['name']],
            ['hosts', ', '.join(agg['hosts'])]] + [
            ['metadata: %s' % k, v]
            for k, v in sorted(agg['metadata'].items())]))


def db_purge(database, args):
    age = datetime.timedelta(days=args.age_days)
    purged = db_services.purge_services(database, age)
    with database.writer() as session:
        tombstones = send_order.purge_tombstones(
            session, db_services.now() - age)
    if args.format == 'json':
        print(output.to_json(dict(service_records=purged, **tombstones)))
    else:
        print('Purged %d service records of workers down for more than '
              '%g days' % (purged, args.age_days))
        print('Purged %d deleted aggregates and %d forgotten instances '
              'deleted more than %g days ago' % (
                  tombstones['aggregates'], tombstones['instances'],
                  args.age_days))


COMMANDS = {
    ('service', 'list'): service_list,
    ('aggregate', 'list'): aggregate_list,
    ('aggregate', 'show'): aggregate_show,
    ('db', 'purge'): db_purge,
}
