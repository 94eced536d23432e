"""Two reports of one host stamped within the same second, microseconds
apart, are applied in order: the later one wins, whichever arrives first
(real scheduler-server, RabbitMQ, each database).

The stamp is the tracker's ``updated_at``; it must keep its microseconds
on the wire and in the database, or the two reports compare equal and the
second to arrive is dropped as "not newer". A stamp ahead of the worker's
clock (within ``max_clock_skew``) counts as the worker's now: the next
report of a correct clock still wins (doc/source/ordering.rst).
"""

import datetime

import pytest
import sqlalchemy as sa

from scheduler.db import models
from tests.functional import databases
from tests.functional import db_state
from tests.functional import shared_broker
from tests.functional import workload

STATS = {'vcpus': 16, 'memory_mb': 32768, 'local_gb': 500,
         'cpu_allocation_ratio': 1.0, 'ram_allocation_ratio': 1.0,
         'disk_allocation_ratio': 1.0}
P, INV = models.providers, models.inventories


def _stored(server, host):
    """(vcpus used, reported_at) as stored for ``host``, or None."""
    query = (sa.select(INV.c.reported_used, P.c.reported_at)
             .join(P, P.c.id == INV.c.provider_id)
             .where(P.c.host == host, INV.c.resource_class == 'VCPU'))
    with server.engine.connect() as conn:
        row = conn.execute(query).first()
    return None if row is None else (row[0], row[1])


def _report(client, host, used, stamp):
    client.update_resource_stats(workload.context(), host,
                                 dict(STATS, vcpus_used=used,
                                      updated_at=stamp))


def _wait_used(server, host, used):
    return db_state.wait_for(
        lambda: (lambda s: s if s and s[0] == used else None)(
            _stored(server, host)), 20,
        '%s to show vcpus_used=%d' % (host, used))


@pytest.mark.parametrize('backend', databases.BACKENDS)
def test_reports_within_one_second_are_applied_in_order(scheduler):
    server = scheduler(workers=2)
    client = server.client()
    # a second in the past: a stamp ahead of the worker's clock would be
    # clamped to it, microseconds and all
    second = (datetime.datetime.now(datetime.timezone.utc)
              - datetime.timedelta(seconds=2)).replace(microsecond=500000)
    older = second + datetime.timedelta(microseconds=1)
    newer = second + datetime.timedelta(microseconds=4)

    # in order: the later report replaces the earlier one
    _report(client, 'order-forward', 1, older)
    _wait_used(server, 'order-forward', 1)
    _report(client, 'order-forward', 2, newer)
    used, stamp = _wait_used(server, 'order-forward', 2)
    assert stamp.replace(tzinfo=None) == newer.replace(tzinfo=None)

    # reversed: the older report, arriving last, changes nothing
    _report(client, 'order-reversed', 2, newer)
    _wait_used(server, 'order-reversed', 2)
    _report(client, 'order-reversed', 1, older)
    # every report handled (acknowledged once committed, or dropped):
    # the older one had its turn too
    _report(client, 'order-marker', 1, older)
    _wait_used(server, 'order-marker', 1)
    db_state.wait_for(lambda: shared_broker.drained(server.report_topic),
                      30, 'every report handled')
    used, stamp = _stored(server, 'order-reversed')
    assert used == 2
    assert stamp.replace(tzinfo=None) == newer.replace(tzinfo=None)

    _check_a_report_from_the_future_does_not_freeze_its_host(server, client)


def _check_a_report_from_the_future_does_not_freeze_its_host(server,
                                                             client):
    now = datetime.datetime.now(datetime.timezone.utc)
    _report(client, 'order-ahead', 1, now + datetime.timedelta(seconds=290))
    _wait_used(server, 'order-ahead', 1)
    _report(client, 'order-ahead', 2, datetime.datetime.now(
        datetime.timezone.utc))
    used, stamp = _wait_used(server, 'order-ahead', 2)
    assert stamp.replace(tzinfo=None) <= datetime.datetime.now(
        datetime.timezone.utc).replace(tzinfo=None)
