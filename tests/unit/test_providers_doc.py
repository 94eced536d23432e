"""doc/source/providers.rst: its Python examples run as they are, in order."""

import pathlib
import re
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _doc():
    for path in ('doc/providers.rst', 'doc/source/providers.rst'):
        if (ROOT / path).exists():
            return (ROOT / path).read_text()
    raise AssertionError('providers.rst not found')


def _python_blocks(text):
    """The bodies of the ``.. code-block:: python`` directives."""
    blocks = []
    for match in re.finditer(r'^\.\. code-block:: python\n\n((?:(?:    .*)?'
                             r'\n)+)', text, re.MULTILINE):
        blocks.append(textwrap.dedent(match.group(1)))
    return blocks


def test_examples_run_and_place_every_group(capsys):
    blocks = _python_blocks(_doc())
    assert len(blocks) == 5
    namespace = {}
    exec(compile('\n'.join(blocks), 'providers.rst', 'exec'), namespace)
    lines = capsys.readouterr().out.splitlines()
    # two instances (compute, volume host, pool, port), then the volume
    # alone, then the legacy request
    assert len(lines) == 4
    for line in lines[:2]:
        compute, volume, pool, port = line.split()
        assert compute.split('-')[1] == volume.split('-')[1]
        assert (pool, port) == ('pool1', 'segment-w1')
    assert lines[2].startswith("('cinder-r")
