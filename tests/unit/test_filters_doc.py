"""doc/filters.rst covers every plugin, each with a 'Compared with Nova'
line, and its configuration example loads as written."""

import configparser
import pathlib
import re

import pytest
from stevedore import extension

from scheduler.driver import plugins

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _doc():
    # the upgrades work may move the docs under doc/source
    for path in ('doc/filters.rst', 'doc/source/filters.rst'):
        if (ROOT / path).exists():
            return (ROOT / path).read_text()
    raise AssertionError('filters.rst not found')


def _entries(text):
    """{definition term line: its body} of the reST definition lists."""
    entries, term = {}, None
    lines = text.splitlines() + ['']
    for line, following in zip(lines, lines[1:]):
        if line and not line[0].isspace():
            # a term: unindented, its definition indented below it
            term = line if following.startswith('  ') else None
            if term:
                entries[term] = ''
        elif term is not None:
            entries[term] += line + '\n'
    return entries


def _names(namespace):
    return sorted(extension.ExtensionManager(namespace).names())


@pytest.mark.parametrize('name', _names('scheduler.filters')
                         + _names('scheduler.weighers'))
def test_every_plugin_is_compared_with_nova(name):
    entries = _entries(_doc())
    found = [body for term, body in entries.items()
             if name in re.split(r'[ ,]+', term)]
    assert found, '%s is not described in filters.rst' % name
    assert '**Compared with Nova:**' in found[0]


def test_configuration_example_loads(conf):
    block = _doc().split('.. code-block:: ini', 1)[1].split('\n\n')[1]
    parser = configparser.ConfigParser()
    parser.read_string(block)
    section = parser['filter_scheduler']
    for option in ('enabled_filters', 'enabled_weighers'):
        names = [n.strip() for n in section[option].split(',')]
        conf.set_override(option, names, 'filter_scheduler')
    assert [f.name for f in plugins.load_filters(conf)] == [
        n.strip() for n in section['enabled_filters'].split(',')]
    assert len(plugins.load_weighers(conf)) == 3
