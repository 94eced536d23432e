"""A guest's CPU and memory-page policy, read from flavor and image.

As in nova, each setting is a flavor extra spec or an image property
(the flavor wins when both are set and differ only where nova lets it):

* ``hw:cpu_policy`` / ``hw_cpu_policy``: ``shared`` (default),
  ``dedicated`` (every vCPU pinned to a host CPU of the PCPU inventory)
  or ``mixed`` (the vCPUs of ``hw:cpu_dedicated_mask`` pinned, the others
  shared);
* ``hw:cpu_thread_policy`` / ``hw_cpu_thread_policy``: ``prefer``
  (default), ``isolate`` (a pinned vCPU takes a whole core) or
  ``require`` (pinned vCPUs on thread siblings; SMT hosts only);
* ``hw:mem_page_size`` / ``hw_mem_page_size``: ``small``, ``large``,
  ``any`` or a size (``2048``, ``2MB``, ``1GB``; KiB without a unit);
* ``hw:emulator_threads_policy`` / ``hw_emulator_threads_policy``:
  ``isolate`` gives the emulator threads a pCPU of their own (one more
  PCPU, on the guest's first cell); ``share`` (default) does not. Only
  with pinned vCPUs.

``guest_cpus(spec)`` returns a ``GuestCpus`` or raises ``InvalidField``
naming the bad setting. ``cpu_set(field, text)`` reads ``0-3,^2,6``.
"""

import collections

from scheduler import exception

POLICIES = ('shared', 'dedicated', 'mixed')
THREAD_POLICIES = ('prefer', 'isolate', 'require')
PAGE_SIZE_WORDS = ('small', 'large', 'any')

EMULATOR_POLICIES = ('share', 'isolate')

GuestCpus = collections.namedtuple(
    'GuestCpus', 'policy dedicated thread_policy page_size emulator_pcpus')
GuestCpus.__doc__ = """``dedicated``: the set of pinned vCPU indexes;
``page_size``: None, a word of PAGE_SIZE_WORDS, or a size in KiB;
``emulator_pcpus``: pCPUs for the emulator threads (0 or 1)."""


def _invalid(field, reason):
    return exception.InvalidField(field=field, reason=reason)


def cpu_set(field, text):
    """'0-3,^2,6' -> {0, 1, 3, 6}; a set of only exclusions ('^0-1')
    is returned as ``(None, excluded)`` for the caller to complete."""
    wanted, excluded = set(), set()
    try:
        for part in (p.strip() for p in str(text).split(',')):
            target = excluded if part.startswith('^') else wanted
            low, _, high = part.lstrip('^').partition('-')
            target.update(range(int(low), int(high or low) + 1))
    except ValueError:
        raise _invalid(field, 'expected a CPU set like "0-3,^2,6", got %r'
                       % text)
    return wanted - excluded if wanted else (None, excluded)


def setting(spec, key):
    """(field name, value) of flavor extra spec ``hw:key`` or image
    property ``hw_key``; (None, None) if neither is set."""
    specs = spec.flavor.get('extra_specs') or {}
    if 'hw:' + key in specs:
        return 'flavor.extra_specs.hw:' + key, specs['hw:' + key]
    image = spec.get('image')
    props = (image.get('properties') or {}) if image else {}
    if props.get('hw_' + key) is not None:
        return 'image.properties.hw_' + key, props['hw_' + key]
    return None, None


def _choice(spec, key, choices, default):
    field, value = setting(spec, key)
    if value is None:
        return default
    if value not in choices:
        raise _invalid(field, 'expected one of %s, got %r' %
                       (', '.join(choices), value))
    return value


_UNITS = {'kb': 1, 'k': 1, 'mb': 1024, 'm': 1024, 'gb': 1024 * 1024,
          'g': 1024 * 1024}


def _page_size(spec):
    field, value = setting(spec, 'mem_page_size')
    if value is None:
        return None
    text = str(value).strip().lower()
    if text in PAGE_SIZE_WORDS:
        return text
    digits = text.rstrip('kmgb')
    unit = text[len(digits):] or 'kb'
    try:
        size = int(digits) * _UNITS[unit]
        if size < 1:
            raise ValueError
    except (ValueError, KeyError):
        raise _invalid(field, 'expected small, large, any or a size such '
                       'as 2MB, got %r' % value)
    return size


def _dedicated(spec, policy):
    vcpus = spec.flavor.vcpus
    if policy == 'shared':
        return frozenset()
    if policy == 'dedicated':
        return frozenset(range(vcpus))
    field, mask = setting(spec, 'cpu_dedicated_mask')
    if mask is None:
        raise _invalid('flavor.extra_specs.hw:cpu_dedicated_mask',
                       'missing: hw:cpu_policy=mixed needs it')
    chosen = cpu_set(field, mask)
    if isinstance(chosen, tuple):
        chosen = set(range(vcpus)) - chosen[1]
    if not chosen or not chosen < set(range(vcpus)):
        raise _invalid(field, 'must name some but not all of vCPUs 0..%d'
                       % (vcpus - 1))
    return frozenset(chosen)


def _emulator_pcpus(spec, policy):
    emulator = _choice(spec, 'emulator_threads_policy', EMULATOR_POLICIES,
                       'share')
    if emulator == 'share':
        return 0
    if policy == 'shared':
        field, _ = setting(spec, 'emulator_threads_policy')
        raise _invalid(field, 'isolate needs hw:cpu_policy dedicated or '
                       'mixed')
    return 1


def guest_cpus(spec):
    policy = _choice(spec, 'cpu_policy', POLICIES, 'shared')
    return GuestCpus(
        policy, _dedicated(spec, policy),
        _choice(spec, 'cpu_thread_policy', THREAD_POLICIES, 'prefer'),
        _page_size(spec), _emulator_pcpus(spec, policy))
