"""scheduler-bench cost: the /proc CPU accounting and the cost table.

Fixed numbers throughout, no services; the one smoke test that talks to
RabbitMQ (the bare echo floor, a few seconds) is skipped without it.
"""

import os
import socket

import pytest

from scheduler_bench import churn
from scheduler_bench import cost
from scheduler_bench import cost_cpu
from scheduler_bench import report
from scheduler_bench.options import Options

_TICKS = os.sysconf('SC_CLK_TCK')


def _stat_line(pid, comm, ppid, utime, stime):
    # fields 3 to 15 of proc(5); utime and stime are in clock ticks
    rest = ['S', ppid] + [0] * 9 + [utime, stime, 0, 0]
    return '%d (%s) %s' % (pid, comm, ' '.join(str(v) for v in rest))


def test_parse_stat_reads_ppid_and_utime_plus_stime():
    line = _stat_line(42, 'python', 7, 3 * _TICKS, 2 * _TICKS)
    assert cost_cpu.parse_stat(line) == (7, 5.0)


def test_parse_stat_survives_a_command_with_spaces_and_parens():
    line = _stat_line(42, 'postgres: a) b (c', 1, _TICKS, 0)
    assert cost_cpu.parse_stat(line) == (1, 1.0)


def test_this_process_is_its_own_tree_and_uses_cpu():
    pid = os.getpid()
    assert pid in cost_cpu.process_tree(pid)()
    assert cost_cpu.cpu_seconds(pid) > 0
    assert cost_cpu.cpu_seconds(2 ** 22 + 1) is None


def test_meter_keeps_the_cpu_of_a_process_that_ended():
    cpu = {1: 1.0, 2: 2.0}
    meter = cost_cpu.Meter(lambda: set(cpu), read_cpu=cpu.get)
    assert meter.read() == 3.0
    cpu[1] = 1.5
    del cpu[2]            # ended after 2.0 s: still counted
    cpu[3] = 0.25         # started during the phase
    assert meter.read() == 3.75


class _Box:
    """A fake clock; sleeping spends the idle rates' CPU."""

    IDLE = {'server': 0.01, 'database': 0.02}

    def __init__(self):
        self.now = 0.0
        self.used = {name: 0.0 for name in self.IDLE}

    def clock(self):
        return self.now

    def sleep(self, seconds, **extra):
        self.now += seconds
        for name, rate in self.IDLE.items():
            self.used[name] += rate * seconds + extra.get(name, 0.0)

    def meters(self):
        return {name: cost_cpu.Meter(lambda: {1},
                                     read_cpu=lambda _, n=name: self.used[n])
                for name in self.IDLE}


def test_phase_subtracts_the_idle_rate_over_the_whole_phase():
    box = _Box()
    phase = cost_cpu.Phase(box.meters(), clock=box.clock, sleep=box.sleep)
    assert phase.idle(2.0) == pytest.approx(_Box.IDLE)
    phase.start()
    box.sleep(10.0, server=4.0, database=1.0)   # the work
    assert phase.until_idle(interval=0.5, quiet=2) == pytest.approx(1.0)
    cpu = phase.stop()
    assert cpu['elapsed_s'] == pytest.approx(11.0)
    assert cpu['server'] == pytest.approx(4.0)
    assert cpu['database'] == pytest.approx(1.0)
    assert cost_cpu.per_op_ms(cpu['server'], 2000) == 2.0
    assert cost_cpu.per_op_ms(None, 10) is None


def test_until_idle_waits_while_the_server_is_busy():
    box = _Box()
    phase = cost_cpu.Phase(box.meters(), clock=box.clock,
                           sleep=lambda s: box.sleep(s, server=s * 0.5))
    phase.idle_rate = dict(_Box.IDLE)
    assert phase.until_idle(interval=0.5, timeout=3.0) >= 3.0


def _figures(server_ms, database_ms, ops=3000):
    return {'ops': ops, 'server_ms': server_ms, 'database_ms': database_ms,
            'sent': ops, 'placed': ops, 'errors': 0}


def _result():
    bare = {'call': _figures(0.95, None, 2000),
            'cast': _figures(0.42, None, 2000)}
    layouts = {}
    for key, name, _ in cost.LAYOUTS:
        measured = {'name': name,
                    'report': cost.judge(_figures(3.5, 0.15), 0.42,
                                         1.5, 0.2),
                    'placement': cost.judge(_figures(2.0, 1.5, 500), 0.95,
                                            2.5, 0.8)}
        layouts[key] = measured
    return {'hosts': 10000, 'database': 'postgresql', 'report_rate': 300,
            'bare': bare, 'layouts': layouts}


def test_judge_gives_the_ratio_to_the_floor_and_both_verdicts():
    report = cost.judge(_figures(3.5, 0.15), 0.42, 1.5, 0.2)
    assert report['ratio'] == 8.33
    assert report['ratio_met'] is False and report['database_met'] is True
    sqlite = cost.judge(_figures(0.6, None), 0.42, 1.5, 0.2)
    assert sqlite['ratio_met'] is True and sqlite['database_met'] is None


def test_render_prints_every_figure_ratio_and_verdict():
    text = cost.render(_result())
    assert text.count('ratio missed, db met') == 2       # the reports
    assert text.count('ratio met, db missed') == 2       # the placements
    assert '8.33' in text and '2.11' in text
    assert '<= 1.5x, db <= 0.2 ms' in text and 'cast (echo)' in text
    assert '2 workers + 1 report worker' in text


def test_a_ratio_is_to_the_floor_measured_next_to_its_phase():
    result = _result()
    beside = dict(_figures(2.0, 1.5, 500), floor_ms=0.5)
    result['layouts']['default']['placement'] = cost.judge(
        beside, beside['floor_ms'], 2.5, 0.8)
    assert result['layouts']['default']['placement']['ratio'] == 4.0
    row = [line for line in cost.render(result).splitlines()
           if '2 workers ' in line and 'placement' in line
           and 'report worker' not in line]
    assert len(row) == 1 and '| 0.50 ' in row[0] and '| 4.00 ' in row[0]


def test_targets_are_judged_on_the_default_layout():
    rows = report.judge(cost.TARGETS, _result())
    assert [r['met'] for r in rows] == [False, True, True, False]


def _broker_up():
    try:
        socket.create_connection(('127.0.0.1', 5672), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _broker_up(), reason='needs RabbitMQ')
def test_bare_floor_smoke(tmp_path):
    options = Options(quick=True, requests=30, progress=False,
                      workdir=str(tmp_path))
    out = cost.bare(options)
    for kind in ('call', 'cast'):
        assert out[kind]['ops'] == 30
        assert 0 < out[kind]['server_ms'] < 100


def test_every_report_of_a_tracker_moves_its_usage():
    # a report whose usage never moves costs the scheduler less than a
    # real tracker's after a build or a delete: the benches send these
    moved = ('vcpus_used', 'memory_mb_used', 'local_gb_used', 'running_vms')
    for beat in range(1, 10):
        before = churn._stats(7, beat)
        after = churn._stats(7, beat + 1)
        assert all(before[k] != after[k] for k in moved)
        assert after['stats']['bench_beat'] == str(beat + 1)


def _round(floor_ms, server_ms, database_ms, ops):
    floor = dict(_figures(floor_ms, None, 500), elapsed_s=1.0, drain_s=0.5,
                 idle_cores={'server': 0.01})
    op = dict(_figures(server_ms, database_ms, ops), elapsed_s=2.0,
              drain_s=0.5, idle_cores={'server': 0.01, 'database': 0.02})
    return floor, op


def test_rounds_pool_cpu_over_operations_and_keep_each_ratio():
    # the machine slowed down between the rounds: each round's ratio is
    # to its own floor, the pooled one to the pooled floor
    pooled = cost.pool_rounds([_round(1.0, 2.0, 0.5, 250),
                               _round(1.5, 3.6, 0.7, 250)])
    assert pooled['ops'] == 500 and pooled['placed'] == 500
    assert pooled['server_ms'] == 2.8 and pooled['database_ms'] == 0.6
    assert pooled['floor_ms'] == 1.25
    assert pooled['round_ratios'] == [2.0, 2.4]
    assert pooled['elapsed_s'] == 4.0 and pooled['drain_s'] == 1.0
    assert cost.judge(pooled, pooled['floor_ms'], 2.5, 0.8)['ratio'] == 2.24


def test_rounds_without_a_database_meter_pool_to_none():
    pooled = cost.pool_rounds([_round(1.0, 2.0, None, 250)])
    assert pooled['database_ms'] is None and pooled['server_ms'] == 2.0


def test_render_prints_the_ratio_of_every_round():
    result = _result()
    result['layouts']['default']['placement']['round_ratios'] = [2.5, 2.75]
    assert 'placement / call by round: 2.50x / 2.75x' in cost.render(result)
