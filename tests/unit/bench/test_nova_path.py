"""scheduler-bench nova_path: its table and ratios from fixed samples (no
services), and that it is run by name only, never by ``all``."""

from scheduler_bench import cli
from scheduler_bench import nova_path


def _result():
    return nova_path._result(1000, 4, 51.4, {
        'placement alone': [0.4, 0.4, 0.4, 0.4],
        'write-back': [0.1, 0.1, 0.1, 0.1],
        'no write-back': [0.02, 0.02, 0.02, 0.02]})


def test_ratios_are_over_placement_alone():
    series = _result()['series']
    assert series['placement alone']['p50_ratio'] == 1.0
    assert series['write-back']['p50_ratio'] == 0.25
    assert series['no write-back']['mean_ratio'] == 0.05


def test_table_names_every_path_and_the_cloud():
    text = nova_path.render(_result())
    for name in nova_path.SERIES:
        assert name in text
    assert '1000 providers in Placement 16 (created in 51 s)' in text


def test_run_by_name_only_and_needs_rpc():
    assert 'nova_path' in cli.SCENARIOS
    assert 'nova_path' in cli.LONG and 'nova_path' in cli.RPC_ONLY
