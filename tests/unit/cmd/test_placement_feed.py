"""``scheduler-placement-feed``: configuration, the feed it builds, and a
failing cycle that does not end the process."""

import threading

from scheduler import conf as sched_conf
from scheduler.cmd import placement_feed as feed_cmd
from tests.unit.placement_feed import fake_placement as fakes


def test_unreadable_configuration_exits_2(tmp_path, capsys):
    missing = tmp_path / 'missing.conf'
    assert feed_cmd.main(['--config-file', str(missing)]) == 2
    assert capsys.readouterr().err.startswith(feed_cmd.PROG + ':')


def test_build_feed_reaches_the_configured_placement(tmp_path):
    path = tmp_path / 'feed.conf'
    path.write_text('[placement_feed]\nauth_type = admin_token\n'
                    'endpoint = http://127.0.0.1:8778\ntoken = admin\n'
                    'push_aggregates = false\nresend_interval = 12\n'
                    'read_concurrency = 6\n')
    conf = sched_conf.new_config()
    conf(['--config-file', str(path)], project='scheduler',
         default_config_files=[])
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
