"""Issue 21, points 3 and 4: nova's claims written back to a real
Placement 16, and kept in step when nova deletes an instance.

One compute node with 2 VCPUs is created in Placement as nova-compute
creates it; ``scheduler-placement-feed`` runs beside a real
``scheduler-server`` (``[nova] enabled``, write-back on by default) and
feeds it. Nova 34's own client (``nova_driver.py``, RPC 4.5) then:

1. boots one instance: its allocation is in Placement when the answer
   arrives (``GET /allocations/{uuid}``);
2. once the feed has read that usage back (the scheduler holds the claim
   *and* the reported usage of the same instance), boots a second one
   on the same node: the two are not counted twice (usage is the larger
   of reported and claimed, not their sum); a third gets NoValidHost;
3. deletes the first as nova-compute does (nova's own report client
   deletes its allocation in Placement) and syncs the host's instances
   (``sync_instance_info``), which releases the scheduler's claim;
   another boot fits again.

The driver pauses between the steps until this test has seen the feed
and the claims settle and stay settled for several feed cycles (a
report read just before nova's delete can land after it: for one cycle
the scheduler then sees the deleted instance's usage, as any fed cache
would). Without placement in ``.nova-venv`` the test
skips (fails with ``CI=true``).
"""

import subprocess
import sys
import time
import uuid

import pytest

from tests.functional import db_state
from tests.functional import placement_service
from tests.functional import test_placement_feed as feed_tests
from tests.functional.test_nova_client import CELL
from tests.functional.test_nova_client import SMALL
from tests.functional.test_nova_client import answers_of
from tests.functional.test_nova_client import nova_python  # noqa: F401
from tests.functional.test_nova_client import start_nova

pytestmark = pytest.mark.parametrize('backend', ['sqlite'])
HOST = 'nova-rp-0'
TIMEOUT = 60
STEADY = 1.0   # five cycles of the feed's 0.2 s interval


@pytest.fixture
def placement(tmp_path):
    with placement_service.running(tmp_path) as service:
        yield service


def _boot(name, **fields):
    return dict({'name': name, 'pin': '4.5', 'flavor': SMALL,
                 'return_objects': True, 'return_alternates': True},
                **fields)


def _cases(go):
    return [
        _boot('boot 1', retry_for=TIMEOUT),   # until the feed fed the host
        {'name': 'step 1', 'pin': '4.5', 'call': 'pause', 'until': go[0]},
        _boot('boot 2'),
        _boot('full'),
        {'name': 'nova deletes 1', 'pin': '4.5',
         'call': 'delete_allocation', 'of': 'boot 1'},
        {'name': 'sync', 'pin': '4.5', 'call': 'sync_instance_info',
         'host': HOST, 'instances_of': ['boot 2']},
        {'name': 'step 2', 'pin': '4.5', 'call': 'pause', 'until': go[1]},
        _boot('boot 3'),
    ]


def _settled(server, placement, rp):
    """The consumers claimed in the scheduler, once Placement, the feed's
    report and the claims all count one instance's VCPU; else None."""
    used = placement.request('GET', '/resource_providers/%s/usages' % rp)[
        'usages'].get('VCPU')
    providers = list(db_state.read_state(server.engine).values())
    vcpu = providers[0].inventories.get('VCPU') if providers else None
    if vcpu is None:
        return None
    consumers = {row['consumer_uuid']
                 for row in db_state.allocations(server.engine)}
    if (used, vcpu.reported_used, vcpu.allocated, len(consumers)) == (
            1, 1, 1, 1):
        return consumers
    return None


def _steady(server, placement, rp, other_than, what):
    """The settled consumers once they differ from ``other_than`` and have
    stayed so for ``STEADY`` seconds (several feed cycles): a report the
    feed read before nova's last change may still be on its way, and the
    next boot would meet the usage that report carries."""
    seen = {'since': None, 'held': None}

    def steady():
        now = _settled(server, placement, rp)
        if now is None or now == other_than or now != seen['held']:
            seen['since'], seen['held'] = time.monotonic(), now
            return False
        return time.monotonic() - seen['since'] >= STEADY
    db_state.wait_for(steady, TIMEOUT, what)
    return seen['held']


def _start_feed(server):
    return subprocess.Popen(
        [sys.executable, '-m', 'scheduler.cmd.placement_feed',
         '--config-file', str(server.config_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _drive(python, exchange, server, placement, rp, tmp_path):
    go = [str(tmp_path / 'go-1'), str(tmp_path / 'go-2')]
    process = start_nova(python, exchange, _cases(go), placement.url)
    first = _steady(server, placement, rp, None,
                    'boot 1 fed back and claimed')
    [consumer] = first
    seen = placement.request('GET', '/allocations/%s' % consumer)
    open(go[0], 'w').close()
    _steady(server, placement, rp, first, 'boot 1 released, boot 2 held')
    open(go[1], 'w').close()
    answers = answers_of(process)
    assert answers['boot 1']['instance_uuids'] == [consumer]
    return dict(answers, **{'boot 1': dict(answers['boot 1'], seen=seen)})


def _allocations(placement, answer):
    """What Placement holds for the instance; for boot 1, what it held
    before nova deleted it."""
    if 'seen' in answer:
        return answer['seen']
    [instance] = answer['instance_uuids']
    return placement.request('GET', '/allocations/%s' % instance)


def test_claims_written_back_and_kept_in_step(
        nova_python, scheduler, placement, tmp_path):  # noqa: F811
    rp = feed_tests._compute(placement, HOST, 2)
    exchange = 'nova-placement-%s' % uuid.uuid4().hex[:12]
    feed_options = feed_tests._feed_options(placement)
    feed_options['placement_feed']['interval'] = 0.2
    server = scheduler(workers=1, options=dict(feed_options, **{
        'nova': {'enabled': True, 'cell_uuid': CELL, 'exchange': exchange},
        # a sync releases the claims of instances the host no longer runs
        'scheduler': {'unconfirmed_claim_grace_period': 0}}))
    feed = _start_feed(server)
    try:
        answers = _drive(nova_python, exchange, server, placement, rp,
                         tmp_path)
    finally:
        feed.terminate()
        feed.communicate(timeout=30)
    for name in ('boot 1', 'boot 2', 'boot 3'):
        written = _allocations(placement, answers[name])
        assert written['allocations'] == {rp: {
            'generation': written['allocations'][rp]['generation'],
            'resources': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}}
        assert (written['project_id'], written['user_id']) == (
            'demo-project', 'demo-user')
    assert answers['full']['error']['is_no_valid_host']
    # nova deleted it in Placement; the scheduler's claim followed
    assert placement.request('GET', '/allocations/%s' % answers['boot 1'][
        'instance_uuids'][0])['allocations'] == {}
    assert {row['consumer_uuid']
            for row in db_state.allocations(server.engine)} == {
        answers[name]['instance_uuids'][0] for name in ('boot 2', 'boot 3')}
    assert db_state.overcommit(db_state.read_state(server.engine)) == []
    assert server.errors_in_log() == []
