"""Nova's own scheduler client, driven from nova's side virtualenv.

Run by ``tests/functional/test_nova_client.py`` with the side venv's
interpreter (``.nova-venv/bin/python``, nova 34.0.0 from PyPI); it imports
nova and nothing of the scheduler. It builds nova ``RequestSpec``
objects the way nova-api does (``RequestSpec.from_components``) and sends
them through nova's unmodified ``SchedulerQueryClient`` (``SchedulerAPI``
underneath), with ``[upgrade_levels] scheduler`` set to each case's pin,
so the message on the bus is the one nova sends at that pin.

Usage::

    nova_driver.py TRANSPORT_URL EXCHANGE CASES_JSON [PLACEMENT_URL]

With ``PLACEMENT_URL`` (a Placement with ``noauth2``), nova.conf also
has a ``[placement]`` section, for the cases that run nova's own
Placement report client (``SchedulerReportClient``) as nova-compute
does when it deletes an instance.

``CASES_JSON`` is a list of cases; each prints one JSON line::

    {"name": "boot", "pin": "4.5", "call": "select_destinations",
     "flavor": {"vcpus": 1, "memory_mb": 512, "root_gb": 1},
     "num_instances": 1, "group": "affinity", "return_objects": true,
     "return_alternates": true, "retry_for": 0}
    {"name": "agg", "pin": "4.5", "call": "update_aggregates",
     "aggregate": {"uuid": ..., "name": ..., "hosts": [...],
                   "metadata": {...}}}
    {"name": "grow", "pin": "4.4", "call": "resize", "of": "boot",
     "flavor": {"vcpus": 2, "memory_mb": 1024, "root_gb": 2},
     "cell_uuid": ..., "return_objects": false}
    {"name": "del", "pin": "4.5", "call": "delete_allocation",
     "of": "boot"}
    {"name": "sync", "pin": "4.5", "call": "sync_instance_info",
     "host": "h", "instances_of": ["boot"]}
    {"name": "wait", "pin": "4.5", "call": "pause", "until": PATH}
    {"name": "timed", "pin": "4.5", "call": "timed_select", "count": 200,
     "flavor": {...}, "return_objects": true, "return_alternates": true}
    {"name": "alone", "pin": "4.5", "call": "timed_placement",
     "count": 200, "flavor": {...}}

``timed_select`` (``scheduler-bench nova_path``) sends ``count``
single boots one after the other and answers ``{"seconds": [...],
"hosts": [...]}``: each call's latency and first host. ``timed_placement``
(needs ``PLACEMENT_URL``) times what nova 34's own scheduler asks of
Placement for each of ``count`` boots, with nova's own code
(``SchedulerManager.select_destinations``'s Placement calls): the request
filters, ``resources_from_request_spec``, ``get_allocation_candidates``
(``limit`` of ``[scheduler] max_placement_results``), then
``claim_resources`` of the candidate whose provider has the most free
``MEMORY_MB`` (what nova's default RAM weigher prefers); nova's host
filters and weighers, which read the cell database, are not run.

``of`` and ``instances_of`` name earlier cases: their instances (and,
for ``resize``, the host the instance went to). ``resize`` asks for a
new host of that instance with the RequestSpec nova's conductor sends for
a resize (``resize_spec``). ``pause`` waits (60 s at most) until the test
creates ``PATH``.

Each line also has ``sent``: the kind, version, fanout and argument
names of the message nova's client put on the bus and, for a
``select_destinations``, ``spec``: the key fields of what it carried (a
nova ``RequestSpec`` from 4.3, the legacy ``request_spec`` and
``filter_properties`` dicts below). An answer is
``{"name", "sent", "result": ...}``: nova ``Selection`` objects as
``{"class": "Selection", "namespace": ..., "fields": {...}}`` (the
``limits`` a dict of its set fields), host dicts as they came; an error is
``{"name", "error": {"module", "class", "is_no_valid_host", "kwargs",
"message"}}``: the exception nova's client raised.
"""

import json
import os
import sys
import tempfile
import time
import uuid

import nova.conf
from nova import config
from nova import context as nova_context
from nova import exception
from nova import objects
from nova.scheduler.client import query

CONF = nova.conf.CONF


def _configure(transport_url, exchange, placement_url=None):
    """nova's configuration as an operator writes it in nova.conf."""
    objects.register_all()
    with tempfile.NamedTemporaryFile('w', suffix='.conf') as nova_conf:
        nova_conf.write(NOVA_CONF % {'url': transport_url,
                                     'exchange': exchange})
        if placement_url:
            nova_conf.write(PLACEMENT_CONF % {'url': placement_url})
        nova_conf.flush()
        config.parse_args(['nova_driver', '--config-file', nova_conf.name],
                          configure_db=False)


NOVA_CONF = """[DEFAULT]
transport_url = %(url)s
control_exchange = %(exchange)s
# a test must not wait nova's default 30 minutes for a lost answer
rpc_response_timeout = 30
long_rpc_timeout = 60
"""
PLACEMENT_CONF = """
[placement]
auth_type = admin_token
endpoint = %(url)s
token = admin
"""


def _context():
    return nova_context.RequestContext(
        user_id='demo-user', project_id='demo-project',
        roles=['member', 'reader'], is_admin=False)


def _flavor(values):
    return objects.Flavor(
        id=1, flavorid='1', name='f-%(vcpus)s-%(memory_mb)s' % values,
        vcpus=values['vcpus'], memory_mb=values['memory_mb'],
        root_gb=values.get('root_gb', 0), ephemeral_gb=0, swap=0,
        rxtx_factor=1.0, vcpu_weight=0, disabled=False, is_public=True,
        extra_specs=values.get('extra_specs', {}), description=None)


def _group(ctxt, policy):
    if not policy:
        return None
    return objects.InstanceGroup(
        ctxt, uuid=str(uuid.uuid4()), name='group-' + policy,
        policy=policy, rules={}, members=[], hosts=[],
        user_id=ctxt.user_id, project_id=ctxt.project_id)


def request_spec(ctxt, case, instance_uuids):
    """A nova RequestSpec as nova-api builds one for a boot request."""
    image = {'id': str(uuid.uuid4()), 'name': 'cirros', 'min_ram': 0,
             'min_disk': 0, 'properties': {}}
    spec = objects.RequestSpec.from_components(
        ctxt, instance_uuids[0], image, _flavor(case['flavor']),
        None, objects.InstancePCIRequests(requests=[]),
        {'scheduler_hints': case.get('hints', {})},
        _group(ctxt, case.get('group')), case.get('availability_zone'),
        project_id=ctxt.project_id, user_id=ctxt.user_id)
    spec.num_instances = len(instance_uuids)
    return spec


def resize_spec(ctxt, case):
    """The RequestSpec nova's conductor sends for a resize of the
    instance ``case`` names: its spec with the new flavor (``ComputeTask
    Manager._get_request_spec_for_cold_migrate``), its host in
    ``ignore_hosts`` (``API.resize`` without ``allow_resize_to_same_host``)
    and a ``requested_destination`` naming only its cell
    (``MigrationTask._set_requested_destination_cell``)."""
    spec = request_spec(ctxt, case, [case['instance_uuid']])
    spec.ignore_hosts = [case['source_host']]
    spec.requested_destination = objects.Destination(
        cell=objects.CellMapping(uuid=case['cell_uuid'], name='cell1'))
    return spec


def _selection(sel):
    fields = {name: getattr(sel, name) for name in sel.fields
              if sel.obj_attr_is_set(name)}
    if fields.get('limits') is not None:
        fields['limits'] = fields['limits'].to_dict()
    return {'class': type(sel).__name__,
            'namespace': sel.OBJ_PROJECT_NAMESPACE,
            'version': sel.VERSION, 'fields': fields}


def _plain(result):
    if isinstance(result, list):
        return [_plain(item) for item in result]
    if isinstance(result, objects.Selection):
        return _selection(result)
    return result


def _select(client, ctxt, case):
    """One select_destinations; with ``retry_for`` (seconds), asked again
    while the answer is NoValidHost (a cast the request depends on is
    still on its way)."""
    deadline = time.monotonic() + case.get('retry_for', 0)
    while True:
        uuids = [str(uuid.uuid4())
                 for _ in range(case.get('num_instances', 1))]
        spec = request_spec(ctxt, case, uuids)
        try:
            result = client.select_destinations(
                ctxt, spec, uuids,
                return_objects=case.get('return_objects', False),
                return_alternates=case.get('return_alternates', False))
        except exception.NoValidHost:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
            continue
        return {'instance_uuids': uuids, 'result': _plain(result)}


def _resize(client, ctxt, case):
    """nova's conductor asking for the destination of a resize
    (``MigrationTask._schedule``: the one instance, by its uuid)."""
    uuids = [case['instance_uuid']]
    result = client.select_destinations(
        ctxt, resize_spec(ctxt, case), uuids,
        return_objects=case.get('return_objects', False),
        return_alternates=case.get('return_alternates', False))
    return {'instance_uuids': uuids, 'source_host': case['source_host'],
            'result': _plain(result)}


def _timed_select(client, ctxt, case):
    seconds, hosts = [], []
    for _ in range(case['count']):
        uuids = [str(uuid.uuid4())]
        spec = request_spec(ctxt, case, uuids)
        started = time.perf_counter()
        result = client.select_destinations(
            ctxt, spec, uuids,
            return_objects=case.get('return_objects', False),
            return_alternates=case.get('return_alternates', False))
        seconds.append(time.perf_counter() - started)
        first = result[0]
        hosts.append(first[0].service_host if isinstance(first, list)
                     else first['host'])
    return {'seconds': seconds, 'hosts': hosts}


def _most_free_memory(requests, summaries):
    def free(request):
        [rp] = request['allocations']
        memory = summaries[rp]['resources']['MEMORY_MB']
        return memory['capacity'] - memory['used']
    return max(requests, key=free)


def _placement_path(ctxt, case):
    """One boot's Placement calls as nova 34's scheduler makes them."""
    from nova.scheduler.client import report
    from nova.scheduler import request_filter
    from nova.scheduler import utils
    placement = report.report_client_singleton()
    uuids = [str(uuid.uuid4())]
    spec = request_spec(ctxt, case, uuids)
    for prefilter in request_filter.ALL_REQUEST_FILTERS:
        if prefilter is not request_filter.owner_nova_filter:
            prefilter(ctxt, spec)   # owner_nova reads the cell database
    resources = utils.resources_from_request_spec(ctxt, spec, None)
    requests, summaries, version = placement.get_allocation_candidates(
        ctxt, resources)
    chosen = _most_free_memory(requests, summaries)
    if not utils.claim_resources(ctxt, placement, spec, uuids[0], chosen,
                                 allocation_request_version=version):
        raise RuntimeError('nova could not claim %s' % chosen)
    [rp] = chosen['allocations']
    return rp


def _timed_placement(ctxt, case):
    seconds, hosts = [], []
    for _ in range(case['count']):
        started = time.perf_counter()
        hosts.append(_placement_path(ctxt, case))
        seconds.append(time.perf_counter() - started)
    return {'seconds': seconds, 'hosts': hosts}


def _cast(client, ctxt, case):
    method = case['call']
    if method in ('update_aggregates', 'delete_aggregate'):
        agg = objects.Aggregate(ctxt, id=1, **case['aggregate'])
        if method == 'update_aggregates':
            client.update_aggregates(ctxt, [agg])
        else:
            client.delete_aggregate(ctxt, agg)
    elif method == 'update_instance_info':
        instances = objects.InstanceList(objects=[
            objects.Instance(ctxt, uuid=u, host=case['host'])
            for u in case['instance_uuids']])
        client.update_instance_info(ctxt, case['host'], instances)
    elif method == 'delete_instance_info':
        client.delete_instance_info(ctxt, case['host'],
                                    case['instance_uuid'])
    else:
        client.sync_instance_info(ctxt, case['host'],
                                  case['instance_uuids'])
    return {'result': None}


def _delete_allocation(ctxt, uuid_):
    """What nova-compute does to Placement when it deletes an instance
    (``ComputeManager._delete_allocation_for_instance``)."""
    from nova.scheduler.client import report
    report.report_client_singleton().delete_allocation_for_instance(
        ctxt, uuid_)


def _pause(path):
    deadline = time.monotonic() + 60
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise RuntimeError('the test never created %s' % path)
        time.sleep(0.05)


def _host_of(answer):
    """The host an earlier case's (single) instance went to (a resize's:
    where it was moved)."""
    [first] = answer['result']
    if isinstance(first, list):
        return first[0]['fields']['service_host']
    return first['host']


def _resolve(case, done):
    """``of`` and ``instances_of``: the instances of earlier cases."""
    case = dict(case)
    if 'of' in case:
        [case['instance_uuid']] = done[case['of']]['instance_uuids']
        if case.get('call') == 'resize':
            case['source_host'] = _host_of(done[case['of']])
    if 'instances_of' in case:
        case['instance_uuids'] = [
            u for name in case['instances_of']
            for u in done[name]['instance_uuids']]
    return case


def _flavor_numbers(flavor):
    get = flavor.get if isinstance(flavor, dict) else (
        lambda name: getattr(flavor, name))
    return {name: get(name) for name in ('vcpus', 'memory_mb', 'root_gb')}


def _set(obj, name):
    """``obj.name``, or None when the field is not set."""
    return getattr(obj, name) if obj.obj_attr_is_set(name) else None


def _spec_fields(spec):
    """Key fields of a nova RequestSpec, as they went on the bus."""
    group = _set(spec, 'instance_group')
    destination = _set(spec, 'requested_destination')
    cell = destination and _set(destination, 'cell')
    return {'class': 'RequestSpec', 'version': spec.VERSION,
            'num_instances': spec.num_instances,
            'flavor': _flavor_numbers(spec.flavor),
            'availability_zone': _set(spec, 'availability_zone'),
            'group_policy': group and group.policy,
            'ignore_hosts': _set(spec, 'ignore_hosts'),
            'destination_cell': cell and cell.uuid,
            'project_id': spec.project_id}


def _legacy_fields(request_spec, filter_properties):
    """Key fields of the legacy dict pair nova sends below 4.3."""
    return {'class': 'dict', 'request_spec': sorted(request_spec),
            'filter_properties': sorted(filter_properties),
            'num_instances': request_spec['num_instances'],
            'flavor': _flavor_numbers(request_spec['instance_type']),
            'group_policies': filter_properties.get('group_policies')}


def _spec_of(args):
    if 'spec_obj' in args:
        return _spec_fields(args['spec_obj'])
    if 'request_spec' in args:
        return _legacy_fields(args['request_spec'],
                              args['filter_properties'])
    return None


def _record_sent(client, out):
    """Note the version and argument names of each message nova's
    client sends (it is not changed: its prepared context is wrapped)."""
    rpc_client = client.scheduler_rpcapi.client
    prepare = rpc_client.prepare

    def recording_prepare(**kwargs):
        cctxt = prepare(**kwargs)
        for kind in ('call', 'cast'):
            send = getattr(cctxt, kind)

            def recording(ctxt, method, _send=send, _kind=kind, **args):
                out['sent'] = {'kind': _kind, 'method': method,
                               'version': kwargs.get('version'),
                               'fanout': bool(kwargs.get('fanout')),
                               'args': sorted(args)}
                spec = _spec_of(args)
                if spec is not None:
                    out['sent']['spec'] = spec
                return _send(ctxt, method, **args)
            setattr(cctxt, kind, recording)
        return cctxt

    rpc_client.prepare = recording_prepare


def run_case(case):
    CONF.set_override('scheduler', case['pin'], group='upgrade_levels')
    client = query.SchedulerQueryClient()   # reads the version cap
    ctxt = _context()
    out = {'name': case['name'], 'pin': case['pin']}
    _record_sent(client, out)
    call = case.get('call', 'select_destinations')
    try:
        if call == 'select_destinations':
            out.update(_select(client, ctxt, case))
        elif call == 'resize':
            out.update(_resize(client, ctxt, case))
        elif call == 'delete_allocation':
            _delete_allocation(ctxt, case['instance_uuid'])
            out.update(sent=None, result=None)
        elif call == 'timed_select':
            out.update(_timed_select(client, ctxt, case))
        elif call == 'timed_placement':
            out.update(_timed_placement(ctxt, case), sent=None)
        elif call == 'pause':
            _pause(case['until'])
            out.update(sent=None, result=None)
        else:
            out.update(_cast(client, ctxt, case))
    except exception.NovaException as exc:
        out['error'] = {'module': type(exc).__module__,
                        'class': type(exc).__name__,
                        'is_no_valid_host': isinstance(
                            exc, exception.NoValidHost),
                        'kwargs': {k: str(v) for k, v in exc.kwargs.items()},
                        'message': exc.format_message()}
    return out


def main(argv):
    _configure(argv[1], argv[2], argv[4] if len(argv) > 4 else None)
    done = {}
    for case in json.loads(argv[3]):
        done[case['name']] = run_case(_resolve(case, done))
        print(json.dumps(done[case['name']], sort_keys=True, default=str),
              flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
