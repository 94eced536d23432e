"""Issue 21, point 1: nova 34's own scheduler client against a real
``scheduler-server`` started with ``[nova] enabled = true``, over RabbitMQ.

Nova runs from its side virtualenv (``.nova-venv``, nova 34.0.0 from
PyPI) in one subprocess, ``tests/functional/nova_driver.py``, which builds
nova RequestSpec objects and calls nova's unmodified
``SchedulerQueryClient`` at each ``[upgrade_levels] scheduler`` pin from
4.0 to 4.5, at every pin: a single boot, a multi-create (with alternates
at 4.5), server groups of both hard policies, a NoValidHost caught as
nova's class, a resize of
each pin's instance (the RequestSpec nova's conductor sends: a larger
flavor, the source host in ``ignore_hosts``, a cell-only
``requested_destination``), one that fits nowhere, and the five fanout
casts. Each test run has an exchange of its own, so it never sees
another run's messages.

Without the side venv the test skips, saying how to build it; with
``CI=true`` it fails instead (``.ci/run`` builds it).

The transcript: one summary line per case (shown with ``-s`` and in the
terminal summary) says what nova's client sent (kind, method, version,
argument names, the RequestSpec's key fields) and what it got back; with
``SCHEDULER_NOVA_TRANSCRIPT=path`` the test also writes every case's
full answer there as JSON (``nova_driver.py`` says its shape).
"""

import json
import os
import pathlib
import subprocess
import uuid

import pytest
import sqlalchemy as sa

from tests.functional import db_state
from tests.functional import shared_broker
from tests.functional import workload

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOVA_PYTHON = ROOT / '.nova-venv' / 'bin' / 'python'
BUILD = ('python3 -m venv .nova-venv && .nova-venv/bin/pip install '
         'nova==34.0.0')
CELL = 'c0ffee00-0000-4000-8000-000000000001'
AGGREGATE = str(uuid.uuid4())
INSTANCE = str(uuid.uuid4())
SMALL = {'vcpus': 1, 'memory_mb': 512, 'root_gb': 1}
HUGE = {'vcpus': 1, 'memory_mb': 10 ** 7, 'root_gb': 1}
BIG = {'vcpus': 2, 'memory_mb': 2048, 'root_gb': 20}
PINS = ('4.0', '4.1', '4.2', '4.3', '4.4', '4.5')
HOSTS = 6

pytestmark = pytest.mark.parametrize('backend', ['sqlite'])


@pytest.fixture
def nova_python():
    """Nova's side virtualenv's python. Nova's client calls topic
    ``scheduler``, and RabbitMQ's queue of a topic is named after the
    topic whatever the exchange: the test needs its process's own vhost
    (``shared_broker``), or two tests serving nova's API on the shared
    broker at once (``pytest -n``) would take each other's calls."""
    if not NOVA_PYTHON.exists():
        why = 'nova\'s side virtualenv %s is missing; build it with: %s' % (
            NOVA_PYTHON, BUILD)
        if os.environ.get('CI') == 'true':
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    shared_broker.require()
    return NOVA_PYTHON


def _boot(pin, **fields):
    objects_ = pin == '4.5'
    case = {'name': 'boot %s' % pin, 'pin': pin, 'flavor': SMALL,
            'return_objects': objects_, 'return_alternates': objects_}
    case.update(fields)
    return case


def _resize(pin, **fields):
    """What nova's conductor asks for a resize of ``boot <pin>``'s
    instance (``nova_driver.resize_spec``); at 4.5 with the flags nova
    34's ``MigrationTask`` sets (below 4.5, nova 34's client refuses them:
    the flags of an older conductor)."""
    return _boot(pin, **dict({
        'name': 'resize %s' % pin, 'call': 'resize', 'of': 'boot %s' % pin,
        'flavor': BIG, 'cell_uuid': CELL}, **fields))


CASES = [_boot(pin) for pin in PINS] + [_resize(pin) for pin in PINS] + [
    # after its resize: the claim of the new flavor stays where it is
    _resize('4.4', name='resize nowhere', of='resize 4.4', flavor=HUGE),

    _boot('4.5', name='multi-create', num_instances=3),
    _boot('4.5', name='affinity', num_instances=2, group='affinity'),
    _boot('4.5', name='anti-affinity', num_instances=3,
          group='anti-affinity'),
    _boot('4.5', name='no valid host', flavor=HUGE),
] + [case for pin in PINS[:-1] for case in (
    # the same at the older pins, whose answers are host dicts
    _boot(pin, name='multi-create %s' % pin, num_instances=3),
    _boot(pin, name='affinity %s' % pin, num_instances=2,
          group='affinity'),
    _boot(pin, name='anti-affinity %s' % pin, num_instances=3,
          group='anti-affinity'),
    _boot(pin, name='no valid host %s' % pin, flavor=HUGE))] + [
    {'name': 'aggregate', 'pin': '4.5', 'call': 'update_aggregates',
     'aggregate': {'uuid': AGGREGATE, 'name': 'nova-agg',
                   'hosts': ['host-00'],
                   'metadata': {'availability_zone': 'az-nova'}}},
    {'name': 'instance', 'pin': '4.5', 'call': 'update_instance_info',
     'host': 'host-01', 'instance_uuids': [INSTANCE]},
    {'name': 'sync', 'pin': '4.5', 'call': 'sync_instance_info',
     'host': 'host-01', 'instance_uuids': [INSTANCE]},
    # NoValidHost until the fanout cast is stored and polled
    _boot('4.5', name='zone of the aggregate', availability_zone='az-nova',
          retry_for=30),
    {'name': 'aggregate gone', 'pin': '4.5', 'call': 'delete_aggregate',
     'aggregate': {'uuid': AGGREGATE, 'name': 'nova-agg',
                   'hosts': ['host-00'], 'metadata': {}}},
    {'name': 'instance gone', 'pin': '4.5', 'call': 'delete_instance_info',
     'host': 'host-01', 'instance_uuid': INSTANCE},
]


def start_nova(nova_python, exchange, cases, placement_url=None):
    """``nova_driver.py`` running ``cases`` (a process: ``answers_of``
    waits for its answers)."""
    return subprocess.Popen(
        [str(nova_python), str(ROOT / 'tests/functional/nova_driver.py'),
         shared_broker.transport_url(), exchange,
         json.dumps(cases)] + ([placement_url] if placement_url else []),
        cwd=str(ROOT / 'tests/functional'), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def answers_of(process, timeout=300):
    """The driver's answers by case name, once it ended well."""
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stdout + stderr
    answers = [json.loads(line) for line in stdout.splitlines()
               if line.startswith('{')]
    return {answer['name']: answer for answer in answers}


def _run_nova(nova_python, exchange, cases):
    return answers_of(start_nova(nova_python, exchange, cases))


def _fields(answer):
    return [[sel['fields'] for sel in per] for per in answer['result']]


def _claimed_on(server, uuid_):
    return {row['host'] for row in db_state.allocations(server.engine,
                                                        uuid_)}


def _check_pins(server, answers):
    for pin in PINS[:-1]:
        [host] = answers['boot %s' % pin]['result']
        assert sorted(host) == ['host', 'limits', 'nodename'], pin
        assert host['host'].startswith('host-')
        assert set(host['limits']) == {'vcpu', 'memory_mb', 'disk_gb'}
    answer = answers['boot 4.5']
    [[first, *alternates]] = answer['result']
    assert (first['class'], first['namespace'], first['version']) == (
        'Selection', 'nova', '1.1')
    fields = first['fields']
    assert fields['cell_uuid'] == CELL
    assert fields['availability_zone'] in ('az1', 'az2')
    request = json.loads(fields['allocation_request'])
    assert request['allocations'] == {fields['compute_node_uuid']: {
        'resources': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}}
    assert fields['allocation_request_version'] == '1.36'
    assert len(alternates) == 2
    # claimed for the instance nova named: its resize (_check_resizes)
    # found the claim there and moved it
    assert answers['resize 4.5']['source_host'] == fields['service_host']


def _check_groups(server, answers):
    multi = _fields(answers['multi-create'])
    assert len(multi) == 3 and all(len(per) == 3 for per in multi)
    for uuid_, per in zip(answers['multi-create']['instance_uuids'], multi):
        assert _claimed_on(server, uuid_) == {per[0]['service_host']}
    together = {per[0]['service_host']
                for per in _fields(answers['affinity'])}
    assert len(together) == 1
    apart = [per[0]['service_host']
             for per in _fields(answers['anti-affinity'])]
    assert len(set(apart)) == 3
    for pin in PINS[:-1]:
        multi = [d['host'] for d in answers['multi-create %s' % pin][
            'result']]
        assert len(multi) == 3, pin
        together = {d['host'] for d in answers['affinity %s' % pin][
            'result']}
        assert len(answers['affinity %s' % pin]['result']) == 2, pin
        assert len(together) == 1, pin
        apart = [d['host'] for d in answers['anti-affinity %s' % pin][
            'result']]
        assert len(apart) == 3 and len(set(apart)) == 3, pin


def _check_no_valid_host(server, answers):
    for name in ['no valid host'] + ['no valid host %s' % pin
                                     for pin in PINS[:-1]]:
        error = answers[name]['error']
        assert error['is_no_valid_host'], error
        assert error['module'].startswith('nova.exception'), error
        # nova-scheduler's words, which nova shows the instance's owner;
        # the diagnosis is in the scheduler's log
        assert error['message'] == ('No valid host was found. There are '
                                    'not enough hosts available.'), error
    diagnoses = server.lines_with('NoValidHost answered to nova')
    # 'zone of the aggregate' may be answered NoValidHost (and asked
    # again) until the aggregate's fanout cast is stored: those lines
    # name the zone; every other one names the memory that did not fit
    waits = [line for line in diagnoses if "not in zone 'az-nova'" in line]
    too_big = [line for line in diagnoses if line not in waits]
    assert len(too_big) >= len(PINS) and all(
        'MEMORY_MB' in line for line in too_big), too_big


def _stored(server, statement, **params):
    with server.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(sa.text(statement),
                                                   params)]


def _claims(server, uuid_):
    """host -> {resource class: amount} the scheduler holds for
    ``uuid_``."""
    held = {}
    for row in db_state.allocations(server.engine, uuid_):
        held.setdefault(row['host'], {})[row['resource_class']] = \
            row['amount']
    return held


def _check_resizes(server, answers):
    """Each pin's instance moved off its host to one that fits the new
    flavor, and its claim went with it (one claim, the new amounts); a
    resize that fits nowhere leaves the claim as it was."""
    state = db_state.read_state(server.engine)
    big = db_state.resources_of(BIG)
    for pin in PINS:
        answer = answers['resize %s' % pin]
        [instance] = answer['instance_uuids']
        assert instance == answers['boot %s' % pin]['instance_uuids'][0]
        if pin == '4.5':
            [[first, *alternates]] = _fields(answer)
            host = first['service_host']
            assert json.loads(first['allocation_request'])[
                'allocations'][first['compute_node_uuid']] == {
                    'resources': big}
            assert answer['source_host'] not in {
                alt['service_host'] for alt in alternates}
        else:
            [found] = answer['result']
            host = found['host']
        assert host != answer['source_host'], pin
        assert _claims(server, instance) == {host: big}, pin
        [provider] = [p for p in state.values() if p.host == host]
        assert all(provider.inventories[rc].capacity >= amount
                   for rc, amount in big.items()), pin
    error = answers['resize nowhere']['error']
    assert error['is_no_valid_host'], error
    [moved] = answers['resize 4.4']['result']
    assert _claims(server, answers['resize 4.4']['instance_uuids'][0]) == {
        moved['host']: big}


def _check_casts(server, answers):
    """update_aggregates and update_instance_info were stored (a request
    for the aggregate's zone found its host), then the two deletes."""
    [[first]] = [per[:1] for per in _fields(
        answers['zone of the aggregate'])]
    assert (first['service_host'], first['availability_zone']) == (
        'host-00', 'az-nova')
    db_state.wait_for(lambda: _stored(
        server, 'SELECT deleted FROM aggregates WHERE uuid = :u',
        u=AGGREGATE) == [(True,)], 30, 'delete_aggregate stored')
    db_state.wait_for(lambda: _stored(
        server, 'SELECT host, deleted FROM instances WHERE uuid = :u',
        u=INSTANCE) == [('host-01', True)], 30,
        'update_instance_info then delete_instance_info stored')


def _spec_summary(spec):
    """The key fields of a select_destinations' RequestSpec, short."""
    if not spec:
        return ''
    flavor = '%(vcpus)s/%(memory_mb)s/%(root_gb)s' % spec['flavor']
    if spec['class'] == 'dict':
        return ' [request_spec dict + filter_properties dict: %d x %s%s]' % (
            spec['num_instances'], flavor,
            ', group %s' % spec['group_policies']
            if spec['group_policies'] else '')
    extra = ''.join(', %s %s' % (name, spec[key]) for name, key in (
        ('group', 'group_policy'), ('az', 'availability_zone'),
        ('ignore', 'ignore_hosts'), ('cell', 'destination_cell'))
        if spec[key])
    return ' [RequestSpec %s: %d x %s%s]' % (
        spec['version'], spec['num_instances'], flavor, extra)


def _received(answer):
    """What nova's client got back, short."""
    if 'error' in answer:
        return 'raised %s.%s (a NoValidHost: %s): %s' % (
            answer['error']['module'], answer['error']['class'],
            answer['error']['is_no_valid_host'],
            answer['error']['kwargs'].get('reason', '')[:60])
    if answer['result'] is None:
        return '(a cast)'
    if answer['result'] and isinstance(answer['result'][0], dict):
        return '%d host dict(s) %s' % (len(answer['result']), sorted(
            answer['result'][0]))
    return '%d list(s) of %s, %s per list, fields %s' % (
        len(answer['result']), '/'.join(sorted(
            {'%s %s %s' % (s['namespace'], s['class'], s['version'])
             for per in answer['result'] for s in per})),
        [len(per) for per in answer['result']],
        sorted(answer['result'][0][0]['fields']))


def _summary(answer):
    """One line: what nova's client sent at its pin, and what it got."""
    sent = answer['sent']
    got = _received(answer)
    if 'source_host' in answer:     # a resize that found a host
        [first] = answer['result']
        got += ', %s -> %s' % (answer['source_host'], first['host'] if
                               isinstance(first, dict) else
                               first[0]['fields']['service_host'])
    return 'nova %-18s pin %s: %s %s %s%s(%s)%s -> %s' % (
        answer['name'], answer['pin'], sent['kind'], sent['method'],
        sent['version'], ' fanout ' if sent['fanout'] else ' ',
        ', '.join(sent['args']), _spec_summary(sent.get('spec')), got)


def _write_transcript(answers):
    """Every case's full answer, in case order, to the file
    ``SCHEDULER_NOVA_TRANSCRIPT`` names (when it is set)."""
    path = os.environ.get('SCHEDULER_NOVA_TRANSCRIPT')
    if path:
        with open(path, 'w') as out:
            json.dump([answers[case['name']] for case in CASES], out,
                      indent=1, sort_keys=True)


def test_nova_s_own_client_at_every_pin(nova_python, scheduler,
                                        summary_line):
    exchange = 'nova-func-%s' % uuid.uuid4().hex[:12]
    server = scheduler(workers=1, options={
        # the claims written to Placement: tests/unit/nova/test_placement.py
        'nova': {'enabled': True, 'cell_uuid': CELL, 'exchange': exchange,
                 'placement_write_back': False},
        'scheduler': {'max_attempts': 3}})
    workload.push_hosts(server, workload.host_reports(HOSTS))
    answers = _run_nova(nova_python, exchange, CASES)
    assert sorted(answers) == sorted(case['name'] for case in CASES)
    for name, answer in answers.items():
        summary_line(_summary(answer))
    _write_transcript(answers)
    _check_pins(server, answers)
    _check_groups(server, answers)
    _check_no_valid_host(server, answers)
    _check_resizes(server, answers)
    _check_casts(server, answers)
    assert db_state.overcommit(db_state.read_state(server.engine)) == []
    assert server.errors_in_log() == []
