"""The claim routine's SQL is compiled from the transaction path's own
statements (``scheduler.db.claim_routine``): checked without a database."""

import pytest
import sqlalchemy as sa

from scheduler.db import claim_routine
from scheduler.db import claim_routines
from scheduler.db import models


def test_the_body_holds_the_fit_rule_and_no_unbound_parameter():
    body = claim_routine.BODY
    assert '%(' not in body and 'POSTCOMPILE' not in body
    # fit.sql_fits, per row: capacity for both usages, the unit rules
    for term in ('inventories.claimed + _a[i_] <= inventories.capacity',
                 'inventories.reported_used + _a[i_] <= '
                 'inventories.capacity',
                 'inventories.min_unit <= coalesce(_lo[i_], _a[i_])',
                 'inventories.max_unit >= coalesce(_hi[i_], _a[i_])',
                 'inventories.step_size'):
        assert term in body, term
    # the one lock, which bumps nothing: the stamp bumps the generation,
    # and a way out that writes nothing has nothing to undo
    assert body.count('FOR NO KEY UPDATE') == 1
    assert body.count('generation=(providers.generation + 1)') == 1
    assert 'providers.generation - 1' not in body
    assert body.index('FOR NO KEY UPDATE') < body.index(
        'generation=(providers.generation + 1)')
    assert 'providers.id = ANY(_ids)' in body


def test_the_name_follows_the_body():
    assert claim_routine.NAME.startswith('scheduler_claim_')
    assert claim_routine.NAME in claim_routine.definition()
    assert 'enable_seqscan = off' in claim_routine.definition()
    assert 'plan_cache_mode = force_generic_plan' in \
        claim_routine.definition()


def test_a_parameter_without_a_variable_is_refused():
    statement = sa.update(models.providers).values(
        host=sa.bindparam('host', type_=sa.String))
    with pytest.raises(ValueError, match='host'):
        claim_routine._plpgsql(statement, {})
    text = claim_routine._plpgsql(statement, {'host': '_host'})
    assert text == 'UPDATE providers SET host=_host'


def test_sqlite_has_no_routine(conf, tmp_path):
    from scheduler.db import api as db_api
    database = db_api.Database(conf, 'sqlite:///%s' % (tmp_path / 'x.db'))
    try:
        assert claim_routine.install(database) is False
        assert claim_routines.of(database) is None
        assert claim_routines.install(database) is False
        assert claim_routines.installed(database)
        assert claim_routines.name(database) is None
    finally:
        database.dispose()
