"""Column types shared by the models and the migrations.

``Timestamp`` keeps microseconds on every backend: MySQL/MariaDB's plain
DATETIME drops them, and then two reports of the same second compare equal
(so an older one could replace a newer one) and grace periods round.

``LongText`` holds any text the RPC edge lets through: MySQL/MariaDB's
plain TEXT stops at 64 KiB, and an aggregate's hosts (up to ``[limits]
max_list_length`` names of 255 characters: about 25 MiB) or a report's
attributes can be longer; it is LONGTEXT there, TEXT elsewhere.
"""

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql')
LongText = sa.Text().with_variant(mysql.LONGTEXT(), 'mysql')
