"""Scenario ``edge``: the CPU one message costs at the RPC edge, in process.

No database, no broker: a message of the bench's mix is serialized as a
client sends it, then a worker's edge handles it as the dispatcher does
(``scheduler.edge.validation.EdgeCheck``: the method's schema and the
``[limits]`` in one pass on the raw arguments, given the length of
their JSON text as the transport gives it, deserializing,
``scheduler.edge.arguments.read``; for a request also the enabled
plugins' own checks, ``scheduler.driver.plugins.RequestChecks``, with
the default filters and weighers), for ``select_destinations`` (a
RequestSpec of the mix) and ``update_resource_stats`` (a tracker's
report: as a dict of fields, and as the ComputeNode ``SchedulerClient``
sends). Reported per message, in CPU
microseconds (``time.process_time``, best of several rounds, so other load
on the machine inflates it less than wall time): deserializing and reading
alone, and the whole edge; their difference is what checking costs. A bare
oslo.messaging call costs a worker about 900-1,000 us and a cast 400-450 us
on the reference machine (``doc/source/performance-history.rst``), so the
edge's share of a message's cost is read against those. The targets are
what the hand-written checks that the schemas replaced cost on that
machine, measured the same way at commit 0aa9831 (about 100 us per request
and 40 us per report): the schemas must not cost more."""

import time
import uuid

from scheduler import conf as sched_conf
from scheduler import context as sched_context
from oslo_serialization import jsonutils
from oslo_utils import timeutils

from scheduler import objects
from scheduler.driver import plugins
from scheduler.edge import arguments
from scheduler.edge import validation
from scheduler_bench import report
from scheduler_bench import workload

NAME = 'edge'
ROUNDS, QUICK_ROUNDS = 7, 3
PER_ROUND, QUICK_PER_ROUND = 2000, 300
METHODS = ('select_destinations', 'update_resource_stats')
#: key of a message in the result: its method
MESSAGES = {'select_destinations': 'select_destinations',
            'update_resource_stats': 'update_resource_stats',
            'update_resource_stats_object': 'update_resource_stats'}
LABELS = {'update_resource_stats_object':
          'update_resource_stats (ComputeNode)'}

TARGETS = (
    report.Target('checking a select_destinations (us of CPU)',
                  ('select_destinations', 'check_us'), '<=', 100, ' us'),
    report.Target('checking a report (us of CPU)',
                  ('update_resource_stats', 'check_us'), '<=', 40, ' us'),
)


def _messages(ctxt, serializer):
    spec = workload.request_spec('m1.medium', zone='az1')
    stats = {'vcpus': 32, 'memory_mb': 131072, 'local_gb': 2000,
             'vcpus_used': 4, 'memory_mb_used': 8192, 'local_gb_used': 100,
             'availability_zone': 'az1'}
    # what SchedulerClient.update_resource_stats sends
    node = objects.ComputeNode.from_stats('host1', 'node1', stats)
    node.updated_at = timeutils.utcnow(with_timezone=True)
    raw = {'select_destinations': {
               'spec_obj': spec, 'instance_uuids': [str(uuid.uuid4())],
               'return_alternates': True},
           'update_resource_stats': {'name': ['host1', 'node1'],
                                     'stats': stats},
           'update_resource_stats_object': {'name': ['host1', 'node1'],
                                            'stats': node}}
    return {key: {name: serializer.serialize_entity(ctxt, value)
                  for name, value in args.items()}
            for key, args in raw.items()}


def _read(ctxt, serializer, method, message):
    args = {name: serializer.deserialize_entity(ctxt, value)
            for name, value in message.items()}
    return arguments.read(method, args, received=True)


def _cpu_us(work, rounds, per_round):
    """Best CPU microseconds per call of ``work()`` over ``rounds``."""
    for _ in range(per_round // 10):
        work()
    best = None
    for _ in range(rounds):
        started = time.process_time()
        for _ in range(per_round):
            work()
        spent = (time.process_time() - started) / per_round * 1e6
        best = spent if best is None else min(best, spent)
    return round(best, 1)


def run(options):
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[])
    edge = validation.EdgeCheck(conf.limits)
    plugin_checks = plugins.RequestChecks(plugins.load_filters(conf)
                                          + plugins.load_weighers(conf))
    ctxt = sched_context.RequestContext()
    serializer = objects.SchedulerObjectSerializer()
    rounds = options.pick(ROUNDS, QUICK_ROUNDS)
    per_round = options.count(PER_ROUND, QUICK_PER_ROUND)
    result = {'rounds': rounds, 'per_round': per_round}
    for key, message in _messages(ctxt, serializer).items():
        method = MESSAGES[key]
        # what the transport states of a message it read
        text_length = len(jsonutils.dumps(message))

        def read_only():
            _read(ctxt, serializer, method, message)

        def whole_edge():
            read_first = edge.check_message(method, '1.3', message,
                                            text_length)
            args = _read(ctxt, serializer, method, message)
            edge.check_arguments(method, '1.3', args, read_first)
            if method == 'select_destinations':
                plugin_checks(args['spec_obj'])
        read_us = _cpu_us(read_only, rounds, per_round)
        edge_us = _cpu_us(whole_edge, rounds, per_round)
        result[key] = {'read_us': read_us, 'edge_us': edge_us,
                       'check_us': round(max(edge_us - read_us, 0), 1)}
    return result


def render(result):
    return report.table(
        ['method', 'deserialize + read us', 'whole edge us', 'checking us'],
        [[LABELS.get(key, key), result[key]['read_us'],
          result[key]['edge_us'], result[key]['check_us']]
         for key in MESSAGES if key in result])


def draw(pyplot, result):
    figure, axis = pyplot.subplots(figsize=(6, 4))
    axis.bar(METHODS, [result[m]['read_us'] for m in METHODS],
             label='deserialize + read')
    axis.bar(METHODS, [result[m]['check_us'] for m in METHODS],
             bottom=[result[m]['read_us'] for m in METHODS],
             label='checking')
    axis.set_ylabel('CPU us per message')
    axis.set_title('the RPC edge')
    axis.legend()
    return figure
