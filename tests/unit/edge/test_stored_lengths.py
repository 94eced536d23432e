"""Every string the database keeps is bounded at the RPC edge by its
column's length: a longer one is an ``InvalidField`` naming the field,
never a database error (``StringDataRightTruncation`` on PostgreSQL,
"Data too long" on MariaDB) after the message was accepted.

``BOUNDED`` says, for every column of a bounded string type, how its
value is bounded before it reaches the database; a new column fails
``test_every_bounded_column_is_accounted_for`` until it is added there.
The values mix letters and combining accents, as the fuzzing's did: the
edge and the databases count code points, not bytes or glyphs.
"""

import pytest
import sqlalchemy as sa

from scheduler.db import models
from scheduler.db import services
from scheduler import exception
from scheduler import objects
from scheduler.service import composition
from tests.unit.edge import edge

UUID = '6f1a0b3c-2d4e-4f60-8a1b-2c3d4e5f6a7b'


def _accented(length):
    """``length`` code points: letters, each with a combining accent."""
    return ('e\u0301' * length)[:length]


def _report(**stats):
    return {'name': 'h1', 'stats': dict(
        {'vcpus': 4, 'memory_mb': 1024, 'local_gb': 10}, **stats)}


def _instance(**fields):
    return {'host': 'h1', 'instance_info': [
        objects.InstanceInfo(uuid=UUID, **fields)]}


def _group_spec(uuid):
    return {'spec_obj': objects.RequestSpec(
        flavor=objects.Flavor(vcpus=1, memory_mb=512, root_gb=0,
                              ephemeral_gb=0, swap=0),
        instance_group=objects.InstanceGroup(uuid=uuid, policy='affinity'))}


#: column -> (method, arguments carrying ``value``, the field named), the
#: edge's own bound of free strings the database keeps
EDGE_BOUND = {
    'providers.uuid': ('update_resource_stats',
                       lambda v: _report(uuid=v), 'stats.uuid'),
    'instances.node': ('update_instance_info',
                       lambda v: _instance(node=v),
                       'instance_info[0].node'),
    'instances.project_id': ('update_instance_info',
                             lambda v: _instance(project_id=v),
                             'instance_info[0].project_id'),
    'instances.group_uuid': ('update_instance_info',
                             lambda v: _instance(group_uuid=v),
                             'instance_info[0].group_uuid'),
    'instance_groups.uuid': ('select_destinations', _group_spec,
                             'spec_obj.instance_group.uuid'),
}

#: columns bounded otherwise: a rule of their own at the edge (names,
#: resource classes, kinds, UUIDs, an enum) or written by the server only
BOUNDED_ELSEWHERE = {
    'providers.host': 'name rule (scheduler.model.names, 255)',
    'providers.nodename': 'name rule',
    'providers.kind': 'providerKind keyword (32)',
    'providers.availability_zone': 'name rule',
    'inventories.resource_class': 'resource class rule (255)',
    'allocations.consumer_uuid': 'UUID format',
    'allocations.resource_class': 'resource class rule',
    'aggregates.uuid': 'UUID format',
    'aggregates.name': 'name rule',
    'instances.uuid': 'UUID format',
    'instances.host': 'name rule',
    'instance_groups.policy': 'enum of policies',
    'group_members.group_uuid': 'instance_groups.uuid',
    'group_members.consumer_uuid': 'UUID format',
    'group_members.host': 'a host of the providers table',
    'services.host': 'written by the server',
    'services.binary': 'written by the server',
    'services.release': 'written by the server',
    'services.rpc_version': 'written by the server',
}


def _bounded_columns():
    tables = list(models.metadata.tables.values()) + [services.SERVICES]
    return {'%s.%s' % (table.name, column.name): column
            for table in tables for column in table.columns
            if isinstance(column.type, sa.String) and column.type.length}


def test_every_bounded_column_is_accounted_for():
    columns = set(_bounded_columns())
    assert columns == set(EDGE_BOUND) | set(BOUNDED_ELSEWHERE)
    assert not set(EDGE_BOUND) & set(BOUNDED_ELSEWHERE)


@pytest.fixture
def manager(conf, db):
    manager = composition.build_manager(conf, db)
    yield manager
    manager.stop()


@pytest.mark.parametrize('column', sorted(EDGE_BOUND))
def test_one_character_too_many_is_refused_at_the_edge(manager, column):
    method, make, field = EDGE_BOUND[column]
    length = _bounded_columns()[column].type.length
    with pytest.raises(exception.InvalidField) as refused:
        edge.send(manager, method, cast=False,
                  **make(_accented(length + 1)))
    assert refused.value.kwargs['field'] == field
    # as many as the column holds pass the edge
    try:
        edge.send(manager, method, cast=False, **make(_accented(length)))
    except exception.InvalidField as exc:  # pragma: no cover - a failure
        pytest.fail('%s of %d characters refused: %s' % (field, length, exc))
    except exception.NoValidHost:
        pass    # a request on an empty cloud: the edge let it through
