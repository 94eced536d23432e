"""Engine settings made on top of oslo.db's engine (scheduler.db.api)."""

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import psycopg2

from scheduler.db import api as db_api


def test_psycopg2_sends_an_executemany_in_pages():
    # no connection is made: the dialect alone is configured
    engine = sa.create_engine('postgresql+psycopg2://nobody@127.0.0.1/x')
    assert engine.dialect.executemany_mode is psycopg2.EXECUTEMANY_VALUES
    db_api.batch_executemany(engine)
    assert (engine.dialect.executemany_mode
            is psycopg2.EXECUTEMANY_VALUES_PLUS_BATCH)
    assert engine.dialect.supports_sane_multi_rowcount is False
