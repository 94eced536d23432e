"""``scheduler-placement-feed``: configuration, the feed it builds, and a
failing cycle that does not end the process."""

import threading

import oslo_messaging

from scheduler import conf as sched_conf
from scheduler.cmd import placement_feed as feed_cmd
from tests.unit.placement_feed import fake_placement as fakes


def test_unreadable_configuration_exits_2(tmp_path, capsys):
    missing = tmp_path / 'missing.conf'
    assert feed_cmd.main(['--config-file', str(missing)]) == 2
    assert capsys.readouterr().err.startswith(feed_cmd.PROG + ':')


def _feed_conf(tmp_path, more):
    """A configuration of a feed on a noauth Placement, plus ``more``."""
    path = tmp_path / 'feed.conf'
    path.write_text('[placement_feed]\nauth_type = admin_token\n'
                    'endpoint = http://127.0.0.1:8778\ntoken = admin\n'
                    + more)
    conf = sched_conf.new_config()
    conf(['--config-file', str(path)], project='scheduler',
         default_config_files=[])
    return conf


def test_build_feed_reaches_the_configured_placement(tmp_path):
    conf = _feed_conf(tmp_path, 'push_aggregates = false\n'
                      'resend_interval = 12\nread_concurrency = 6\n')
    feed = feed_cmd.build_feed(conf, fakes.RecordingClient())
    assert feed.reader.http.get_endpoint() == 'http://127.0.0.1:8778'
    assert feed.reader.http.service_type == 'placement'
    assert (feed.push_aggregates, feed.resend_interval,
            feed.read_concurrency) == (False, 12.0, 6)


class _FailingFeed:
    def __init__(self, stop):
        self.calls = 0
        self.stop = stop

    def run_cycle(self):
        self.calls += 1
        if self.calls == 2:
            self.stop.set()
        raise ConnectionError('placement is away')


def test_a_failed_cycle_is_logged_and_the_next_one_runs():
    stop = threading.Event()
    feed = _FailingFeed(stop)
    feed_cmd.run_forever(feed, 0.01, stop)
    assert feed.calls == 2


class _Workers:
    """A client whose workers answer after ``silent`` timed-out calls."""

    def __init__(self, silent):
        self.silent = silent
        self.calls = 0
        self.api = self

    def get_service_versions(self, ctxt):
        self.calls += 1
        if self.calls <= self.silent:
            raise oslo_messaging.MessagingTimeout('no worker')
        return []


def test_the_feed_waits_for_a_worker_before_its_first_cycle(caplog):
    client = _Workers(silent=2)
    assert feed_cmd.wait_for_workers(client, None, threading.Event())
    assert client.calls == 3
    assert caplog.text.count('no scheduler worker answers yet') == 1


def test_waiting_for_workers_ends_on_stop():
    stop = threading.Event()
    stop.set()
    assert not feed_cmd.wait_for_workers(_Workers(silent=5), None, stop)


def test_build_feed_asks_nova_for_compute_hosts_unless_told_not_to(
        tmp_path):
    conf = _feed_conf(
        tmp_path, 'compute_endpoint_override = http://nova:8774/v2.1\n')
    feed = feed_cmd.build_feed(conf, fakes.RecordingClient())
    assert feed.hosts.http.get_endpoint() == 'http://nova:8774/v2.1'
    assert feed.hosts.http.service_type == 'compute'
    conf.set_override('resolve_compute_hosts', False, 'placement_feed')
    assert feed_cmd.build_feed(conf, fakes.RecordingClient()).hosts is None
