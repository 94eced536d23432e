"""Private names of other libraries, held by a test: the list may only
shrink.

A private name (``_connection``, ``_producer``, a module under
``oslo_messaging._drivers`` ...) is no library's promise: its next
release may rename it, and the scheduler would find out at run time,
under load. The goal (issue "The RPC edge on public APIs") is none at
all; until then ``KNOWN`` lists each one still used, and a new one fails
this test.

What counts: an attribute ``x._name`` read or written on anything but
``self``/``cls`` whose name the package defines nowhere itself (as a
function, class, module-level name, import or ``self._name``), and every
import from, or string naming, a library's module path with a private
part. Names the package defines
itself are its own business (the hand-off attributes between its stages
are another item of that issue).
"""

import ast
import collections
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2] / 'scheduler'

#: private name -> whose it is; remove a line when its last use goes
KNOWN = {
    '_creator': 'SQLAlchemy pool',
    '_element_type': 'oslo.versionedobjects list fields',
    '_mapping': "SQLAlchemy Row (documented, underscored to stay clear of "
                "column names)",
    '_pre_ping': 'SQLAlchemy pool',
    '_read_for': "this package's own hand-off attribute (arguments.py)",
    '_reset_on_return': 'SQLAlchemy pool',
    'module oslo_messaging._drivers.amqpdriver':
        "oslo.messaging's logger, filtered (rpc/log_filters.py)",
    'module oslo_messaging._metrics.client':
        'oslo.messaging options registered on cfg.CONF only',
    'module oslo_messaging._tracing.client':
        'oslo.messaging options registered on cfg.CONF only',
}


#: a dotted module path of one of the libraries, as a string
LIBRARY_MODULE = re.compile(
    r'(oslo_\w+|kombu|amqp|sqlalchemy|cotyledon)(\.\w+)+')


def _is_self(node):
    return isinstance(node, ast.Name) and node.id in ('self', 'cls')


def _own_names(trees):
    own = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef)):
                own.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx,
                                                           ast.Store):
                own.add(node.id)
            elif (isinstance(node, ast.Attribute)
                  and isinstance(node.ctx, ast.Store)
                  and _is_self(node.value)):
                own.add(node.attr)
            elif isinstance(node, ast.alias):
                own.add(node.asname or node.name.split('.')[-1])
    return own


def private_names():
    """private name -> the places (path:line) that use it."""
    trees = {path: ast.parse(path.read_text())
             for path in sorted(ROOT.rglob('*.py'))}
    own = _own_names(trees.values())
    used = collections.defaultdict(list)
    for path, tree in trees.items():
        where = path.relative_to(ROOT.parent)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and not _is_self(node.value)
                    and node.attr.startswith('_')
                    and not node.attr.startswith('__')
                    and node.attr not in own):
                used[node.attr].append('%s:%d' % (where, node.lineno))
            elif (isinstance(node, ast.ImportFrom) and node.module
                  and _private_module(node.module)):
                used['module ' + node.module].append(
                    '%s:%d' % (where, node.lineno))
            elif (isinstance(node, ast.Constant)
                  and isinstance(node.value, str)
                  and LIBRARY_MODULE.fullmatch(node.value)
                  and _private_module(node.value)):
                # importlib.import_module('oslo_messaging._x.client')
                used['module ' + node.value].append(
                    '%s:%d' % (where, node.lineno))
    return used


def _private_module(path):
    return any(part.startswith('_') for part in path.split('.'))


def test_no_new_private_name_of_another_library():
    used = private_names()
    new = {name: places for name, places in used.items()
           if name not in KNOWN}
    assert not new, (
        'private names of other libraries, used for the first time: %s; '
        'use their public API instead' % new)


def test_the_known_list_only_holds_names_still_used():
    gone = set(KNOWN) - set(private_names())
    assert not gone, 'no longer used, remove from KNOWN: %s' % sorted(gone)
