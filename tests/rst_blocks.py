"""The examples of an .rst page, so tests can run them verbatim.

``literal_blocks(path)`` yields ``(directive, text)`` for every literal
block: ``directive`` is the language of a ``.. code-block::`` (``ini``,
``yaml`` ...) or ``'::'`` for a paragraph ending in ``::``; ``text`` is
the block dedented, as a reader would copy it.
"""

import pathlib
import re
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]
_CODE_BLOCK = re.compile(r'^\.\. code-block::\s*(\S+)\s*$')


def literal_blocks(path):
    lines = (ROOT / path).read_text().splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        match = _CODE_BLOCK.match(line.strip())
        if match or (line.rstrip().endswith('::')
                     and not line.lstrip().startswith('..')):
            directive = match.group(1) if match else '::'
            body, index = _indented_after(lines, index + 1)
            yield directive, body
        else:
            index += 1


def _indented_after(lines, index):
    body = []
    while index < len(lines) and (not lines[index].strip()
                                  or lines[index].startswith(' ')):
        body.append(lines[index])
        index += 1
    return textwrap.dedent('\n'.join(body)).strip('\n') + '\n', index


def block_containing(path, text):
    """The one literal block of ``path`` that contains ``text``."""
    [block] = [body for _, body in literal_blocks(path) if text in body]
    return block
