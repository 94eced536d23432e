"""The release this code is: ``release()`` (e.g. ``0.2.0``).

Read from the installed distribution's metadata (pbr derives it from git
tags at build time), so every console script's ``--version``, the service
records and ``scheduler-status`` agree on one string.
"""

from importlib import metadata

DISTRIBUTION = 'openstack-scheduler'


def release():
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # run from a bare checkout
        return 'unknown'
