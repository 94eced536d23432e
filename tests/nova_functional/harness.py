"""This scheduler as the scheduler service of nova's own functional tests.

``install()`` replaces one seam of nova's test harness,
``nova.test.TestCase.start_service`` for the name ``'scheduler'``: what
it starts is ``SchedulerService``, this scheduler deployed as
doc/source/nova-rpc-differences.rst tells a Nova operator to deploy it,
in the test's process:

* a ``scheduler-server`` worker (``scheduler.service.launcher.Worker``,
  the production class) with ``[nova] enabled`` on nova's exchange and
  topic, Placement write-back on, its own API on a topic of its own,
  a SQLite database of its own in the test's temporary directory; its
  transport is nova's (oslo.messaging's ``fake:/`` driver, whose queues
  every transport of the process shares);
* ``scheduler-placement-feed`` (``PlacementFeed``, the production
  class) reading nova's Placement fixture through keystoneauth1 (the
  fixture's wsgi-intercept answers), pushing through the scheduler's own
  client, in a thread of the test's process;
* nova's scheduler options mapped to this scheduler's
  (``nova_options``; what has no counterpart is logged as a finding).

One synchronisation stands in for time: nova-scheduler reads Placement
during each ``select_destinations``, this scheduler between decisions
(the feed's cycle, every ``[placement_feed] interval``). Before nova's
``select_destinations`` reaches the worker, the harness waits until the
casts nova sent before it (aggregates, instances) are stored, runs one
feed cycle, and waits until its reports are written and the worker's
host table has refreshed: the answer is the one the scheduler gives
once its feed has caught up with Placement. It changes no decision and
nothing else of the scheduler's path.

Nothing of nova's product code is patched; the seam is test wiring.
"""

import contextlib
import functools
from importlib import metadata as importlib_metadata
import os
import threading
import time

import fixtures
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from oslo_log import log as logging

from scheduler.client import SchedulerClient
from scheduler.cmd import placement_feed as feed_cmd
from scheduler import conf as sched_conf
from scheduler.db import api as db_api
from scheduler.db import migration
from scheduler.driver import plugins
from scheduler import exception
from scheduler.placement_feed import nova_hosts
from scheduler.nova import endpoint as nova_endpoint
from scheduler.service import launcher
from tests.nova_functional import nova_options
from tests import waiting

LOG = logging.getLogger(__name__)
#: the environment variable that chooses the scheduler: 'this' or 'nova'
CHOICE = 'SCHEDULER_NOVA_FUNCTIONAL'
#: this scheduler's own API, beside nova's 'scheduler' topic (the rabbit
#: driver names a topic's queue after the topic alone)
OWN_TOPIC = 'scheduler_v1'
CATCH_UP_TIMEOUT = 30.0
#: nova's casts to the scheduler (fanout), counted while they run
NOVA_CASTS = ('update_aggregates', 'delete_aggregate', 'update_instance_info',
              'delete_instance_info', 'sync_instance_info')
#: oslo.messaging's fake driver polls its queues this often
FAKE_POLL = 0.05


def install():
    """Make ``start_service('scheduler')`` start this scheduler."""
    from nova import test
    from nova.tests import fixtures as nova_fixtures
    from nova.tests.functional import fixtures as func_fixtures

    original = test.TestCase.start_service

    @functools.wraps(original)
    def start_service(self, name, host=None, cell_name=None, **kwargs):
        if name != 'scheduler':
            return original(self, name, host=host, cell_name=cell_name,
                            **kwargs)
        if self._service_fixture_count[name]:
            raise test.TestingException('Duplicate start_service(%s)!'
                                        % name)
        service = self.useFixture(SchedulerService(self)).service
        self._service_fixture_count[name] += 1

        def counted_stop(stop=service.stop):
            self._service_fixture_count[name] -= 1
            stop()
        service.stop = counted_stop
        return service

    test.TestCase.start_service = start_service
    _reload_on_flags(test.TestCase)
    _errors_as_nova_raises_them()
    _remember(func_fixtures.PlacementFixture, 'placement')
    _remember(nova_fixtures.OSAPIFixture, 'api')


def _errors_as_nova_raises_them():
    """oslo.messaging's ``fake:/`` driver hands a call's exception object
    itself to the caller: nova-scheduler in nova's tests raises nova's own
    ``NoValidHost``, which the conductor catches by class. This
    scheduler's answer is ``nova.exception.NoValidHost`` only by name on
    the wire (every real driver sends the class's module and name, and
    nova's client rebuilds it). The harness has the fake driver hand over
    what nova-scheduler would have raised in process: nova's exception of
    that name with the same arguments; any other error of this scheduler
    as a real driver would deliver it. Nova's own services' errors pass
    as they do in nova's runs."""
    from nova import exception as nova_exception
    from nova import rpc as nova_rpc
    from oslo_messaging._drivers import common
    from oslo_messaging._drivers import impl_fake

    original = impl_fake.FakeIncomingMessage.reply

    def as_nova_raises_it(error):
        cls = getattr(nova_exception, type(error).__name__, None)
        if type(error).__module__ == 'nova.exception' and cls is not None:
            return cls(**getattr(error, 'kwargs', {}))
        data = common.serialize_remote_exception(
            (type(error), error, None))
        return common.deserialize_remote_exception(
            data, nova_rpc.get_allowed_exmods())

    @functools.wraps(original)
    def reply(message, reply=None, failure=None):
        if failure and isinstance(failure[1], exception.SchedulerException):
            error = as_nova_raises_it(failure[1])
            failure = (type(error), error, None)
        return original(message, reply=reply, failure=failure)

    impl_fake.FakeIncomingMessage.reply = reply


def _remember(fixture_class, kind):
    """Record the fixture of ``kind`` each test sets up (not every test
    keeps a reference to its Placement or API fixture)."""
    original = fixture_class.setUp

    @functools.wraps(original)
    def set_up(fixture):
        original(fixture)
        _LATEST[kind] = fixture
        fixture.addCleanup(_LATEST.pop, kind, None)

    fixture_class.setUp = set_up


#: 'placement' -> nova's PlacementFixture, 'api' -> its OSAPIFixture
_LATEST = {}
#: the running test's SchedulerService
_RUNNING = [None]


def _reload_on_flags(test_class):
    """A test that changes nova's options after its scheduler started
    (``self.flags``) has them applied as an operator's reload would."""
    original = test_class.flags

    @functools.wraps(original)
    def flags(test, **kw):
        original(test, **kw)
        if _RUNNING[0] is not None:
            _RUNNING[0].reconfigure()

    test_class.flags = flags


def _latest(kind):
    fixture = _LATEST.get(kind)
    if fixture is None:
        raise RuntimeError('the test started a scheduler without nova\'s '
                           '%s fixture' % kind)
    return fixture


def nova_api_adapter():
    """Nova's API of the running test (its ``OSAPIFixture``), as an
    admin: the fixture's stand-in for Keystone reads the caller from
    these headers."""
    api = _LATEST.get('api')
    if api is None:
        return None
    return ks_adapter.Adapter(
        ks_session.Session(), service_type='compute',
        endpoint_override=api.base_url, additional_headers={
            'X-Auth-User': 'admin', 'X-Auth-Project-Id': 'admin',
            'X-Roles': 'admin,member,reader'})


def config_text(test, directory):
    """The scheduler.conf of the test's scheduler (module docstring)."""
    import nova.conf
    from nova import test as nova_test
    nova_conf = nova.conf.CONF
    options, findings = nova_options.scheduler_options(
        nova_conf, _names(plugins.FILTER_NAMESPACE), _multipliers())
    for finding in findings:
        LOG.warning('nova\'s options as this scheduler\'s: %s', finding)
    cell = test.cell_mappings[nova_test.CELL1_NAME].uuid
    sections = {
        'DEFAULT': {'transport_url': 'fake:/', 'host': 'scheduler-harness',
                    'control_exchange': 'scheduler'},
        'database': {'connection': 'sqlite:///%s' % os.path.join(
            directory, 'scheduler.sqlite')},
        'prometheus': {'port': 0},
        # every decision's line in the test's captured log
        'scheduler': dict(options['scheduler'], topic=OWN_TOPIC,
                          log_decisions=True),
        'filter_scheduler': options['filter_scheduler'],
        'nova': {'enabled': True, 'exchange': nova_conf.control_exchange,
                 'topic': 'scheduler', 'cell_uuid': cell,
                 'placement_write_back': True},
        'placement_feed': {'auth_type': 'admin_token',
                           'endpoint': _latest('placement').endpoint,
                           'token': 'admin', 'interval': 2.0,
                           'usage_sweep_interval': 0,
                           # the harness's own adapter (nova_api_adapter)
                           'resolve_compute_hosts': False,
                           'push_aggregates': False},
    }
    lines = []
    for section, values in sections.items():
        lines.append('[%s]' % section)
        for name, value in values.items():
            if value is None:
                continue          # unset in nova: this option's default
            if isinstance(value, (list, tuple)):
                value = ','.join(value)
            lines.append('%s = %s' % (name, value))
    return '\n'.join(lines) + '\n'


def _names(namespace):
    """The plugin names of ``namespace`` (entry points), in order."""
    return sorted({point.name for point in
                   importlib_metadata.entry_points(group=namespace)})


def _multipliers():
    """Each weigher's name -> its multiplier option (or None)."""
    return {point.name: point.load().multiplier_option for point in
            importlib_metadata.entry_points(group=plugins.WEIGHER_NAMESPACE)}


class SchedulerService(fixtures.Fixture):
    """The scheduler of one of nova's tests (module docstring); its
    ``service`` is what ``start_service`` returns."""

    def __init__(self, test):
        super().__init__()
        self.test = test
        self.worker = self.feed = None
        self._feed_lock = threading.Lock()
        self._stop = threading.Event()
        self.sent = 0

    def _setUp(self):
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.text = config_text(self.test, self.directory)
        self.conf = self._config()
        database = db_api.Database(self.conf)
        migration.db_sync(database)
        database.dispose()
        self._casts_running = 0
        self._casts_done = threading.Condition()
        self.useFixture(fixtures.MonkeyPatch(
            'scheduler.nova.endpoint.NovaEndpoint.select_destinations',
            self._after_catching_up(
                nova_endpoint.NovaEndpoint.select_destinations)))
        for method in NOVA_CASTS:
            self.useFixture(fixtures.MonkeyPatch(
                'scheduler.nova.endpoint.NovaEndpoint.' + method,
                self._counted(getattr(nova_endpoint.NovaEndpoint, method))))
        self.service = ServiceHandle(self)
        self.service.start()
        self.addCleanup(self.service.stop)
        _RUNNING[0] = self
        self.addCleanup(_RUNNING.__setitem__, 0, None)

    def _config(self):
        path = os.path.join(self.directory, 'scheduler.conf')
        with open(path, 'w') as out:
            out.write(self.text)
        conf = sched_conf.new_config()
        sched_conf.placement_feed.register_opts(conf)
        conf(['--config-file', path], project='scheduler')
        return conf

    def reconfigure(self):
        """Nova's options changed after the start (``self.flags``): the
        new configuration, as an operator's reload (SIGHUP) applies it,
        by replacing the worker."""
        text = config_text(self.test, self.directory)
        if text == self.text:
            return
        LOG.info('nova\'s scheduler options changed: replacing the worker')
        self.text = text
        running = self.worker is not None
        if running:
            self.stop()
        self.conf = self._config()
        if running:
            self.start()

    def start(self):
        self.worker = launcher.Worker(0, self.conf)
        self.worker.run()
        # the fake driver's cleanup empties every exchange of the process,
        # nova's own queues included: nova's RPCFixture does it at the end
        self.worker.transport = _KeptOpen(self.worker.transport)
        self.sent = 0     # the new worker's counters start at 0 too
        # on the worker's transport: a client's own would be cleaned up
        # with the fake driver's exchanges (nova's too) when closed
        self.client = SchedulerClient(self.conf,
                                      transport=self.worker.transport)
        self.feed = feed_cmd.build_feed(self.conf,
                                        _Counted(self.client, self))
        self._stop.clear()
        self._thread = threading.Thread(target=self._feed_forever,
                                        name='placement-feed', daemon=True)
        self._thread.start()

    def stop(self):
        if self.worker is None:
            return
        self._stop.set()
        self._thread.join(10)
        self.worker.terminate()
        self.worker = None

    def _feed_forever(self):
        while not self._stop.wait(self.conf.placement_feed.interval):
            with self._feed_lock:
                self._run_cycle()

    def _run_cycle(self):
        """One feed cycle; the feed reads nova's API once the test has
        one (some tests set their API up after their scheduler)."""
        if self.feed.hosts is None:
            nova_api = nova_api_adapter()
            if nova_api is not None:
                self.feed.hosts = nova_hosts.NovaHosts(nova_api)
        feed_cmd.run_cycle(self.feed)

    def _after_catching_up(self, select_destinations):
        @functools.wraps(select_destinations)
        def caught_up(endpoint, ctxt, *args, **kwargs):
            self.catch_up(endpoint.manager)
            return select_destinations(endpoint, ctxt, *args, **kwargs)
        return caught_up

    def _counted(self, cast):
        @functools.wraps(cast)
        def running(endpoint, ctxt, *args, **kwargs):
            with self._casts_done:
                self._casts_running += 1
            try:
                return cast(endpoint, ctxt, *args, **kwargs)
            finally:
                with self._casts_done:
                    self._casts_running -= 1
                    self._casts_done.notify_all()
        return running

    def catch_up(self, manager):
        """Nova's earlier casts stored, one feed cycle, its reports
        written, ``manager``'s host table refreshed (module docstring);
        no cycle while the worker is being replaced."""
        # a cast sent before the call is taken from its queue within one
        # poll of the fake driver (its queues are oslo.messaging's
        # private internals: the bound, not the queue, is waited for)
        time.sleep(2 * FAKE_POLL)
        with self._casts_done:
            self._casts_done.wait_for(lambda: not self._casts_running,
                                      CATCH_UP_TIMEOUT)
        with self._feed_lock:
            current = self.worker is not None and \
                self.worker.endpoint is manager
            if current:
                self._run_cycle()
            sent = self.sent if current else 0
        endpoint = manager
        try:
            waiting.wait_for(lambda: _received(endpoint.recorder) >= sent,
                             CATCH_UP_TIMEOUT, 'the reports', interval=0.005)
        except AssertionError:
            LOG.warning('the scheduler received %d of %d reports',
                        _received(endpoint.recorder), sent)
        endpoint.report_writer.flush()
        endpoint.host_cache.refresh(force=True)


def _received(recorder):
    counters = recorder.snapshot()
    return counters['reports_written'] + counters['reports_unchanged']


class _KeptOpen:
    """A transport whose ``cleanup`` is left to nova's RPCFixture."""

    def __init__(self, transport):
        self._transport = transport

    def cleanup(self):
        pass

    def __getattr__(self, name):
        return getattr(self._transport, name)


class _Counted:
    """The feed's client, counting the reports it sent."""

    def __init__(self, client, service):
        self._client = client
        self._service = service

    def update_resource_stats(self, ctxt, name, stats):
        self._client.update_resource_stats(ctxt, name, stats)
        self._service.sent += 1

    def __getattr__(self, name):
        return getattr(self._client, name)


class ServiceHandle:
    """What nova's tests hold as the scheduler service: ``start``,
    ``stop``, ``kill`` (as nova's ``Service``); ``manager`` is the
    worker's endpoint (this scheduler's manager, not nova's)."""

    def __init__(self, service):
        self._service = service
        self.host = service.conf.host
        self.topic = 'scheduler'

    @property
    def manager(self):
        worker = self._service.worker
        return worker.endpoint if worker else None

    def start(self):
        self._service.start()

    def stop(self):
        self._service.stop()

    kill = stop

    @contextlib.contextmanager
    def paused(self):
        self.stop()
        try:
            yield
        finally:
            self.start()
