"""``scheduler-placement-feed``: Placement's providers, fed to the scheduler.

    scheduler-placement-feed --config-file /etc/scheduler/scheduler.conf
    python -m scheduler.cmd.placement_feed --config-file ... --once

First waits until a scheduler worker answers (``get_service_versions``,
one call per ``[DEFAULT] rpc_response_timeout``): the report topic's queue
exists only once a worker has declared it, and the broker drops what is
cast to a topic nobody consumes, so a feed started before the workers
would lose its first reports until it resends them. Then runs a cycle of
``scheduler.placement_feed.feed`` every ``[placement_feed]
interval`` seconds until SIGTERM or SIGINT, logging what each cycle cost
(requests, providers read, reports sent). A cycle that fails (Placement
or the broker unreachable, an unexpected answer) is logged and the next
one tries again: what was read stays read. ``--once`` runs one cycle,
prints its figures as one JSON line and exits 0, or 1 when it failed.
A configuration that cannot be read exits 2 with one line on stderr.
"""

import json
import signal
import sys
import threading

from oslo_config import cfg
import oslo_messaging
from oslo_log import log as logging

from scheduler import conf as sched_conf
from scheduler.client import SchedulerClient
from scheduler.conf import placement_feed as feed_conf
from scheduler.context import RequestContext
from scheduler.placement_feed import feed as feed_mod
from scheduler.placement_feed import nova_hosts
from scheduler.placement_feed import reader
from scheduler import version

LOG = logging.getLogger(__name__)
PROG = 'scheduler-placement-feed'
_CLI_OPTS = [cfg.BoolOpt('once', default=False,
                         help='Run one cycle, print its figures, exit.')]


def build_feed(conf, client):
    """The feed of ``conf``'s ``[placement_feed]``, pushing through
    ``client``, as the service role (trackers' reports need it)."""
    group = conf.placement_feed
    ctxt = RequestContext(user_id=PROG, project_id='service',
                          roles=['service'])
    placement = reader.adapter_from_conf(conf)
    nova = nova_hosts.adapter_from_conf(conf, placement.session)
    return feed_mod.PlacementFeed(
        reader.PlacementReader(placement), client,
        ctxt, push_aggregates=group.push_aggregates,
        resend_interval=group.resend_interval,
        read_concurrency=group.read_concurrency,
        usage_sweep_interval=group.usage_sweep_interval,
        hosts=nova_hosts.NovaHosts(nova) if nova else None)


def run_cycle(feed):
    """One cycle, logged; None when it failed."""
    try:
        cycle = feed.run_cycle()
    except Exception:   # the daemon outlives any one cycle's failure
        LOG.exception('placement feed cycle failed; retrying next cycle')
        return None
    LOG.info('placement feed cycle: %d requests, %d providers read, %d '
             'usages swept, %d reports sent, %d resent, %d aggregates, '
             '%.3f s', cycle.requests, cycle.read, cycle.swept,
             cycle.reported, cycle.resent,
             cycle.aggregates, cycle.seconds)
    return cycle


def wait_for_workers(client, ctxt, stop):
    """Return once a worker answers (module docstring), or False when
    ``stop`` was set first."""
    waiting_logged = False
    while not stop.is_set():
        try:
            client.api.get_service_versions(ctxt)
            if waiting_logged:
                LOG.info('scheduler workers answer; feeding')
            return True
        except oslo_messaging.MessagingTimeout:
            if not waiting_logged:
                LOG.warning('no scheduler worker answers yet; the feed '
                            'starts once one does')
                waiting_logged = True
    return False


def run_forever(feed, interval, stop):
    while not stop.is_set():
        cycle = run_cycle(feed)
        stop.wait(max(interval - (cycle.seconds if cycle else 0), 0))


def _parse(conf, argv):
    feed_conf.register_opts(conf)
    logging.register_options(conf)
    conf.register_cli_opts(_CLI_OPTS)
    try:
        conf(sys.argv[1:] if argv is None else argv, project='scheduler',
             prog=PROG, version=version.release())
    except cfg.Error as exc:
        print('%s: %s' % (PROG, str(exc).splitlines()[0]), file=sys.stderr)
        return False
    return True


def main(argv=None):
    conf = sched_conf.new_config()
    if not _parse(conf, argv):
        return 2
    logging.setup(conf, 'scheduler')
    client = SchedulerClient(conf)
    try:
        feed = build_feed(conf, client)
        if conf.once:
            cycle = run_cycle(feed)
            print(json.dumps(cycle.__dict__ if cycle else None))
            return 0 if cycle else 1
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        if wait_for_workers(client, feed.ctxt, stop):
            run_forever(feed, conf.placement_feed.interval, stop)
        return 0
    finally:
        client.close()


if __name__ == '__main__':
    sys.exit(main())
