"""scheduler-sim says what it does while it runs, not only at the end,
and leaves no temporary directory behind (issue 23.9)."""

import tempfile

from scheduler.cmd import sim


def test_progress_before_the_summary_and_no_temp_dir_left(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    seen_before_summary = []
    summary = sim.Simulation.summary

    def recording_summary(self, *args):
        seen_before_summary.append(capsys.readouterr().err)
        return summary(self, *args)

    monkeypatch.setattr(sim.Simulation, 'summary', recording_summary)
    monkeypatch.setattr(sim, '_PROGRESS_EVERY', 2)
    assert sim.main(['--hosts', '4', '--instances', '6',
                     '--conductors', '2', '--bfv-instances', '0']) == 0
    [progress] = seen_before_summary
    assert 'scheduler-sim: 4 trackers reporting' in progress
    assert 'requests answered' in progress
    assert 'Simulated cloud' in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []
