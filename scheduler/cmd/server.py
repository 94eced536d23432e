"""``scheduler-server``: the scheduler daemon.

    scheduler-server --config-file /etc/scheduler/scheduler.conf

Exits with status 2 and one clear line when the configuration, the
database or the message broker is not usable at start-up.
"""

import sys

from oslo_config import cfg
from oslo_log import log as logging

from scheduler import conf as sched_conf
from scheduler import exception
from scheduler.driver import plugins
from scheduler.rpc import policy
from scheduler.service import launcher
from scheduler import version

LOG = logging.getLogger(__name__)


def main(argv=None):
    conf = sched_conf.new_config()
    logging.register_options(conf)
    try:
        conf(sys.argv[1:] if argv is None else argv, project='scheduler',
             prog='scheduler-server', version=version.release())
        # every value, before logging (which reads some) and any fork
        launcher.check_config(conf)
    except (cfg.Error, exception.SchedulerException) as exc:
        print('scheduler-server: %s' % str(exc).splitlines()[0],
              file=sys.stderr)
        return 2
    logging.setup(conf, 'scheduler')
    try:
        # fail fast on a bad pipeline, before any worker starts
        plugins.load_filters(conf)
        plugins.load_weighers(conf)
        policy.check_policy_file(conf)
        launcher.check_database(conf)
        launcher.check_broker(conf)
    except exception.SchedulerException as exc:
        LOG.error('%s', exc)
        print('scheduler-server: %s' % exc, file=sys.stderr)
        return 2
    return launcher.Launcher(conf).run()


if __name__ == '__main__':
    sys.exit(main())
