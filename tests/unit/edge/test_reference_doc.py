"""doc/source/rpc-reference.rst is the schemas, rendered: the page and
``scheduler.edge.schemas`` never disagree."""

import pathlib

from scheduler.edge.schemas import reference

PAGE = pathlib.Path(__file__).resolve().parents[3] / 'doc' / 'source' / \
    'rpc-reference.rst'


def test_the_page_is_the_rendered_schemas():
    assert PAGE.read_text() == reference.render(), (
        'regenerate: python -m scheduler.edge.schemas.reference > '
        'doc/source/rpc-reference.rst')


def test_the_page_shows_every_method_and_keyword():
    text = PAGE.read_text()
    for word in ('select_destinations', 'get_service_versions',
                 'distinctUuids', 'localityNamesGroups', 'Since 1.3:'):
        assert word in text
