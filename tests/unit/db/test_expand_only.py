"""Migrations since the previous release only add (expand): that release
runs on the migrated schema during a rolling upgrade, so dropping,
renaming or altering what it reads waits until the release after next.

The previous release is the one named in
``tests/functional/previous_release.py``; its migrations are read from
this repository's history.
"""

import pathlib
import re
import subprocess

from tests.functional import previous_release

ROOT = pathlib.Path(__file__).resolve().parents[3]
VERSIONS = 'scheduler/db/migrations/versions'
CONTRACTING = re.compile(r'\bop\.(drop_\w+|alter_column|rename_table)\b')
#: migrations whose alter_column only widens a type, with the reason the
#: previous release runs on the result unchanged
WIDENING = {
    '0006_long_text.py': 'TEXT to LONGTEXT on MySQL/MariaDB only: the '
                         'same strings are read and written',
}


def _previous_migrations():
    listing = subprocess.run(
        ['git', 'ls-tree', '--name-only', previous_release.PREVIOUS_RELEASE,
         VERSIONS + '/'], cwd=ROOT, check=True, capture_output=True,
        text=True).stdout
    return {pathlib.Path(line).name for line in listing.split()}


def test_new_migrations_only_add():
    previous = _previous_migrations()
    assert '0001_initial.py' in previous
    new = sorted(p for p in (ROOT / VERSIONS).glob('0*.py')
                 if p.name not in previous)
    for path in new:
        upgrade = path.read_text().split('def upgrade', 1)[-1]
        upgrade = upgrade.split('\ndef downgrade', 1)[0]
        found = CONTRACTING.findall(upgrade)
        if path.name in WIDENING:
            found = [op for op in found if op != 'alter_column']
        assert not found, '%s contracts the schema (%s) while the previous ' \
            'release may still run on it' % (path.name, ', '.join(found))
