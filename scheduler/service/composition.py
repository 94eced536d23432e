"""The composition root of a worker: its collaborators, built once.

``build(conf, db=None)`` creates, in dependency order, everything a
``SchedulerManager`` serves with, and returns them as ``Parts``:

* ``db``: the connection pool (``scheduler.db.api.Database``);
* ``recorder``: the decision and report metrics
  (``scheduler.driver.decision_recorder.DecisionRecorder``), shared by
  the driver and the report writer;
* ``report_writer``: the one path of tracker reports to the database;
* ``claim_sweeper``: releases claims unconfirmed after the grace period
  (its thread is started here);
* ``host_cache``: the in-memory host table and its refresh (its poller
  thread is started here when ``[scheduler] refresh_interval`` > 0);
* ``notifier``: versioned notifications of decisions;
* ``driver``: the scheduling driver named by ``[scheduler] driver``
  (a ``scheduler.drivers`` entry point: ``filter_scheduler`` or
  ``solver``), with the configured plugins; every driver takes the same
  arguments and answers ``select_destinations`` the same way;
* ``request_checks``: the plugins' own checks of a request, which the RPC
  edge runs before planning (``scheduler.driver.plugins.RequestChecks``).

Nothing else constructs these: the manager takes them as they are, and a
test or a tool can build its own ``Parts`` to pass in.
``build_manager(conf, db=None)`` is the endpoint served with its parts.
"""

import dataclasses

from stevedore import driver as stevedore_driver

from scheduler import manager
from scheduler.service import claim_sweeper
from scheduler.driver import decision_recorder
from scheduler.service import notifications
from scheduler.driver import plugins
from scheduler.service.report_writer import ReportWriter
from scheduler.model import resource_classes as rcs
from scheduler.conf import scheduler as scheduler_conf
from scheduler.db import api as db_api
from scheduler.host_state import HostStateCache
from scheduler.weighers import image_properties as image_properties_weigher


@dataclasses.dataclass
class Parts:
    db: object
    ratio_defaults: dict
    recorder: object
    report_writer: object
    host_cache: object
    notifier: object
    driver: object
    claim_sweeper: object = None
    request_checks: object = None


def ratio_defaults(conf):
    return {rcs.VCPU: conf.scheduler.default_cpu_allocation_ratio,
            rcs.MEMORY_MB: conf.scheduler.default_ram_allocation_ratio,
            rcs.DISK_GB: conf.scheduler.default_disk_allocation_ratio}


def build(conf, db=None):
    """A worker's collaborators (module docstring)."""
    db = db or db_api.Database(conf)
    defaults = ratio_defaults(conf)
    recorder = decision_recorder.DecisionRecorder()
    writer = ReportWriter(
        db, defaults,
        # a heartbeat-only report is written this often (ComputeFilter)
        fresh_for=conf.scheduler.service_down_time / 2.0,
        recorder=recorder)
    cache = HostStateCache(
        db, refresh_interval=conf.scheduler.refresh_interval,
        default_zone=conf.scheduler.default_availability_zone,
        image_properties=counted_image_properties(conf))
    cache.start()
    filters = plugins.load_filters(conf)
    weighers = plugins.load_weighers(conf)
    driver = load_driver(conf, db, cache, filters, weighers, recorder)
    sweeper = claim_sweeper.ClaimSweeper(
        db, conf.scheduler.unconfirmed_claim_grace_period)
    sweeper.start()
    return Parts(db=db, ratio_defaults=defaults, recorder=recorder,
                 claim_sweeper=sweeper,
                 report_writer=writer, host_cache=cache,
                 notifier=notifications.SelectDestinationsNotifier(
                     conf, conf.host),
                 driver=driver,
                 request_checks=plugins.RequestChecks(filters + weighers))


def load_driver(conf, db, cache, filters, weighers, recorder):
    """The driver ``[scheduler] driver`` names (its option refuses a name
    no driver has, listing those installed)."""
    return stevedore_driver.DriverManager(
        scheduler_conf.DRIVER_NAMESPACE, conf.scheduler.driver,
        invoke_on_load=True,
        invoke_args=(conf, db, cache, filters, weighers),
        invoke_kwds={'recorder': recorder}).driver


def build_manager(conf, db=None):
    """A ``SchedulerManager`` with its parts, built from ``conf`` (and
    ``db``, a ``Database``, when given)."""
    return manager.SchedulerManager(conf, build(conf, db))


def counted_image_properties(conf):
    """The image properties workers must count per host: those of
    ImagePropertiesWeigher's setting, if that weigher is enabled."""
    if 'ImagePropertiesWeigher' not in conf.filter_scheduler.enabled_weighers:
        return ()
    return tuple(image_properties_weigher.parse_setting(
        conf.filter_scheduler.image_props_weight_setting))
