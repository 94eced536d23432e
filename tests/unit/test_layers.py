"""The layers of the package, held by a test: a table of "A never imports B".

Each key of ``NEVER_IMPORTS`` is a folder of ``scheduler/`` (or a
top-level module, or ``scheduler_bench``); its value lists what no module
of it may import, at module level or inside a function: other folders of
the package, and third-party packages that would break the folder's
contract (a pure rule that opens a database connection, a client that
loads numpy). The table is the architecture page's layer diagram
(``doc/source/architecture.rst``) in a form a test can hold; change both
together, and only to remove a line, not to allow a new dependency
upwards.

Only ``import`` statements count, so a name in a docstring or a string is
no dependency.
"""

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# no database connection, RPC or thread in a pure rule; SQLAlchemy's
# expression language is allowed (``model.fit.sql_fits`` is the fit rule's
# SQL form, beside its numpy form, so the claim re-checks the filters' own
# rule), never an engine (oslo_db) or a migration
_PURE = ('oslo_db', 'alembic', 'oslo_messaging', 'kombu', 'threading',
         'multiprocessing')
_SERVER = ('db', 'driver', 'host_state', 'filters', 'weighers', 'manager',
           'service', 'cmd')

#: layer -> what it never imports (layers are folders of ``scheduler/``,
#: its top-level modules by name, and ``bench`` for ``scheduler_bench``)
NEVER_IMPORTS = {
    # pure rules: no database, RPC, threads, or anything above them
    'model': ('db', 'rpc', 'edge', 'service', 'driver', 'host_state',
              'filters', 'weighers', 'manager', 'client', 'cmd', 'conf',
              'bench')
    + _PURE,
    # data and compatibility only: persistence lives in db/
    'objects': ('db', 'rpc', 'edge', 'service', 'driver', 'host_state',
                'filters', 'weighers', 'manager', 'client', 'cmd', 'bench',
                'sqlalchemy', 'oslo_db'),
    'conf': ('model', 'objects', 'db', 'rpc', 'edge', 'service', 'driver',
             'host_state', 'filters', 'weighers', 'manager', 'client',
             'cmd', 'bench'),
    # every SQL statement; knows nothing of how it is called
    'db': ('rpc', 'edge', 'service', 'driver', 'host_state', 'filters',
           'weighers', 'manager', 'client', 'cmd', 'bench',
           'oslo_messaging'),
    'host_state': ('rpc', 'edge', 'service', 'driver', 'filters', 'weighers',
                   'manager', 'client', 'cmd', 'bench', 'oslo_messaging'),
    # plugins read a host view and the request, nothing else
    'filters': ('db', 'rpc', 'edge', 'service', 'driver', 'weighers',
                'manager', 'client', 'cmd', 'bench', 'sqlalchemy', 'oslo_db',
                'oslo_messaging'),
    'weighers': ('db', 'rpc', 'edge', 'service', 'driver', 'filters',
                 'manager', 'client', 'cmd', 'bench', 'sqlalchemy', 'oslo_db',
                 'oslo_messaging'),
    'driver': ('rpc', 'edge', 'service', 'manager', 'client', 'cmd',
               'bench', 'oslo_messaging'),
    # bytes between the broker and a server: it reads no request
    'transport': ('model', 'objects', 'db', 'rpc', 'edge', 'service',
                  'driver', 'host_state', 'filters', 'weighers', 'manager',
                  'client', 'cmd', 'bench', 'nova', 'placement_feed',
                  'sqlalchemy', 'oslo_db', 'numpy'),
    # the edge checks a message and answers; it does not schedule, and
    # knows no server
    'edge': ('service', 'driver', 'host_state', 'filters', 'weighers',
             'manager', 'client', 'cmd', 'bench', 'nova', 'rpc',
             'transport', 'placement_feed'),
    # the servers take messages off the bus and answer; they schedule
    # nothing and read no request (the edge does)
    'rpc': ('service', 'driver', 'host_state', 'filters', 'weighers',
            'manager', 'client', 'cmd', 'bench', 'nova'),
    # nova's API over the edge: it reads and writes nova's wire format,
    # and Placement; the worker's parts come in through the manager
    'nova': ('service', 'driver', 'host_state', 'filters', 'weighers',
             'manager', 'client', 'cmd', 'bench'),
    # the endpoint takes its parts; the process builds them
    'manager': ('service', 'client', 'cmd', 'bench'),
    # what other services import: nothing of the server (nor the edge's
    # schema validator, a compiled wheel a conductor has no use for)
    'client': _SERVER + ('bench', 'numpy', 'sqlalchemy', 'oslo_db',
                         'alembic', 'jsonschema_rs', 'edge'),
    'service': ('cmd', 'client', 'bench', 'placement_feed'),
    # reads Placement, pushes through the client as a tracker would
    'placement_feed': _SERVER + ('rpc', 'edge', 'nova', 'bench', 'numpy',
                                 'sqlalchemy',
                                 'oslo_db', 'alembic', 'oslo_messaging'),
    'cmd': ('bench',),
    # the bench measures the package from outside, never the reverse
    'exception': ('model', 'objects', 'conf', 'rpc', 'edge', 'client',
                  'bench') + _SERVER,
    'context': ('model', 'objects', 'conf', 'rpc', 'edge', 'client',
                'bench') + _SERVER,
    'version': ('model', 'objects', 'conf', 'rpc', 'edge', 'client',
                'bench') + _SERVER,
}


def layer_of(module):
    """The layer of a dotted module name, or its top-level package's name
    for a third-party module."""
    parts = module.split('.')
    if parts[0] == 'scheduler_bench':
        return 'bench'
    if parts[0] != 'scheduler':
        return parts[0]
    return parts[1] if len(parts) > 1 else 'scheduler'


def imported_modules(source):
    """Every module an ``import`` statement of ``source`` names (absolute
    imports; ``from scheduler import x`` names ``scheduler.x``)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            if node.module == 'scheduler':
                yield from ('scheduler.' + a.name for a in node.names)
            else:
                yield node.module


def violations(sources):
    """``(module, imported)`` pairs that break ``NEVER_IMPORTS``, for
    ``sources``: {dotted module name: its source text}."""
    found = []
    for module, source in sorted(sources.items()):
        forbidden = NEVER_IMPORTS.get(layer_of(module), ())
        for imported in imported_modules(source):
            target = layer_of(imported)
            if target != layer_of(module) and target in forbidden:
                found.append((module, imported))
    return found


def package_sources():
    sources = {}
    for package in ('scheduler', 'scheduler_bench'):
        for path in (ROOT / package).rglob('*.py'):
            parts = path.relative_to(ROOT).with_suffix('').parts
            if parts[-1] == '__init__':
                parts = parts[:-1]
            sources['.'.join(parts)] = path.read_text()
    return sources


def test_no_layer_imports_what_the_table_forbids():
    assert violations(package_sources()) == []


def test_every_folder_of_the_package_has_a_line_in_the_table():
    folders = {p.name for p in (ROOT / 'scheduler').iterdir()
               if (p / '__init__.py').exists()}
    assert folders - set(NEVER_IMPORTS) == set()


@pytest.mark.parametrize('module, line', [
    ('scheduler.model.fit', 'from scheduler.db import api'),
    ('scheduler.model.fit', 'import threading'),
    ('scheduler.filters.compute', 'from scheduler.db import instances'),
    ('scheduler.db.providers', 'from scheduler import manager'),
    ('scheduler.client.client', 'from scheduler.driver import plugins'),
    ('scheduler.manager', 'from scheduler.service import composition'),
    ('scheduler.driver.plugins', '    from scheduler.edge import policy'),
])
def test_a_forbidden_import_is_found(module, line):
    body = ('def later():\n%s\n' % line if line.startswith(' ')
            else line + '\n')
    assert violations({module: body}) == [(module, line.split()[1]
                                           if line.split()[0] == 'import'
                                           else _named(line))]


def _named(line):
    words = line.split()
    if words[1] == 'scheduler':
        return 'scheduler.' + words[3]
    return words[1]


def test_an_allowed_import_is_not_flagged():
    assert violations({
        'scheduler.driver.filter_scheduler':
            'from scheduler.host_state import HostTable\n'
            'from scheduler.model import fit\n',
        'scheduler.client.rpcapi': 'from scheduler import objects\n',
    }) == []


def test_the_architecture_page_names_every_folder_and_no_other():
    page = (ROOT / 'doc' / 'source' / 'architecture.rst').read_text()
    listed = set(re.findall(r'^   \* - ``(scheduler\w*/(?:\w+/)?)``', page,
                            re.MULTILINE))
    folders = {'scheduler/%s/' % p.name for p in (ROOT / 'scheduler')
               .iterdir() if (p / '__init__.py').exists()}
    assert listed == folders | {'scheduler_bench/'}
