"""README.rst's client example runs verbatim against a real server.

The literal block that follows "a test runs it against a real server" is
cut out of README.rst as it is, written to a file and run with the
server's config file, as an operator would paste it.
"""

import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

from tests.functional import db_state
from tests.functional import shared_broker

ROOT = pathlib.Path(__file__).resolve().parents[2]
MARKER = 'a test runs it against a real server)::'


def readme_client_example():
    text = (ROOT / 'README.rst').read_text()
    after = text[text.index(MARKER) + len(MARKER):]
    # the literal block: the indented lines up to the next unindented one
    block = re.match(r'\n((?:\n|    .*\n)+)', after).group(1)
    return textwrap.dedent(block)


@pytest.mark.parametrize('backend', ['postgresql'])
def test_readme_client_example_runs_verbatim(scheduler, tmp_path):
    server = scheduler(workers=1)
    script = tmp_path / 'example.py'
    script.write_text(readme_client_example())
    result = subprocess.run(
        [sys.executable, str(script), '--config-file',
         str(server.config_path)], cwd=tmp_path, capture_output=True,
        text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2, result.stdout
    for line in lines:
        host, node, allocation_id = line.split()
        assert (host, node) == ('host1', 'node1')
    # the casts that follow were taken without a complaint
    # the first instance's claim released (delete_allocations); the
    # second's goes too once delete_instance_info says it left host1
    first = lines[0].split()[2]
    db_state.wait_for(lambda: first not in {
        row['consumer_uuid'] for row in db_state.allocations(server.engine)
    }, 30, 'the first instance released')
    db_state.wait_for(lambda: shared_broker.drained(server.topic, every=True),
                      30, 'every cast handled (topic, reports, fanout)')
    assert server.errors_in_log() == []
    assert server.count_in_log('Rejected') == 0
