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
* ``distinctUuids``: no UUID twice (a consumer claimed twice);
* ``limitMaximum``: at most the ``[limits]`` option it names;
* ``notInFuture``: a timestamp at most ``[limits] max_clock_skew`` ahead;
* ``ratioText``: a string holding a finite number >= 0.

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
from scheduler.model import resource_groups


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
    except (TypeError, ValueError):
        ratio = float('nan')
    if not math.isfinite(ratio) or ratio < 0:
        yield _error('expected a finite number >= 0, got %r' % (instance,))


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
        'distinctUuids': distinct_uuids,
        'limitMaximum': limit_maximum,
        'notInFuture': not_in_future,
        'ratioText': ratio_text,
    }
