"""A conductor that imports the client library pays for nothing of the
server: no numpy, no SQLAlchemy, no driver, database or host-state code.

Checked in a fresh interpreter, since this test process has loaded all of
them already."""

import json
import subprocess
import sys

# top-level packages, and scheduler modules, the client must not load
FORBIDDEN_PACKAGES = ('numpy', 'sqlalchemy', 'alembic')
FORBIDDEN_MODULES = ('scheduler.db', 'scheduler.driver', 'scheduler.manager',
                     'scheduler.host_state', 'scheduler.filters',
                     'scheduler.weighers', 'scheduler.db.claims',
                     'scheduler.service.report_writer',
                     'scheduler.service.composition')

PROBE = '''
import json, sys
import scheduler.client
client = scheduler.client.SchedulerClient
print(json.dumps(sorted(sys.modules)))
'''


def _loaded_by_client():
    out = subprocess.run([sys.executable, '-c', PROBE], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def _forbidden(name):
    return (name.split('.')[0] in FORBIDDEN_PACKAGES or any(
        name == m or name.startswith(m + '.') for m in FORBIDDEN_MODULES))


def test_importing_the_client_loads_no_server_module():
    loaded = _loaded_by_client()
    assert 'scheduler.client' in loaded and 'scheduler.client.rpcapi' in loaded
    assert [m for m in loaded if _forbidden(m)] == []


def test_the_check_would_see_a_server_module():
    assert _forbidden('numpy.core') and _forbidden('scheduler.db.api')
    assert _forbidden('scheduler.manager')
    assert not _forbidden('scheduler.model.names')
