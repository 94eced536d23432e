"""What a scheduler worker tells operators about itself, started with one
call once it serves: ``start(conf, endpoint, worker)``.

* its service record and heartbeat (``scheduler.db.services``), read by
  ``scheduler-manage service list``, ``scheduler-status upgrade check``
  and ``[upgrade_levels] scheduler = auto``; ``start`` returns it, and a
  clean stop calls its ``stop()`` to mark the record down;
* its Prometheus metrics endpoint (``scheduler.service.metrics_endpoint``) when
  ``[prometheus] port`` is set and the endpoint keeps a decision recorder
  (``endpoint.recorder``).

Neither may stop the worker: a failure is one warning in the log.
"""

from oslo_log import log as logging

from scheduler.service import health
from scheduler.service import metrics_endpoint
from scheduler.db import services as db_services

LOG = logging.getLogger(__name__)


def start(conf, endpoint, worker):
    """Returns the record's heartbeat, whose ``stop()`` marks it down."""
    beating = db_services.start_heartbeat(conf, endpoint.db, worker)
    try:
        metrics_endpoint.serve(conf, getattr(endpoint, 'recorder', None),
                               worker, health=health.Health(conf, endpoint))
    except OSError as exc:  # port taken: serve on, without metrics
        LOG.warning('Worker %d: no metrics endpoint on port %d: %s',
                    worker, conf.prometheus.port + worker, exc)
    return beating
