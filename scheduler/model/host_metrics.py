"""Host metrics: what trackers report of a host's load, as numbers.

A tracker reports ``metrics`` as JSON text: a list of ``{"name", "value",
"timestamp", "source"}`` objects. ``host_metrics(attributes)`` turns it
into ``{name: value}`` (numbers only; anything unreadable is left out).

``parse_weight_setting(entries)`` reads ``[metrics] weight_setting``
(``["cpu.user.percent=-1.0", ...]``) into ``[(name, ratio)]`` and raises
``ValueError`` naming the bad entry, so a plugin built from it fails at
start-up.
"""

import json


def parse_weight_setting(entries):
    setting = []
    for entry in entries:
        name, sep, ratio = entry.partition('=')
        name = name.strip()
        try:
            if not (sep and name):
                raise ValueError(entry)
            setting.append((name, float(ratio)))
        except ValueError:
            raise ValueError(
                '[metrics] weight_setting entry %r is not "name=ratio" '
                'with a numeric ratio' % entry)
    return setting


def host_metrics(attributes):
    text = attributes.get('metrics')
    if not text:
        return {}
    try:
        reported = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return {}
    values = {}
    for metric in reported if isinstance(reported, list) else ():
        if not isinstance(metric, dict):
            continue
        value = metric.get('value')
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values[metric.get('name')] = float(value)
    return values
