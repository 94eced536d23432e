"""Transport, serializer and RPC server set-up (oslo.messaging).

Every transport allows ``scheduler.exception`` as a remote exception
module, so callers catch ``scheduler.exception.NoValidHost`` itself.
``EMBEDDED_TRANSPORT_URL`` is the in-process default of the simulator and
of unit tests: the rabbit driver over kombu's in-memory transport. It only
reaches servers of the same process.
"""

import oslo_messaging

from scheduler import conf as sched_conf
from scheduler import objects

ALLOWED_EXMODS = ['scheduler.exception']
EMBEDDED_TRANSPORT_URL = 'kombu+memory:////'


def get_transport(conf, url=None):
    sched_conf.messaging.register_opts(conf)
    return oslo_messaging.get_rpc_transport(
        conf, url=url, allowed_remote_exmods=ALLOWED_EXMODS)


def get_serializer():
    return objects.SchedulerObjectSerializer()


def get_server(conf, transport, endpoints):
    """An RPC server on ``[scheduler] topic`` with the threading executor.

    The server name is ``[DEFAULT] host``; calls without a server go to
    whichever worker of any scheduler takes them from the shared queue.
    """
    target = oslo_messaging.Target(topic=conf.scheduler.topic,
                                   server=conf.host)
    return oslo_messaging.get_rpc_server(
        transport, target, endpoints, executor='threading',
        serializer=get_serializer())
