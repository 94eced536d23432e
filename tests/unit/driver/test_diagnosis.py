"""Diagnosis: the reason text of NoValidHost and its structured form."""

from scheduler.driver import diagnosis


def _diagnosis():
    d = diagnosis.Diagnosis(10)
    d.add('RequestedHosts', 10, 0, [])
    d.add('ComputeFilter', 10, 2, ['h1', 'h2'], '2 disabled')
    d.add('ResourceFitFilter', 8, 8, ['h%d' % i for i in range(3, 11)],
          'VCPU: 8')
    return d


def test_reason_skips_steps_that_removed_nothing():
    assert _diagnosis().reason() == (
        '0/10 hosts: 2 removed by ComputeFilter (2 disabled), 8 removed by '
        'ResourceFitFilter (VCPU: 8)')


def test_reason_for_admins_names_hosts():
    assert _diagnosis().reason(show_hosts=True).startswith(
        '0/10 hosts: 2 removed by ComputeFilter (2 disabled; hosts: h1, h2)')


def test_host_names_are_capped():
    d = diagnosis.Diagnosis(30)
    d.add('ComputeFilter', 30, 30, ['h%d' % i for i in range(30)])
    assert len(d.steps[0]['removed']) == diagnosis.MAX_NAMES
    assert d.reason(show_hosts=True).endswith('h19 and 10 more)')


def test_note_and_conflicts_are_appended():
    d = diagnosis.Diagnosis(3)
    d.note = 'only 1 of 2 instances fit, none placed'
    d.claim_conflicts = 2
    assert d.reason() == ('3/3 hosts; only 1 of 2 instances fit, none '
                          'placed; 2 claim conflicts with other workers')


def test_as_dict_hides_names_unless_asked():
    d = _diagnosis()
    plain = d.as_dict()
    assert plain['total_hosts'] == 10
    assert [s['hosts_out'] for s in plain['steps']] == [0, 2, 8]
    assert all('removed' not in s for s in plain['steps'])
    admin = d.as_dict(show_hosts=True)
    assert admin['steps'][1]['removed'] == ['h1', 'h2']
    # as_dict never changes the diagnosis itself
    assert 'removed' in d.steps[1]


def test_no_host_at_all_says_none_has_reported():
    reason = diagnosis.Diagnosis(0).reason()
    assert reason == '0/0 hosts: ' + diagnosis.NO_HOSTS
    assert 'no hosts have reported yet' in reason
