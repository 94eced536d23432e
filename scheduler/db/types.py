"""Column types shared by the models and the migrations.

``Timestamp`` keeps microseconds on every backend: MySQL/MariaDB's plain
DATETIME drops them, and then two reports of the same second compare equal
(so an older one could replace a newer one) and grace periods round.
"""

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql')
