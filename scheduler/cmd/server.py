"""``scheduler-server``: the scheduler daemon.

    scheduler-server --config-file /etc/scheduler/scheduler.conf

Exits with one clear line when it cannot start: status 2 when the
configuration, the database or the message broker is not usable as
configured (no restart helps: ``RestartPreventExitStatus=2`` in the
systemd unit), status 75 (``EX_TEMPFAIL``) when the database or the
broker stayed unreachable through ``[DEFAULT] startup_retries`` (an
outage: a supervisor restarts it later).
"""

import os
import sys

from oslo_config import cfg
from oslo_log import log as logging

from scheduler import conf as sched_conf
from scheduler import exception
from scheduler.service import launcher
from scheduler.service import startup_checks
from scheduler import version

LOG = logging.getLogger(__name__)

#: exit statuses of a start-up that failed (module docstring)
MISCONFIGURED = 2
OUTAGE = os.EX_TEMPFAIL


def main(argv=None):
    conf = sched_conf.new_config()
    logging.register_options(conf)
    try:
        conf(sys.argv[1:] if argv is None else argv, project='scheduler',
             prog='scheduler-server', version=version.release())
        # every value, before logging (which reads some) and any fork
        startup_checks.check_config(conf)
    except (cfg.Error, exception.SchedulerException) as exc:
        print('scheduler-server: %s' % str(exc).splitlines()[0],
              file=sys.stderr)
        return MISCONFIGURED
    logging.setup(conf, 'scheduler')
    try:
        # fail fast on a bad pipeline or policy, before any worker starts
        startup_checks.check_configuration(conf)
        startup_checks.check_database(conf)
        startup_checks.check_broker(conf)
    except exception.SchedulerException as exc:
        line = str(exc).splitlines()[0]
        status = OUTAGE if isinstance(
            exc, exception.ServiceUnavailable) else MISCONFIGURED
    else:
        return launcher.Launcher(conf).run()
    # outside the handler: oslo.log would repeat the exception after it
    LOG.error('%s', line)
    print('scheduler-server: %s' % line, file=sys.stderr)
    return status


if __name__ == '__main__':
    sys.exit(main())
