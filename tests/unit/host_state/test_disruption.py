"""After a silence of most hosts at once, trackers get a period to report
again before their hosts count as not reporting."""

import numpy as np

from scheduler.host_state import disruption

SDT = 60.0
THRESHOLD = 0.55


def _mask(grace, reported, now):
    return grace.reporting(np.array(reported, dtype=float), now).tolist()


def test_a_host_that_stopped_alone_is_down():
    grace = disruption.DisruptionGrace(SDT, THRESHOLD)
    # one dead host of four: no disruption
    assert _mask(grace, [1000, 1990, 1995, 1999], 2000) == \
        [False, True, True, True]


def test_a_broker_outage_does_not_make_the_cloud_look_down():
    grace = disruption.DisruptionGrace(SDT, THRESHOLD)
    before = [900, 990, 995, 999]           # all reporting at t=1000
    # the broker was down from 1000 to 1100: everyone silent
    assert _mask(grace, before, 1100) == [False, True, True, True]
    # back at 1100: two trackers reported, two not yet: still counted
    assert _mask(grace, [900, 990, 1101, 1102], 1103) == \
        [False, True, True, True]
    # ... for one service_down_time after the silence was last seen
    assert _mask(grace, [900, 990, 1101, 1102], 1100 + SDT + 1) == \
        [False, False, True, True]


def test_the_grace_is_seen_first_after_the_return():
    grace = disruption.DisruptionGrace(SDT, THRESHOLD)
    # the first request after the outage already sees one fresh report
    assert _mask(grace, [990, 995, 999, 1101], 1102) == \
        [True, True, True, True]


def test_the_threshold_is_the_operators_choice():
    # three of six hosts silent: half of the cloud
    half = [990, 995, 999, 1099, 1099, 1099]
    assert _mask(disruption.DisruptionGrace(SDT, THRESHOLD), half, 1100) \
        == [False, False, False, True, True, True]
    assert _mask(disruption.DisruptionGrace(SDT, 0.5), half, 1100) == \
        [True] * 6
    # 1.0: only a silence of every host is the scheduler's own outage
    strict = disruption.DisruptionGrace(SDT, 1.0)
    assert _mask(strict, [990, 995, 999, 1099], 1100) == \
        [False, False, False, True]
    assert _mask(strict, [990, 995, 999, 999], 1100) == [True] * 4
