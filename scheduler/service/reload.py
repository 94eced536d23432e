"""SIGHUP in the parent: the new configuration, checked before any worker
is touched, then applied.

``prepare(conf)`` reads the configuration files of ``conf`` into a fresh
``ConfigOpts`` and checks it as start-up does
(``startup_checks.check_configuration``: option values, transport URL,
filter and weigher names and multipliers, policy file). On a problem it
logs one line, ``Not reloading: <why>``, leaves ``conf`` alone and returns
False: the workers keep serving with what they have. Otherwise it reloads
``conf`` itself, sets the parent's logging up again (``debug``, log
levels) and returns True; the supervisor then replaces the workers one at
a time (``scheduler.service.supervisor``), each new one forked with the
new values.

``[DEFAULT] workers`` and ``report_workers`` are the parent's process
layout: a change of either is logged and takes effect at the next start.
"""

from oslo_config import cfg
from oslo_log import log as logging

from scheduler import conf as sched_conf
from scheduler.service import startup_checks

LOG = logging.getLogger(__name__)

#: options read once, when the parent forks its workers
FIXED = ('workers', 'report_workers')


def problem(conf):
    """Why the files of ``conf``, read afresh, cannot be used (one line),
    or None."""
    fresh = sched_conf.new_config()
    logging.register_options(fresh)
    argv = []
    for path in conf.config_file or ():
        argv += ['--config-file', path]
    for path in conf.config_dir or ():
        argv += ['--config-dir', path]
    try:
        fresh(argv, project='scheduler', default_config_files=[],
              default_config_dirs=[])
        return startup_checks.configuration_problem(fresh)
    except cfg.Error as exc:
        return str(exc).splitlines()[0]
    except Exception as exc:  # a plugin that fails to import, for one
        return '%s: %s' % (type(exc).__name__, str(exc).splitlines()[0])


def prepare(conf):
    """Check, then apply, the files of ``conf`` (module docstring); True
    when the workers are to be replaced."""
    why = problem(conf)
    if why:
        LOG.error('Not reloading: %s; the workers keep serving with the '
                  'previous configuration', why)
        return False
    fixed = {name: conf[name] for name in FIXED}
    if not conf.reload_config_files():
        LOG.error('Not reloading: the configuration files do not parse; '
                  'the workers keep serving with the previous '
                  'configuration')
        return False
    for name, value in fixed.items():
        if conf[name] != value:
            LOG.warning('[DEFAULT] %s = %s takes effect when '
                        'scheduler-server restarts; %s until then',
                        name, conf[name], value)
            conf.set_override(name, value)
    logging.setup(conf, 'scheduler')
    LOG.info('Configuration reloaded; replacing the workers one at a time')
    return True
