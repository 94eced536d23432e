"""doc/source/filters.rst, 'Writing a filter that needs stored data': its
Python examples run as written, and the example filter gets its stored
data through its preload hook and keeps the instances near the one its
hint names."""

import subprocess
import sys

from tests import rst_blocks

PAGE = 'doc/source/filters.rst'
SECTION = 'Writing a filter that needs stored data'


def test_stored_data_example_runs(tmp_path):
    # the page's only Python examples are the section's
    text = (rst_blocks.ROOT / PAGE).read_text()
    assert text.index(SECTION) < text.index('.. code-block:: python')
    blocks = [body for kind, body in rst_blocks.literal_blocks(PAGE)
              if kind == 'python']
    assert len(blocks) == 2
    result = subprocess.run(
        [sys.executable, '-c', '\n'.join(blocks)], cwd=tmp_path,
        capture_output=True, text=True, timeout=120,
        env={'PYTHONPATH': str(rst_blocks.ROOT), 'HOME': str(tmp_path)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ['web-2', 'web-2']
