"""soak: growth is measured against the first minute, beyond noise."""

from scheduler_bench import soak


def test_growth_beyond_a_floor():
    assert soak._growth(100.0, 109.0) == 9.0
    assert soak._growth(100.0, 95.0) == 0.0
    # p99 of 20 ms -> 24 ms is within the 5 ms noise floor
    assert soak._growth(20.0, 24.0, floor=5.0) == 0.0
    assert soak._growth(20.0, 30.0, floor=5.0) == 25.0
    assert soak._growth(0, 10) is None


def test_render_prints_one_row_per_minute():
    rows = [{'minute': m, 'placements': 1200, 'errors': 0, 'p99_ms': 30.0,
             'rss_mb': 200.0} for m in (1, 2)]
    text = soak.render({'minutes': rows})
    assert text.count('1200') == 2 and 'workers RSS MiB' in text


def test_render_names_the_kinds_of_errors():
    rows = [{'minute': 1, 'placements': 0, 'errors': 1200, 'p99_ms': None,
             'rss_mb': 200.0}]
    text = soak.render({'minutes': rows,
                        'error_kinds': {'Forbidden': 1199,
                                        'MessagingTimeout': 1}})
    assert 'errors by kind: Forbidden 1199, MessagingTimeout 1' in text


def test_placements_carry_the_service_role():
    # without it every call is refused by policy (scheduler.edge.policy)
    load = soak._Load(client=None, hosts=1)
    assert 'service' in load.ctxt.roles
