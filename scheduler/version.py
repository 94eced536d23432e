"""What this code is: its release and the RPC API version it speaks.

``release()`` (e.g. ``0.2.0``) is read from the installed distribution's
metadata (pbr derives it from git tags at build time), so every console
script's ``--version``, the service records and ``scheduler-status``
agree on one string.

``RPC_API_VERSION`` is the newest RPC API version of this code: what the
server's ``Target`` accepts, what a worker's service record says, what an
uncapped client may send. Its history is the docstring of
``scheduler.client.rpcapi``.
"""

from importlib import metadata

DISTRIBUTION = 'openstack-scheduler'
RPC_API_VERSION = '1.3'


def release():
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # run from a bare checkout
        return 'unknown'
