"""The ``providers`` bench scenario runs on SQLite and keeps its rules."""

from scheduler_bench import providers
from scheduler_bench.options import Options


def test_small_run_places_every_request_within_the_rules(tmp_path):
    options = Options(db='sqlite', quick=True, hosts=[400], requests=30,
                      progress=False, workdir=str(tmp_path))
    result = providers.run(options)
    assert (result['compute'], result['storage'], result['network']) == (
        400, 80, 80)
    assert result['decision']['count'] == 30
    assert result['no_valid_host'] == 0 and result['broken_rules'] == 0
    text = providers.render(result)
    assert 'decision' in text and 'p99 ms' in text
