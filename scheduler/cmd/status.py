"""``scheduler-status upgrade check``: is this deployment ready for (or
done with) an upgrade? (oslo.upgradecheck)

    scheduler-status --config-file /etc/scheduler/scheduler.conf \
        upgrade check [--json]

Checks, each Success, Warning or Failure:

* **Configuration**: Failure when ``scheduler-server`` would refuse to
  start with it: an invalid option value, a transport URL naming no
  installed driver (``rabit://``), an unknown or duplicate filter or
  weigher, a policy file that does not load (the server's own start-up
  check, ``scheduler.service.startup_checks.configuration_problem``).
* **Database schema**: Failure when the schema is missing or behind this
  release's newest migration (run ``scheduler-manage db sync``); Warning
  when it is at a revision this release does not know (a later release
  migrated it: fine while that release's rollout is under way), or, on
  PostgreSQL, when this release's claim function is missing (claims work,
  in six round trips instead of one, until ``db sync`` creates it).
* **Worker releases**: Warning when the live workers (service records
  younger than ``[DEFAULT] worker_down_time``) run more than one release,
  or when no live worker keeps a record.
* **Deprecated options**: Warning for every option the configuration
  files set that is deprecated for removal or set under a deprecated name.

Exit status is the worst result: 0 success, 1 warning, 2 failure, 255 when
a check itself broke (the oslo.upgradecheck convention). A configuration
file that cannot be read, or a database that cannot be reached, is one
line on stderr and status 2 (a failure), with no table.
"""

import sys

from oslo_config import cfg
from oslo_upgradecheck import upgradecheck

from scheduler import conf as sched_conf
from scheduler import version
from scheduler.cmd import manage_extra
from scheduler.cmd import output
from scheduler.conf import opts
from scheduler.db import api as db_api
from scheduler.db import claim_routines
from scheduler.db import migration
from scheduler.db import services as db_services
from scheduler.service import startup_checks

Code = upgradecheck.Code
Result = upgradecheck.Result


class _Unreachable(Exception):
    """The database cannot be used: no check can say anything."""


class SchedulerChecks(upgradecheck.UpgradeCommands):
    """The checks, on a parsed ``ConfigOpts``."""

    display_title = 'scheduler %s upgrade check' % version.release()

    def __init__(self, conf):
        self.conf = conf

    def check(self):
        """The table (or JSON) of every check, or one line on stderr when
        the database cannot be reached; the worst code either way."""
        try:
            return super().check()
        except _Unreachable as exc:
            print('scheduler-status: %s' % exc, file=sys.stderr)
            return Code.FAILURE

    def _query(self, fn):
        """``fn(database)``; ``_Unreachable`` when the database is not."""
        try:
            database = db_api.Database(self.conf, max_retries=0)
        except output.DATABASE_ERRORS as exc:
            raise _Unreachable(output.database_error(self.conf, exc))
        try:
            return fn(database)
        except output.DATABASE_ERRORS as exc:
            raise _Unreachable(output.database_error(self.conf, exc))
        finally:
            database.dispose()

    def _check_configuration(self):
        problem = startup_checks.configuration_problem(self.conf)
        if problem:
            return Result(Code.FAILURE, 'scheduler-server would refuse '
                          'to start: %s' % problem)
        return Result(Code.SUCCESS)

    def _check_schema(self):
        missing = migration.missing_sqlite_file(self.conf)
        if missing:
            return Result(Code.FAILURE, missing[0].upper() + missing[1:])
        current = self._query(migration.db_version)
        head = migration.head_revision()
        if current is None:
            return Result(Code.FAILURE, 'The database has no scheduler '
                          'schema: run "scheduler-manage db sync".')
        if current == head:
            missing = self._query(_missing_claim_routine)
            if missing:
                return Result(Code.WARNING, 'Schema at %s, but the claim '
                              'routine %s is missing: claims take the '
                              'transaction path (six or seven round '
                              'trips) until "scheduler-manage db sync" '
                              'creates it.' % (head, missing))
            return Result(Code.SUCCESS, 'Schema at %s.' % head)
        if migration.is_known_revision(current):
            return Result(Code.FAILURE, 'Pending migrations: the schema is '
                          'at %s, this release needs %s. Run "scheduler-'
                          'manage db sync" before starting its workers.'
                          % (current, head))
        return Result(Code.WARNING, 'The schema is at %s, which this '
                      'release does not know: a later release migrated it.'
                      % current)

    def _check_releases(self):
        if migration.missing_sqlite_file(self.conf):
            return Result(Code.WARNING, 'Not checked: no database.')
        # asked of a schema without the table, the query would fail and
        # oslo.db log its traceback beside the answer
        if self._query(manage_extra.schema_problem):
            return Result(Code.WARNING, 'Not checked: the database schema '
                          'is not current (run "scheduler-manage db '
                          'sync").')
        live = self._query(lambda database: db_services.list_services(
            database, self.conf.worker_down_time, live_only=True))
        releases = sorted({s['release'] for s in live})
        if not live:
            return Result(Code.WARNING, 'No live worker keeps a service '
                          'record (none running, or all of release 0.1).')
        if len(releases) > 1:
            return Result(Code.WARNING, '%d live workers run %d releases '
                          '(%s): the rolling upgrade is not finished.' % (
                              len(live), len(releases),
                              ', '.join(releases)))
        return Result(Code.SUCCESS, '%d live workers, all on release %s '
                      '(workers of release 0.1 keep no record and are not '
                      'counted).' % (len(live), releases[0]))

    def _check_deprecated_options(self):
        found = deprecated_options_set(self.conf)
        if not found:
            return Result(Code.SUCCESS)
        return Result(Code.WARNING, 'Deprecated options set: %s.'
                      % '; '.join(found))

    _upgrade_checks = (
        ('Configuration', _check_configuration),
        ('Database schema', _check_schema),
        ('Worker releases', _check_releases),
        ('Deprecated options', _check_deprecated_options),
    )


def _missing_claim_routine(database):
    """The name of this release's claim routine if it is not there
    (``scheduler.db.claim_routines``); None if it is, or none applies."""
    if claim_routines.installed(database):
        return None
    return claim_routines.name(database)


def _file_values(conf):
    """{(section, name)} set in the configuration files read."""
    found = set()
    for path in conf.config_file or ():
        sections = {}
        cfg.ConfigParser(path, sections).parse()
        for section, values in sections.items():
            found.update((section, name) for name in values)
    return found


def _scheduler_options():
    """(group name, opt) of every option of the scheduler's own groups."""
    for group, options in opts.list_opts():
        name = getattr(group, 'name', group)
        for opt in options:
            yield name, opt


def deprecated_options_set(conf, options=None):
    """What the configuration files set that is deprecated, as text.
    ``options``: (group, opt) pairs to look at (default: ours)."""
    in_files = _file_values(conf)
    found = []
    for group, opt in options or _scheduler_options():
        if opt.deprecated_for_removal and (group, opt.dest) in in_files:
            found.append('[%s] %s is deprecated for removal%s' % (
                group, opt.dest, ': %s' % opt.deprecated_reason
                if opt.deprecated_reason else ''))
        for old in opt.deprecated_opts:
            old_group = old.group or group
            old_name = old.name or opt.dest
            if (old_group, old_name) in in_files:
                found.append('[%s] %s is now [%s] %s' % (
                    old_group, old_name, group, opt.dest))
    return sorted(found)


def main(argv=None):
    conf = sched_conf.new_config()
    checks = SchedulerChecks(conf)
    argv = sys.argv[1:] if argv is None else argv
    if argv == ['--version']:
        print('scheduler-status %s' % version.release())
        return 0
    output.quiet_libraries()
    try:
        return upgradecheck.main(conf, 'scheduler', checks, argv)
    except cfg.Error as exc:  # a file that is missing or does not parse
        print('scheduler-status: %s' % str(exc).splitlines()[0],
              file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
