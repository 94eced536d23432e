"""A conductor or a tracker of any release, as a process of its own.

    PYTHON upgrade_actor.py --config-file F [--roles R] report HOSTS.json
    PYTHON upgrade_actor.py --config-file F [--roles R] place FLAVOR.json N

Run by the previous release's interpreter (``previous_release.install()``)
or the current one, it imports nothing but ``scheduler`` and oslo.config,
and only what the first release's client offered: ``SchedulerClient``,
``RequestContext`` and ``exception.NoValidHost``. ``report`` sends one
``update_resource_stats`` per ``[name, stats]`` pair. ``place`` asks for
one instance at a time until COUNT are placed or NoValidHost, and prints
one JSON line per answer: ``{"uuid", "host", "node"}`` or
``{"no_valid_host": reason}``. Any other error exits non-zero.
"""

import argparse
import json
import sys
import uuid

from oslo_config import cfg

from scheduler import exception
from scheduler.client import SchedulerClient
from scheduler.context import RequestContext


def _client(config_file):
    conf = cfg.ConfigOpts()
    conf(['--config-file', config_file], project='scheduler',
         default_config_files=[])
    return SchedulerClient(conf)


def report(client, ctxt, path):
    for name, stats in json.load(open(path)):
        client.update_resource_stats(
            ctxt, name if isinstance(name, str) else tuple(name), stats)


def place(client, ctxt, flavor_path, count):
    flavor = json.load(open(flavor_path))
    for _ in range(count):
        instance = str(uuid.uuid4())
        spec = {'instance_type': flavor, 'num_instances': 1,
                'instance_uuids': [instance],
                'instance_properties': {'project_id': 'p1',
                                        'user_id': 'u1'}}
        try:
            [[chosen]] = client.select_destinations(
                ctxt, spec, filter_properties={}, instance_uuids=[instance])
        except exception.NoValidHost as exc:
            print(json.dumps({'no_valid_host': exc.reason}), flush=True)
            return
        print(json.dumps({'uuid': instance, 'host': chosen.host,
                          'node': chosen.nodename}), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--config-file', required=True)
    parser.add_argument('--roles', default='',
                        help='roles of the context sent, comma separated')
    parser.add_argument('action', choices=('report', 'place'))
    parser.add_argument('args', nargs='*')
    args = parser.parse_args()
    client = _client(args.config_file)
    ctxt = RequestContext(project_id='p1', user_id='u1',
                          roles=[r for r in args.roles.split(',') if r])
    try:
        if args.action == 'report':
            report(client, ctxt, args.args[0])
        else:
            place(client, ctxt, args.args[0], int(args.args[1]))
    finally:
        client.close()


if __name__ == '__main__':
    sys.exit(main())
