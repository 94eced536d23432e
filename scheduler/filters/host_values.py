"""Reading nested values out of what a tracker reported.

Trackers report some fields as JSON text (``cpu_info``, ``numa_topology``)
and others as dicts (``stats``); ``descend(value, keys)`` walks keys into
either, returning None as soon as a step is missing or not a mapping.
"""

import json


def descend(value, keys):
    for key in keys:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return None
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
