"""The keywords this project adds to JSON Schema, for rules it cannot say.

The rule itself lives once, in the model module that owns it, and is
only named here. A keyword is of one of three kinds, by what it judges
(``scheduler.edge.schemas.wire`` turns each into what the validator
runs):

* a string: ``name``, ``trait``, ``providerKind``, ``ratioText``
  become the validator's custom formats (``FORMATS``), checked where the
  validator meets the string;
* the keys of a mapping: ``nameKeys``, ``resourceClassKeys`` become
  ``propertyNames`` of such a format;
* a value as a whole: ``rules(limits)``, run by the edge once the schema
  has passed, on the few values they name (a field, or each item of a
  list): no second walk of the message.

What each keyword says:

* ``trait``, ``providerKind``, ``resourceClassKeys``: well-formed names
  (``scheduler.model.generic_inventory``);
* ``groupRules``, ``uniqueGroupNames``, ``oneComputeGroup``,
  ``localityNamesGroups``: a request's resource groups and locality rules
  (``scheduler.model.resource_groups``);
* ``claimsSomething``: a request claims something
  (``scheduler.model.resource_groups.claims_nothing``);
* ``cpuPolicy``: the flavor's and image's CPU settings parse
  (``scheduler.model.cpu_policy.guest_cpus``); the error names the setting
  as ``flavor.extra_specs.hw:...`` or ``image.properties.hw_...``;
* ``name``, ``nameKeys``: a name, the keys of a mapping names
  (``scheduler.model.names``: at most 255 characters, no control
  character);
* ``statesCapacity``: a report states its capacity: generic
  ``inventories``, or all of nova's ``vcpus``, ``memory_mb`` and
  ``local_gb`` (a field left out would read as zero and put the
  host's capacity under its claims); a report repeating unchanged
  figures is how a tracker says it is alive, so it is a whole report too;
* ``capacityFits``: every capacity of a report, amount times allocation
  ratio, fits in 64 bits (the database's and the host table's columns);
* ``distinctUuids``: no UUID twice (a consumer claimed twice);
* ``limitMaximum``: at most the ``[limits]`` option it names;
* ``notInFuture``: a timestamp at most ``[limits] max_clock_skew`` ahead;
* ``ratioText``: a string holding a finite number from 0 to
  ``MAX_ALLOCATION_RATIO``.

``build(limits)`` returns ``{keyword: rule}`` of the value rules, each
``rule(value, instance)`` returning None or a ``Problem`` (a path
relative to the instance and a reason, or a ``field`` naming the field
itself); it reads ``limits`` (``conf.limits``) at each check, so a
reloaded option applies at once.
"""

import collections
import datetime
import math

from oslo_utils import timeutils
from oslo_utils import uuidutils

from scheduler import exception
from scheduler.model import cpu_policy
from scheduler.model import generic_inventory
from scheduler.model import names
from scheduler.model import resource_groups

#: the largest allocation ratio a report or an aggregate may set
MAX_ALLOCATION_RATIO = 10000.0
#: what a compute report without generic inventories must state
CLASSIC_CAPACITY = ('vcpus', 'memory_mb', 'local_gb')
_CLASSIC_RATIOS = (('vcpus', 'cpu_allocation_ratio'),
                   ('memory_mb', 'ram_allocation_ratio'),
                   ('local_gb', 'disk_allocation_ratio'))
_INT64_MAX = 2 ** 63 - 1

#: what a value rule finds wrong: ``path`` (keys and indexes below the
#: value) and ``reason``, or the ``field`` it names itself
Problem = collections.namedtuple('Problem', 'path reason field',
                                 defaults=((), '', None))


def _model_reason(check):
    """The reason of a model check ``check(value, path)`` raising
    InvalidField, or None."""
    def reason(value):
        try:
            check(value, '')
        except exception.InvalidField as exc:
            return exc.kwargs['reason']
        return None
    return reason


def _ratio_reason(value):
    try:
        ratio = float(value)
    except (TypeError, ValueError, OverflowError):
        ratio = float('nan')
    if not math.isfinite(ratio) or not 0 <= ratio <= MAX_ALLOCATION_RATIO:
        return 'expected a number from 0 to %g, got %s' % (
            MAX_ALLOCATION_RATIO, exception.echo(value))
    return None


def _uuid_reason(value):
    if uuidutils.is_uuid_like(value):
        return None
    return 'not a UUID: %s' % exception.echo(value)


#: format -> ``reason(string)``: why the string is not of it, or None
FORMATS = {
    'uuid': _uuid_reason,
    'name': names.name_problem,
    'trait': _model_reason(generic_inventory.check_trait),
    'provider-kind': _model_reason(generic_inventory.check_kind),
    'resource-class': _model_reason(generic_inventory.check_resource_class),
    'allocation-ratio': _ratio_reason,
}
#: string keyword -> its format
STRING_KEYWORDS = {'name': 'name', 'trait': 'trait',
                   'providerKind': 'provider-kind',
                   'ratioText': 'allocation-ratio'}
#: keyword on the keys of a mapping -> their format
KEY_KEYWORDS = {'nameKeys': 'name', 'resourceClassKeys': 'resource-class'}


def _rule(check):
    """A value rule from a model rule returning ``(path, reason)``."""
    def rule(value, instance):
        problem = check(instance)
        if problem:
            return Problem(tuple(problem[0]), problem[1])
        return None
    return rule


def claims_something(value, spec):
    if resource_groups.claims_nothing(spec):
        return Problem(('flavor',), 'requests no resources (0 vcpus, 0 MB, '
                       '0 GB): nothing to claim')
    return None


def cpu_settings(value, spec):
    if not isinstance(spec.get('flavor'), dict):
        return None
    try:
        cpu_policy.guest_cpus(spec)
    except exception.InvalidField as exc:
        return Problem(reason=exc.kwargs['reason'],
                       field=exc.kwargs['field'])
    return None


def distinct_uuids(value, uuids):
    seen = set()
    for index, uuid in enumerate(uuids or ()):
        if uuid in seen:
            return Problem((index,), 'duplicate instance uuid %s' % uuid)
        seen.add(uuid)
    return None


def states_capacity(value, report):
    if report.get('inventories'):
        return None
    missing = [field for field in CLASSIC_CAPACITY if field not in report]
    if missing:
        return Problem((missing[0],), 'missing: a report states its '
                       'capacity (%s, or inventories); left out, it would '
                       'read as zero' % ', '.join(CLASSIC_CAPACITY))
    return None


def _capacities(report):
    """(path, amount, ratio) of each capacity of a report."""
    for amount, ratio in _CLASSIC_RATIOS:
        yield (amount,), report.get(amount), report.get(ratio)
    inventories = report.get('inventories')
    for rc, inventory in (inventories if isinstance(
            inventories, dict) else {}).items():
        if isinstance(inventory, dict):
            yield (('inventories', rc, 'total'), inventory.get('total'),
                   inventory.get('allocation_ratio'))


def capacity_fits(value, report):
    for path, amount, ratio in _capacities(report):
        if isinstance(amount, bool) or isinstance(ratio, bool) or \
                not isinstance(amount, (int, float)) or \
                not isinstance(ratio, (int, float)):
            continue
        if math.isfinite(ratio) and amount * ratio > _INT64_MAX:
            return Problem(path, '%s x allocation ratio %g is more than a '
                           '64-bit capacity' % (amount, ratio))
    return None


def _utc_stamp(stamp):
    """A timestamp (a datetime, or ISO 8601 text as oslo.versionedobjects
    sends one) as a naive UTC datetime; None if it is neither."""
    if isinstance(stamp, str):
        try:
            # oslo.versionedobjects' own form is read by the standard
            # library (a tenth of iso8601's cost); any other ISO 8601 by
            # oslo.utils, as reading the field will
            stamp = datetime.datetime.fromisoformat(stamp)
        except ValueError:
            try:
                stamp = timeutils.parse_isotime(stamp)
            except ValueError:
                return None     # reading the field refuses it, naming it
    if not isinstance(stamp, datetime.datetime):
        return None
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return stamp


def build(limits):
    """``{keyword: rule}`` of every value rule (see module doc)."""

    def limit_maximum(option, number):
        maximum = getattr(limits, option)
        if isinstance(number, int) and number > maximum:
            return Problem(reason='%d is more than [limits] %s (%d)' %
                           (number, option, maximum))
        return None

    def not_in_future(value, instance):
        stamp = _utc_stamp(instance)
        if stamp is None:
            return None
        ahead = (stamp - timeutils.utcnow()).total_seconds()
        if ahead > limits.max_clock_skew:
            return Problem(reason='%s is %.0f s in the future (more than '
                           '[limits] max_clock_skew, %d s)' % (
                               stamp.isoformat(), ahead,
                               limits.max_clock_skew))
        return None

    return {
        'groupRules': _rule(resource_groups.group_problem),
        'uniqueGroupNames': _rule(resource_groups.duplicate_name),
        'oneComputeGroup': _rule(resource_groups.compute_groups_problem),
        'localityNamesGroups': _rule(resource_groups.locality_problem),
        'claimsSomething': claims_something,
        'cpuPolicy': cpu_settings,
        'statesCapacity': states_capacity,
        'capacityFits': capacity_fits,
        'distinctUuids': distinct_uuids,
        'limitMaximum': limit_maximum,
        'notInFuture': not_in_future,
    }
