"""Placement 16.0.0 as a real WSGI service on 127.0.0.1, for functional tests.

The service itself is ``scheduler_bench.placement_server`` (shared with
``scheduler-bench nova_path``): Placement from the side virtualenv
``.nova-venv``, a SQLite file of its own, ``noauth2``, ``wsgiref`` on a
free port. ``running(workdir)`` yields a ``PlacementService``::

    with placement_service.running(tmp_path) as placement:
        placement.request('POST', '/resource_providers', {'name': 'cn1'})

Without placement in the side virtualenv it skips, saying how to install
it; with ``CI=true`` it fails instead. ``request`` speaks plain HTTP as
nova-compute's report client does, with the noauth2 token ``admin``.
"""

import contextlib
import os

import pytest

from scheduler_bench import placement_server

PlacementService = placement_server.PlacementService


def require_placement():
    """Skip (or, with ``CI=true``, fail) unless placement is installed."""
    python = placement_server.placement_python()
    if python is not None:
        return python
    why = ('openstack-placement 16.0.0 is missing from %s; install it '
           'with: %s' % (placement_server.VENV.parent,
                         placement_server.INSTALL))
    if os.environ.get('CI') == 'true':
        pytest.fail(why, pytrace=False)
    pytest.skip(why)


@contextlib.contextmanager
def running(workdir):
    """Placement on a fresh database, up until the block ends."""
    with placement_server.running(workdir, require_placement()) as service:
        yield service
