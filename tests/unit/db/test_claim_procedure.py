"""MariaDB's claim procedure is compiled from the transaction path's own
statements (``scheduler.db.claim_procedure``): checked without a
database."""

import pytest
import sqlalchemy as sa

from scheduler.db import claim_procedure
from scheduler.db import claim_routine
from scheduler.db import models


def test_the_body_holds_the_transaction_path_statements_in_order():
    body = claim_procedure.BODY
    assert '%(' not in body and 'POSTCOMPILE' not in body
    order = [
        # the probe, before the lock, on the consumer index
        'WHERE allocations.consumer_uuid = c_',
        # the lock's UPDATE, one provider at a time by its key
        'UPDATE providers SET generation=(providers.generation + 1) '
        'WHERE providers.id = id_',
        # the fit rule of fit.sql_fits, per row
        'inventories.claimed + a_ <= inventories.capacity',
        'INSERT INTO allocations',
        'seq=last_insert_id(change_stripes.seq + 1)',
        'SET seq_ = LAST_INSERT_ID()',
        'UPDATE providers SET feed_stripe=_stripe, feed_seq=seq_ '
        'WHERE providers.id = id_',
    ]
    # the probe is a consistent read (SELECT ... INTO), as the transaction
    # path's: a SET from a subquery would take shared next-key locks
    assert 'AS held INTO held_;' in body and 'SET held_' not in body
    # the locals compared with columns are typed as those columns
    assert 'DECLARE c_ TYPE OF allocations.consumer_uuid;' in body
    assert 'DECLARE rc_ TYPE OF inventories.resource_class;' in body
    at = [body.index(term) for term in order]
    assert at == sorted(at), order
    for term in ('inventories.reported_used + a_ <= inventories.capacity',
                 'inventories.min_unit <= lo_',
                 'inventories.max_unit >= hi_', 'g_ % CASE'):
        assert term in body, term
    # every outcome but success is answered, by its value
    for outcome, value in claim_routine.OUTCOMES.items():
        assert 'SELECT %d;' % value in body, outcome
    assert 'SELECT %d;' % claim_routine.SUCCESS not in body


def test_the_name_follows_the_body_and_it_runs_as_its_caller():
    definition = claim_procedure.definition()
    assert claim_procedure.NAME.startswith('scheduler_claim_')
    assert claim_procedure.NAME != claim_routine.NAME
    # never replaced under running workers: one there is this one
    assert definition.startswith(
        'CREATE PROCEDURE %s(' % claim_procedure.NAME)
    assert 'SQL SECURITY INVOKER' in definition


def test_a_parameter_without_a_variable_is_refused():
    statement = sa.update(models.providers).values(
        host=sa.bindparam('host', type_=sa.String))
    with pytest.raises(ValueError, match='host'):
        claim_procedure._mysql(statement, {})
    assert claim_procedure._mysql(statement, {'host': 'h_'}) == \
        'UPDATE providers SET host=h_'
