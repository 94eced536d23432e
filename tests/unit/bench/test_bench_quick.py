"""Smoke test of scheduler-bench: the in-process part of the latency
scenario at 1k hosts on SQLite, through the command line. No services."""

import json
import sys

from scheduler_bench import cli


def test_latency_in_process_on_sqlite(tmp_path, capsys):
    code = cli.main(['latency', '--db', 'sqlite', '--no-rpc',
                       '--hosts', '1000', '--requests', '40',
                       '--output-dir', str(tmp_path), '--no-progress'])
    out = capsys.readouterr().out
    # nothing measured at 10k/100k, so no target is missed
    assert code == 0, out
    assert 'decision (in-memory, in-process)' in out
    assert 'not measured' in out
    result = json.loads((tmp_path / 'latency.json').read_text())
    scale = result['scales']['1000']
    assert scale['decision']['count'] == 40
    assert 0 < scale['decision']['p50'] <= scale['decision']['p99']
    assert scale['in_process']['p50'] >= scale['decision']['p50']
    assert scale['claim_timed']
    assert scale['cold_load_s'] > 0
    assert scale['audit']['overcommitted'] == 0
    # every placement was claimed: one allocation row per resource class
    assert scale['audit']['allocation_rows'] == 40 * 3
    assert 'end_to_end' not in scale


def test_plot_without_matplotlib_says_how_to_install(tmp_path, capsys,
                                                     monkeypatch):
    monkeypatch.setitem(sys.modules, 'matplotlib', None)
    code = cli.main(['latency', '--db', 'sqlite', '--no-rpc', '--plot',
                       '--output-dir', str(tmp_path)])
    assert code == 2
    assert 'pip install matplotlib' in capsys.readouterr().err


def test_rpc_scenarios_refuse_no_rpc(capsys):
    assert cli.main(['storm', '--no-rpc']) == 2
    assert 'needs RabbitMQ' in capsys.readouterr().err


def test_million_scenario_in_memory(tmp_path, capsys):
    code = cli.main(['million', '--hosts', '2000', '--requests', '20',
                       '--output-dir', str(tmp_path), '--no-progress'])
    out = capsys.readouterr().out
    # the target is about 1M hosts: not measured at 2k
    assert code == 0, out
    result = json.loads((tmp_path / 'million.json').read_text())
    assert result['hosts'] == 2000
    assert result['decision']['count'] == 20
    assert 0 < result['decision']['p50'] <= result['decision']['p99']
    assert result['table_mb'] > 0
    assert 'at_1m' not in result


def test_edge_scenario_measures_both_methods(tmp_path, capsys):
    code = cli.main(['edge', '--quick', '--requests', '50',
                     '--output-dir', str(tmp_path), '--no-progress'])
    out = capsys.readouterr().out
    # a busy machine may miss a CPU target; the figures are what is tested
    assert code in (0, 1), out
    result = json.loads((tmp_path / 'edge.json').read_text())
    for method in ('select_destinations', 'update_resource_stats'):
        figures = result[method]
        assert figures['read_us'] > 0 and figures['edge_us'] > 0
        # best-of-rounds figures: on a busy machine the difference of two
        # may come out below zero, which is reported as 0
        assert figures['check_us'] == max(round(
            figures['edge_us'] - figures['read_us'], 1), 0)
        assert method in out
