"""scheduler-sim places boot-from-volume instances next to their volumes
and says so."""

import re

from scheduler.cmd import sim


def test_sim_prints_the_co_location_rate(capsys):
    assert sim.main(['--hosts', '8', '--instances', '8', '--racks', '4',
                     '--bfv-instances', '12', '--conductors', '2']) == 0
    out = capsys.readouterr().out
    assert 'Boot from volume: 12 instances' in out
    rule = re.search(r'volume\'s rack": +(\d+)/(\d+) in the same rack', out)
    assert rule and rule.group(1) == rule.group(2) == '6'
    assert re.search(r'no locality rule: +\d+/6 in the same rack', out)
    assert 'overcommitted hosts: 0' in out
