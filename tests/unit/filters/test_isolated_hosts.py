"""IsolatedHostsFilter: the three options against isolated and other
images and volume-backed requests."""

import pytest

from scheduler.filters import isolated_hosts
from tests.unit.filters import hosts

HOSTS = hosts.table(dict(host='iso1'), dict(host='iso2'), dict(host='h1'),
                    dict(host='h2'))
ISOLATED = ['iso1', 'iso2']
OTHERS = ['h1', 'h2']
ALL = ISOLATED + OTHERS

CASES = [
    # (images, hosts, restrict, image id, expected)
    ('isolated image, restricted', ['img-i'], ISOLATED, True, 'img-i',
     ISOLATED),
    ('other image, restricted', ['img-i'], ISOLATED, True, 'img-o', OTHERS),
    ('volume-backed, restricted', ['img-i'], ISOLATED, True, None, OTHERS),
    ('isolated image, unrestricted', ['img-i'], ISOLATED, False, 'img-i',
     ISOLATED),
    ('other image, unrestricted', ['img-i'], ISOLATED, False, 'img-o', ALL),
    ('no isolated images, restricted', [], ISOLATED, True, 'img-o', OTHERS),
    ('no isolated images, unrestricted', [], ISOLATED, False, 'img-o', ALL),
    ('nothing configured', [], [], True, 'img-o', ALL),
    ('isolated host that does not exist', ['img-i'], ['gone'], True,
     'img-i', []),
]


@pytest.mark.parametrize('images, isolated, restrict, image_id, expected',
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(conf, images, isolated, restrict, image_id, expected):
    conf.set_override('isolated_images', images, 'filter_scheduler')
    conf.set_override('isolated_hosts', isolated, 'filter_scheduler')
    conf.set_override('restrict_isolated_hosts_to_isolated_images',
                      restrict, 'filter_scheduler')
    plugin = isolated_hosts.IsolatedHostsFilter(conf)
    assert plugin.vectorized
    image = {'id': image_id} if image_id else None
    assert hosts.passing(plugin, HOSTS, hosts.request(image=image)) == \
        expected
