"""extra_specs_ops: every operator, on matching and other values."""

import pytest

from scheduler.filters import extra_specs_ops

CASES = [
    # (host value, requirement, matches)
    ('123', '123', True),
    ('124', '123', False),
    ('8', '= 4', True),          # '=' means "at least"
    ('4', '= 4', True),
    ('2', '= 4', False),
    ('4', '== 4.0', True),
    ('5', '== 4', False),
    ('5', '!= 4', True),
    ('4', '!= 4', False),
    ('5', '>= 4', True),
    ('3', '>= 4', False),
    ('3', '<= 4', True),
    ('5', '<= 4', False),
    ('abc', '>= 4', False),      # not a number: no match, no error
    ('4', '>= four', False),
    ('kvm', 's== kvm', True),
    ('KVM', 's== kvm', False),
    ('xen', 's!= kvm', True),
    ('b', 's>= a', True),
    ('b', 's> b', False),
    ('a', 's<= b', True),
    ('b', 's< b', False),
    ('avx avx2 sse4', '<in> avx2', True),
    ('avx sse4', '<in> avx2', False),
    ('avx avx2 sse4', '<all-in> avx sse4', True),
    ('avx sse4', '<all-in> avx avx2', False),
    ('qemu', '<or> kvm <or> qemu', True),
    ('xen', '<or> kvm <or> qemu', False),
    ('kvm', '<or> kvm', True),
    ('kvm', '<or>', False),      # operator without operand never matches
    ('4', '>=', False),
    (None, '= 1', False),        # host does not report the value
    (None, 'x', False),
    ('', '', True),
]


@pytest.mark.parametrize('value, requirement, expected', CASES)
def test_match(value, requirement, expected):
    assert extra_specs_ops.match(value, requirement) is expected


def test_parse_compiles_once_for_many_values():
    requirement = extra_specs_ops.parse('>= 4')
    assert [requirement.matches(v) for v in ('3', '4', '5')] == \
        [False, True, True]
