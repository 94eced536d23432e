"""``scheduler-manage``: operator commands on the scheduler database.

    scheduler-manage [--config-file F] [--format table|json] COMMAND

Commands: ``db sync``, ``db version``, ``db purge [--age-days N]``,
``host list``, ``host show NAME``, ``allocation list [--host H]``,
``allocation delete CONSUMER``, ``aggregate list``, ``aggregate show
NAME``, ``service list``; ``--version`` prints the release.
Exit status: 0 done, 1 not found, 2 usage or connection error.

Every command but ``db sync`` and ``db version`` first checks that the
database has the scheduler schema at the newest revision and otherwise
says to run ``db sync`` (on any backend), and never creates a SQLite file
that does not exist yet.
"""

import argparse
import sys

from oslo_config import cfg
from oslo_db import exception as db_exc

from scheduler.db import claims
from scheduler import conf as sched_conf
from scheduler import exception
from scheduler import version
from scheduler.cmd import manage_extra
from scheduler.cmd import output
from scheduler.db import api as db_api
from scheduler.db import migration
from scheduler.db import provider_reads


def _parser():
    parser = argparse.ArgumentParser(
        prog='scheduler-manage',
        description='Operator commands on the scheduler database.')
    parser.add_argument('--config-file', action='append', default=[],
                        help='configuration file (repeatable)')
    parser.add_argument('--format', choices=output.FORMATS,
                        default='table', help='output format (also '
                        'accepted after the command)')
    parser.add_argument('--version', action='version',
                        version='%(prog)s ' + version.release())
    groups = parser.add_subparsers(dest='group', required=True)
    db = groups.add_parser('db', help='schema migrations').add_subparsers(
        dest='action', required=True)
    output.command(db, 'sync', help='create or upgrade the schema')
    output.command(db, 'version', help='show the schema revision')
    purge = output.command(db, 'purge', help='delete rows nothing needs')
    purge.add_argument('--age-days', type=float, default=30,
                       help='records of workers down for longer than '
                       'this many days, and tombstones of aggregates and '
                       'instances deleted longer ago (default 30)')
    host = groups.add_parser('host', help='hosts (providers)') \
        .add_subparsers(dest='action', required=True)
    output.command(host, 'list', help='list hosts with usage')
    show = output.command(host, 'show',
                          help='inventory, usage and claims')
    show.add_argument('name', help='host or node name')
    alloc = groups.add_parser('allocation', help='claims') \
        .add_subparsers(dest='action', required=True)
    alloc_list = output.command(alloc, 'list', help='list claims')
    alloc_list.add_argument('--host', help='only claims on this host')
    alloc_delete = output.command(alloc, 'delete',
                                  help='release a consumer')
    alloc_delete.add_argument('consumer', help='consumer (instance) UUID')
    manage_extra.add_parsers(groups)
    return parser


def _usage(inv):
    used = max(inv['reported_used'], inv['claimed'])
    return '%d/%d' % (used, inv['capacity'])


def db_sync(database, args):
    migration.db_sync(database)
    print('Database at revision %s' % migration.db_version(database))


def db_version(database, args):
    version = migration.db_version(database)
    if args.format == 'json':
        print(output.to_json({'version': version,
                              'head': migration.head_revision()}))
    else:
        print(version or 'not initialized')


def host_list(database, args):
    hosts = provider_reads.list_providers(database)
    if args.format == 'json':
        print(output.to_json(hosts))
        return
    rows = []
    for h in hosts:
        inv = h['inventories']
        others = ', '.join('%s %s' % (rc, _usage(inv[rc]))
                           for rc in sorted(inv) if rc not in _COLUMNS)
        rows.append([h['host'], h['nodename'], h.get('kind') or 'compute',
                     h['availability_zone'],
                     'yes' if h['disabled'] else 'no'] +
                    [_usage(inv[rc]) if rc in inv else '-'
                     for rc in _COLUMNS] +
                    [others or '-', h['reported_at']])
    print(output.table(['host', 'node', 'kind', 'zone', 'disabled'] +
                       list(_COLUMNS) + ['other', 'reported'], rows))


# resource classes with a column of their own in ``host list``
_COLUMNS = ('VCPU', 'MEMORY_MB', 'DISK_GB')


def host_show(database, args):
    found = provider_reads.find_provider(database, args.name)
    if found is None:
        print('No host named %s' % args.name, file=sys.stderr)
        return 1
    host = provider_reads.load_changes(database,
                                       provider_ids=[found['id']])[0]
    allocations = claims.list_allocations(database, host=host['host'])
    allocations = [a for a in allocations
                   if a['provider_id'] == host['id']]
    if args.format == 'json':
        host['allocations'] = allocations
        print(output.to_json(host))
        return
    print(output.table(['field', 'value'], [
        [k, host[k]] for k in ('host', 'nodename', 'uuid', 'kind',
                               'availability_zone', 'disabled',
                               'generation', 'change_seq', 'reported_at')]))
    print(output.table(
        ['resource', 'total', 'reserved', 'ratio', 'capacity', 'reported',
         'claimed', 'free'],
        [[rc, i['total'], i['reserved'], i['allocation_ratio'],
          i['capacity'], i['reported_used'], i['claimed'],
          i['capacity'] - max(i['reported_used'], i['claimed'])]
         for rc, i in sorted(host['inventories'].items())]))
    _print_allocations(allocations)


def _print_allocations(allocations):
    print(output.table(
        ['consumer', 'host', 'node', 'resource', 'amount', 'created',
         'confirmed'],
        [[a['consumer_uuid'], a['host'], a['nodename'], a['resource_class'],
          a['amount'], a['created_at'], a['confirmed_at']]
         for a in allocations]))


def allocation_list(database, args):
    allocations = claims.list_allocations(database, host=args.host)
    if args.format == 'json':
        print(output.to_json(allocations))
    else:
        _print_allocations(allocations)


def allocation_delete(database, args):
    released = claims.delete_allocations(database, args.consumer)
    if args.format == 'json':
        print(output.to_json({'consumer': args.consumer,
                              'released': released}))
    elif released:
        print('Released %d allocation rows of %s' % (released,
                                                      args.consumer))
    else:
        print('No allocations for %s' % args.consumer, file=sys.stderr)
        return 1


_COMMANDS = {
    ('db', 'sync'): db_sync, ('db', 'version'): db_version,
    ('host', 'list'): host_list, ('host', 'show'): host_show,
    ('allocation', 'list'): allocation_list,
    ('allocation', 'delete'): allocation_delete,
    **manage_extra.COMMANDS,
}
_NO_SCHEMA_NEEDED = {('db', 'sync'), ('db', 'version')}


def _fail(problem):
    print('scheduler-manage: %s' % problem, file=sys.stderr)
    return 2


def _configure(args):
    """The parsed configuration, or one line saying why there is none."""
    conf = sched_conf.new_config()
    conf_args = []
    for path in args.config_file:
        conf_args += ['--config-file', path]
    try:
        conf(conf_args, project='scheduler', prog='scheduler-manage',
             default_config_files=[] if args.config_file else None)
    except cfg.Error as exc:
        return None, str(exc).splitlines()[0]
    return conf, None


def main(argv=None):
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    output.quiet_libraries()
    conf, problem = _configure(args)
    command = (args.group, args.action)
    if not problem and command not in _NO_SCHEMA_NEEDED:
        problem = migration.missing_sqlite_file(conf)
    if problem:
        return _fail(problem)
    try:
        database = db_api.Database(conf, max_retries=0)
    except output.DATABASE_ERRORS as exc:
        return _fail(output.database_error(conf, exc))
    try:
        problem = (None if command in _NO_SCHEMA_NEEDED
                   else manage_extra.schema_problem(database))
        if problem:
            return _fail(problem)
        args.conf = conf
        return _COMMANDS[command](database, args) or 0
    except exception.SchedulerException as exc:
        return _fail(exc)
    except db_exc.DBNonExistentTable:
        return _fail('the database has no scheduler schema; run '
                     '"scheduler-manage db sync" first')
    except output.DATABASE_ERRORS as exc:
        # the engine connects lazily: an unreachable database shows here
        return _fail(output.database_error(conf, exc))
    finally:
        database.dispose()

if __name__ == '__main__':
    sys.exit(main())
