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

A class of the package that subclasses another library's class is held
too (``KNOWN_INHERITED``): a ``self._name`` it reads or writes, or a
``_name`` method it defines, that the library's base class defines
(an attribute of the class, or ``self._name`` in its source) is a
private name of that library, used or overridden.
"""

import ast
import collections
import importlib
import inspect
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2] / 'scheduler'

#: private name -> whose it is; remove a line when its last use goes
KNOWN = {
    '_element_type': 'oslo.versionedobjects list fields',
    # a field's coercing type (objects/base.py, db/providers.py,
    # edge/walk.py, edge/schemas/bounds.py); held unnoticed while the
    # hand-written schema compiler (edge/schemas/compiled.py, gone)
    # defined a method ``_type``
    '_type': 'oslo.versionedobjects fields',
}


#: private names of a library's base class used or overridden by a
#: subclass of the package -> whose they are
KNOWN_INHERITED = {
    '_changed_fields': 'oslo.versionedobjects VersionedObject (fast '
                       'paths, held to ovo by tests/unit/objects)',
    '_context': 'oslo.versionedobjects VersionedObject',
    '_obj_from_primitive': 'oslo.versionedobjects VersionedObject',
    '_obj_primitive_field': 'oslo.versionedobjects VersionedObject',
    '_obj_primitive_key': 'oslo.versionedobjects VersionedObject',
}


#: underscored names that their library documents as public: a
#: function of a module, (module, name); or an attribute of its objects
DOCUMENTED = {('os', '_exit')}
DOCUMENTED_ATTRIBUTES = {
    # SQLAlchemy's Row: public, underscored to stay clear of column names
    '_mapping',
}


#: a dotted module path of one of the libraries, as a string
LIBRARY_MODULE = re.compile(
    r'(oslo[_.]\w+|kombu|amqp|sqlalchemy|cotyledon)(\.\w+)+')


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
                    and node.attr not in own
                    and node.attr not in DOCUMENTED_ATTRIBUTES
                    and not (isinstance(node.value, ast.Name)
                             and (node.value.id, node.attr) in DOCUMENTED)):
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


def _check(used, known, what):
    """No name of ``used`` missing from ``known``, none of ``known`` no
    longer used."""
    new = {name: places for name, places in used.items()
           if name not in known}
    assert not new, ('%s, used for the first time: %s; use their public '
                     'API instead' % (what, new))
    gone = set(known) - set(used)
    assert not gone, 'no longer used, remove from the list: %s' % (
        sorted(gone))


def test_no_new_private_name_of_another_library():
    _check(private_names(), KNOWN, 'private names of other libraries')


def _module_name(path):
    parts = path.relative_to(ROOT.parent).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def _self_private_names(class_node):
    """(name, line) of each ``self._name`` and ``def _name`` of a class."""
    for node in ast.walk(class_node):
        if (isinstance(node, ast.Attribute) and _is_self(node.value)
                and node.attr.startswith('_')
                and not node.attr.startswith('__')):
            yield node.attr, node.lineno
        elif (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
              and node.name.startswith('_')
              and not node.name.startswith('__')):
            yield node.name, node.lineno


def _foreign_bases(cls):
    return [base for base in cls.__mro__[1:]
            if not base.__module__.startswith(('scheduler', 'builtins'))]


def _defines(bases, name):
    for base in bases:
        if name in vars(base):
            return True
        try:
            source = inspect.getsource(base)
        except (OSError, TypeError):
            continue
        if re.search(r'self\.%s\b' % re.escape(name), source):
            return True
    return False


def inherited_private_names():
    """private name of a base class -> the places that use it."""
    used = collections.defaultdict(list)
    for path in sorted(ROOT.rglob('*.py')):
        tree = ast.parse(path.read_text())
        classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        if not classes:
            continue
        module = importlib.import_module(_module_name(path))
        for node in classes:
            cls = getattr(module, node.name, None)
            bases = _foreign_bases(cls) if inspect.isclass(cls) else []
            if not bases:
                continue
            for name, line in sorted(set(_self_private_names(node))):
                if _defines(bases, name):
                    used[name].append('%s:%d' % (
                        path.relative_to(ROOT.parent), line))
    return used


def test_no_new_private_name_of_a_base_class():
    _check(inherited_private_names(), KNOWN_INHERITED,
           "private names of another library's base class")
