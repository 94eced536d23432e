"""The keywords this project adds to JSON Schema, for rules it cannot say.

Each keyword is a jsonschema keyword function ``(validator, value,
instance, schema)`` yielding ``ValidationError``; the rule itself lives
once, in the model module that owns it, and is only named here:

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

``build(limits)`` returns ``{keyword: function}`` reading ``limits``
(``conf.limits``) at each check, so a reloaded option applies at once.
An error's ``path`` is relative to the instance; an error with a
``field`` attribute names that field instead of its path.
"""

import datetime
import math

from jsonschema import exceptions as js_exceptions
from oslo_utils import timeutils

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


def _error(reason, path=(), field=None):
    error = js_exceptions.ValidationError(reason, path=path)
    error.field = field
    return error


def _named(check):
    """Keyword from a model check ``check(name, path)`` raising
    InvalidField."""
    def keyword(validator, value, instance, schema):
        if not value:
            return
        try:
            check(instance, '')
        except exception.InvalidField as exc:
            yield _error(exc.kwargs['reason'])
    return keyword


def resource_class_keys(validator, value, instance, schema):
    if not value or not isinstance(instance, dict):
        return
    for key in instance:
        try:
            generic_inventory.check_resource_class(key, '')
        except exception.InvalidField as exc:
            yield _error(exc.kwargs['reason'], path=[key])


def _rule(check):
    """Keyword from a model rule returning ``(path, reason)`` or None."""
    def keyword(validator, value, instance, schema):
        if not value or not isinstance(instance, (dict, list)):
            return
        problem = check(instance)
        if problem:
            yield _error(problem[1], path=problem[0])
    return keyword


def claims_something(validator, value, instance, schema):
    if value and isinstance(instance, dict) and \
            resource_groups.claims_nothing(instance):
        yield _error('requests no resources (0 vcpus, 0 MB, 0 GB): nothing '
                     'to claim', path=['flavor'])


def cpu_settings(validator, value, instance, schema):
    if not value or not isinstance(instance, dict) or \
            not isinstance(instance.get('flavor'), dict):
        return
    try:
        cpu_policy.guest_cpus(instance)
    except exception.InvalidField as exc:
        yield _error(exc.kwargs['reason'], field=exc.kwargs['field'])


def distinct_uuids(validator, value, instance, schema):
    if not value or not isinstance(instance, list):
        return
    seen = set()
    for index, uuid in enumerate(instance):
        if uuid in seen:
            yield _error('duplicate instance uuid %s' % uuid, path=[index])
            return
        seen.add(uuid)


def ratio_text(validator, value, instance, schema):
    if not value:
        return
    try:
        ratio = float(instance)
    except (TypeError, ValueError, OverflowError):
        ratio = float('nan')
    if not math.isfinite(ratio) or not 0 <= ratio <= MAX_ALLOCATION_RATIO:
        yield _error('expected a number from 0 to %g, got %s' % (
            MAX_ALLOCATION_RATIO, exception.echo(instance)))


def name(validator, value, instance, schema):
    if value and isinstance(instance, str):
        problem = names.name_problem(instance)
        if problem:
            yield _error(problem)


def name_keys(validator, value, instance, schema):
    if not value or not isinstance(instance, dict):
        return
    for key in instance:
        problem = names.name_problem(key)
        if problem:
            yield _error('not a name: %s' % problem, path=[key])
            return


def states_capacity(validator, value, instance, schema):
    if not value or not isinstance(instance, dict) or \
            instance.get('inventories'):
        return
    missing = [field for field in CLASSIC_CAPACITY if field not in instance]
    if missing:
        yield _error('missing: a report states its capacity (%s, or '
                     'inventories); left out, it would read as zero' %
                     ', '.join(CLASSIC_CAPACITY), path=[missing[0]])


def _capacities(report):
    """(path, amount, ratio) of each capacity of a report's view."""
    for amount, ratio in _CLASSIC_RATIOS:
        yield [amount], report.get(amount), report.get(ratio)
    inventories = report.get('inventories')
    for rc, inventory in (inventories if isinstance(
            inventories, dict) else {}).items():
        if isinstance(inventory, dict):
            yield (['inventories', rc, 'total'], inventory.get('total'),
                   inventory.get('allocation_ratio'))


def capacity_fits(validator, value, instance, schema):
    if not value or not isinstance(instance, dict):
        return
    for path, amount, ratio in _capacities(instance):
        if not isinstance(amount, (int, float)) or \
                not isinstance(ratio, (int, float)):
            continue
        if math.isfinite(ratio) and amount * ratio > _INT64_MAX:
            yield _error('%s x allocation ratio %g is more than a 64-bit '
                         'capacity' % (amount, ratio), path=path)
            return


def build(limits):
    """``{keyword: function}`` of every project keyword (see module doc)."""

    def limit_maximum(validator, option, instance, schema):
        maximum = getattr(limits, option)
        if isinstance(instance, int) and instance > maximum:
            yield _error('%d is more than [limits] %s (%d)' %
                         (instance, option, maximum))

    def not_in_future(validator, value, instance, schema):
        if not value or not isinstance(instance, datetime.datetime):
            return
        stamp = instance
        if stamp.tzinfo is not None:
            stamp = stamp.astimezone(datetime.timezone.utc).replace(
                tzinfo=None)
        ahead = (stamp - timeutils.utcnow()).total_seconds()
        if ahead > limits.max_clock_skew:
            yield _error('%s is %.0f s in the future (more than [limits] '
                         'max_clock_skew, %d s)' % (
                             stamp.isoformat(), ahead, limits.max_clock_skew))

    return {
        'trait': _named(generic_inventory.check_trait),
        'providerKind': _named(generic_inventory.check_kind),
        'resourceClassKeys': resource_class_keys,
        'groupRules': _rule(resource_groups.group_problem),
        'uniqueGroupNames': _rule(resource_groups.duplicate_name),
        'oneComputeGroup': _rule(resource_groups.compute_groups_problem),
        'localityNamesGroups': _rule(resource_groups.locality_problem),
        'claimsSomething': claims_something,
        'cpuPolicy': cpu_settings,
        'name': name,
        'nameKeys': name_keys,
        'statesCapacity': states_capacity,
        'capacityFits': capacity_fits,
        'distinctUuids': distinct_uuids,
        'limitMaximum': limit_maximum,
        'notInFuture': not_in_future,
        'ratioText': ratio_text,
    }
