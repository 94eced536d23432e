"""The library other services import to talk to the scheduler.

Example::

    from oslo_config import cfg
    from scheduler.client import SchedulerClient
    from scheduler.context import RequestContext

    conf = cfg.ConfigOpts()
    conf(['--config-file', '/etc/conductor/conductor.conf'])
    client = SchedulerClient(conf)
    # conductors and trackers send the service role (scheduler.edge.policy)
    ctxt = RequestContext(user_id='conductor', project_id='service',
                          roles=['service'])
    client.update_resource_stats(ctxt, ('host1', 'node1'),
                                 {'vcpus': 32, 'memory_mb': 131072,
                                  'local_gb': 2000})
    dests = client.select_destinations(
        ctxt, {'instance_type': {'vcpus': 2, 'memory_mb': 4096,
                                 'root_gb': 20}, 'num_instances': 1})
    dests[0][0].host    # 'host1'

The client registers the options it needs on the ``conf`` it is given;
there is no global configuration.
"""

from scheduler.client.client import SchedulerClient  # noqa: F401
