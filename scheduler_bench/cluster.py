"""Benchmark clusters: a fresh database, bulk-populated, audited, dropped.

``BenchDatabase(kind, admin_url=None)`` creates a uniquely named database
(``bench_<hex>``) on the local PostgreSQL or MariaDB server (or the one
``admin_url`` names: ``scheduler-bench --db-url``), or a SQLite file in a
temporary directory, and ``drop()`` removes it. ``populate(db, hosts,
...)`` writes N providers with their inventories (and, for a pre-used
cluster, one allocation per host holding the used amounts) with SQLAlchemy
Core executemany in chunks, about 100k hosts in seconds rather than the
hours 100k ``update_resource_stats`` calls would take.

The rows follow the schema's rules (``scheduler.db.models``):

* each chunk is one transaction that bumps ``change_counter`` and stamps
  its providers with the new value, so ``change_seq`` never runs ahead of
  the counter and workers that refresh later miss nothing;
* ``capacity`` is what ``inventories_from_node`` computes from the
  tracker's numbers; ``claimed`` is the sum of the allocations written;
* explicit provider ids are used (inventories refer to them), so the
  PostgreSQL sequence is moved past them afterwards;
* the planner statistics are refreshed at the end, as a live database
  would have them.

``audit(db)`` counts overcommitted inventories from the database truth.
"""

import json
import os
import shutil
import tempfile
import uuid

import numpy as np
import sqlalchemy as sa
from oslo_utils import timeutils
from oslo_utils import uuidutils

from scheduler import objects
from scheduler.model import resource_classes as rcs
from scheduler_bench import workload
from scheduler.db import models
from scheduler.db import providers as db_providers

ADMIN_URLS = {
    'postgresql': 'postgresql+psycopg2://postgres@127.0.0.1:5432/test',
    'mariadb': 'mysql+pymysql://root@127.0.0.1:3306/test',
}
KINDS = ('postgresql', 'mariadb', 'sqlite')
CHUNK = 5000

# allocation ratios of the [scheduler] defaults (hosts report none)
RATIOS = {rcs.VCPU: 4.0, rcs.MEMORY_MB: 1.0, rcs.DISK_GB: 1.0}
# ComputeNode fields the providers table keeps in columns, not attributes
_COLUMN_FIELDS = {'uuid', 'host', 'hypervisor_hostname', 'disabled',
                  'availability_zone', 'updated_at'}


class BenchDatabase:
    """One fresh database; use as a context manager or call drop()."""

    def __init__(self, kind, admin_url=None):
        if kind not in KINDS:
            raise ValueError('unknown database kind %r (choose from %s)' %
                             (kind, ', '.join(KINDS)))
        self.kind = kind
        self.admin_url = admin_url or ADMIN_URLS.get(kind)
        self.name = 'bench_%s' % uuid.uuid4().hex[:12]
        self._tmpdir = None
        self.url = self._create()

    def _admin(self):
        return sa.create_engine(self.admin_url,
                                isolation_level='AUTOCOMMIT')

    def _create(self):
        if self.kind == 'sqlite':
            self._tmpdir = tempfile.mkdtemp(prefix='scheduler-bench-')
            return 'sqlite:///' + os.path.join(self._tmpdir, 'bench.sqlite')
        engine = self._admin()
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql('CREATE DATABASE %s' % self.name)
        finally:
            engine.dispose()
        base = self.admin_url.rsplit('/', 1)[0]
        suffix = '?charset=utf8mb4' if self.kind == 'mariadb' else ''
        return '%s/%s%s' % (base, self.name, suffix)

    def drop(self):
        if self.kind == 'sqlite':
            if self._tmpdir:
                shutil.rmtree(self._tmpdir, ignore_errors=True)
                self._tmpdir = None
            return
        force = ' WITH (FORCE)' if self.kind == 'postgresql' else ''
        engine = self._admin()
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql('DROP DATABASE IF EXISTS %s%s' %
                                     (self.name, force))
        finally:
            engine.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.drop()


class Population:
    """What ``populate`` wrote: per-row arrays in provider-id order.

    Row ``i`` is provider id ``i + 1``. ``capacity``, ``used``,
    ``min_unit`` and ``max_unit`` map a resource class to an int64 array;
    ``zones`` is an array of zone names.
    """

    def __init__(self, hosts):
        self.hosts = hosts
        self.uuids = []
        self.zones = np.empty(hosts, dtype=object)
        self.capacity = {rc: np.zeros(hosts, np.int64) for rc in rcs.STANDARD}
        self.used = {rc: np.zeros(hosts, np.int64) for rc in rcs.STANDARD}
        self.min_unit = {rc: np.ones(hosts, np.int64) for rc in rcs.STANDARD}
        self.max_unit = {rc: np.zeros(hosts, np.int64) for rc in rcs.STANDARD}


def _templates():
    """Per host shape: inventories and attributes as a tracker sends them."""
    templates = []
    for index, (vcpus, memory_mb, local_gb) in enumerate(
            workload.HOST_SHAPES):
        node = objects.ComputeNode.from_stats('template', 'template', {
            'vcpus': vcpus, 'memory_mb': memory_mb, 'local_gb': local_gb,
            'hypervisor_type': 'QEMU', 'hypervisor_version': 8002000,
            'cpu_info': json.dumps({'arch': 'x86_64', 'model': 'Icelake',
                                    'topology': {'sockets': 2}}),
            'host_ip': '192.0.2.%d' % (index + 1),
            'supported_instances': [['x86_64', 'qemu', 'hvm']],
            'stats': {'num_instances': '0', 'io_workload': '0'}})
        data = node.obj_to_primitive()['%s.data' % node.OBJ_SERIAL_NAMESPACE]
        attributes = {k: v for k, v in data.items()
                      if k not in _COLUMN_FIELDS}
        templates.append(
            (db_providers.inventories_from_node(node, RATIOS), attributes))
    return templates


def _host_used(capacity, fraction):
    return {rc: int(capacity[rc] * fraction) for rc in rcs.STANDARD}


def _rows(first, last, seq, now, templates, fractions, population):
    providers, inventories, allocations = [], [], []
    for i in range(first, last):
        shape = i % len(templates)
        inv_template, attr_template = templates[shape]
        capacity = {rc: inv_template[rc]['capacity'] for rc in rcs.STANDARD}
        used = _host_used(capacity, fractions[i])
        attributes = dict(attr_template, vcpus_used=used[rcs.VCPU],
                          memory_mb_used=used[rcs.MEMORY_MB],
                          local_gb_used=used[rcs.DISK_GB],
                          running_vms=1 if any(used.values()) else 0)
        provider_uuid = uuidutils.generate_uuid()
        zone = workload.zone_of(i)
        providers.append({
            'id': i + 1, 'uuid': provider_uuid,
            'host': workload.host_name(i),
            'nodename': workload.host_name(i), 'kind': 'compute',
            'generation': 0, 'change_seq': seq, 'disabled': False,
            'availability_zone': zone, 'reported_at': now,
            'created_at': now,
            'attributes': json.dumps(attributes, sort_keys=True)})
        population.uuids.append(provider_uuid)
        population.zones[i] = zone
        consumer = uuidutils.generate_uuid()
        for rc in rcs.STANDARD:
            inv = dict(inv_template[rc], provider_id=i + 1,
                       reported_used=used[rc], claimed=used[rc])
            inventories.append(inv)
            population.capacity[rc][i] = inv['capacity']
            population.used[rc][i] = used[rc]
            population.min_unit[rc][i] = inv['min_unit']
            population.max_unit[rc][i] = inv['max_unit']
            if used[rc]:
                allocations.append({
                    'consumer_uuid': consumer, 'provider_id': i + 1,
                    'resource_class': rc, 'amount': used[rc],
                    'created_at': now, 'confirmed_at': now})
    return providers, inventories, allocations


def populate(db, hosts, used=0.0, jitter=0.0, seed=1, progress=None):
    """Write ``hosts`` providers; returns a ``Population``.

    Each host is ``used`` (0..1) full on every resource class, give or take
    a uniform ``jitter``; a used host holds one allocation (an existing
    instance) with those amounts, so ``claimed`` equals the allocations
    and the tracker-reported usage.
    """
    rng = np.random.default_rng(seed)
    fractions = np.clip(used + jitter * rng.uniform(-1, 1, hosts), 0, 1)
    templates = _templates()
    population = Population(hosts)
    now = timeutils.utcnow().replace(microsecond=0)
    engine = db.engine
    for first in range(0, hosts, CHUNK):
        last = min(first + CHUNK, hosts)
        with engine.begin() as conn:
            # a fresh database has no other writer: bumping the counter
            # first and stamping the new rows with it keeps its invariant
            seq = _bump_counter(conn)
            providers, inventories, allocations = _rows(
                first, last, seq, now, templates, fractions, population)
            conn.execute(sa.insert(models.providers), providers)
            conn.execute(sa.insert(models.inventories), inventories)
            if allocations:
                conn.execute(sa.insert(models.allocations), allocations)
        if progress is not None:
            progress.update(last - first)
    if engine.dialect.name == 'postgresql':
        with engine.begin() as conn:
            conn.exec_driver_sql(
                "SELECT setval(pg_get_serial_sequence('providers', 'id'), "
                "(SELECT max(id) FROM providers))")
    analyze(db)
    return population


def analyze(db):
    """Refresh the planner statistics after a bulk load.

    A live database has them (autovacuum, InnoDB's automatic statistics);
    right after a bulk insert it may not, and PostgreSQL then plans the
    refresh query (``change_seq > :since``) as a full scan.
    """
    tables = ('providers', 'inventories', 'allocations')
    with db.engine.begin() as conn:
        if db.engine.dialect.name == 'mysql':
            conn.exec_driver_sql('ANALYZE TABLE %s' % ', '.join(tables))
        else:
            for table in tables:
                conn.exec_driver_sql('ANALYZE %s' % table)


def audit(db):
    """Overcommit and bookkeeping errors, from the database truth.

    ``overcommitted``: inventories whose allocations add up to more than
    their capacity, or whose claimed counter does; ``claimed_mismatch``:
    inventories whose ``claimed`` is not the sum of their allocations.
    The sums are added up here rather than joined in SQL, which MariaDB
    plans badly (a derived table without an index).
    """
    inv, alloc = models.inventories, models.allocations
    with db.engine.connect() as conn:
        sums = {(r.provider_id, r.resource_class): int(r.total)
                for r in conn.execute(
                    sa.select(alloc.c.provider_id, alloc.c.resource_class,
                              sa.func.sum(alloc.c.amount).label('total'))
                    .group_by(alloc.c.provider_id, alloc.c.resource_class))}
        rows = conn.execute(sa.select(
            inv.c.provider_id, inv.c.resource_class, inv.c.capacity,
            inv.c.claimed)).all()
        allocations = conn.execute(
            sa.select(sa.func.count()).select_from(alloc)).scalar_one()
    overcommitted = mismatch = 0
    for row in rows:
        allocated = sums.get((row.provider_id, row.resource_class), 0)
        if allocated > row.capacity or row.claimed > row.capacity:
            overcommitted += 1
        if allocated != row.claimed:
            mismatch += 1
    return {'inventories': len(rows), 'overcommitted': overcommitted,
            'claimed_mismatch': mismatch,
            'allocation_rows': int(allocations)}


def _bump_counter(conn):
    counter = models.change_counter
    conn.execute(sa.update(counter).where(counter.c.id == 1)
                 .values(value=counter.c.value + 1))
    return conn.execute(sa.select(counter.c.value)
                        .where(counter.c.id == 1)).scalar_one()


def change_seq(db):
    """The global change counter (bumped once per write transaction)."""
    counter = models.change_counter
    with db.engine.connect() as conn:
        return conn.execute(sa.select(counter.c.value)
                            .where(counter.c.id == 1)).scalar_one()


def utilization(db):
    """Claimed share of the cluster's capacity, per resource class."""
    inv = models.inventories
    query = (sa.select(inv.c.resource_class, sa.func.sum(inv.c.claimed),
                       sa.func.sum(inv.c.capacity))
             .group_by(inv.c.resource_class))
    with db.engine.connect() as conn:
        return {rc: round(float(used) / float(cap), 4)
                for rc, used, cap in conn.execute(query)}
