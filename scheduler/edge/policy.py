"""Who may call which RPC method: oslo.policy rules and their enforcement.

Every ``SchedulerManager`` RPC method is guarded by one rule,
``scheduler:<method>``. By default every rule is ``rule:service_or_admin``:
the caller's context must carry the ``service`` role (conductors and
resource trackers) or the ``admin`` role. The roles are asserted by the
sender, so the broker's users and permissions are the real boundary (see
doc/source/admin/security.rst); policy guards against misconfigured or buggy
callers and lets an operator narrow or widen each method.

Operators override rules in ``[oslo_policy] policy_file`` (``policy.yaml``
next to ``scheduler.conf``); ``etc/scheduler/policy.yaml.sample`` lists
every rule with its default (``oslopolicy-sample-generator
--namespace scheduler``). Example: let a ``placement`` role place too::

    "scheduler:select_destinations": "rule:service_or_admin or role:placement"

A change of the policy file takes effect within
``RELOAD_CHECK_SECONDS`` (1 s) if it loads and defines every rule it
refers to; a file with a mistake is not applied: the running rules stay
and one warning says why (``scheduler-status upgrade check`` and SIGHUP
check the file the same way). oslo.policy looks for the file and its
modification time on every check, which cost a worker more than its
whole policy decision per call; here it looks at most once a second.
Between two looks a worker remembers each verdict per rule and caller
credentials (``_Enforcer.allows``): the rules cannot have changed, and
the target is the caller's own project and user, so the same credentials
get the same answer. oslo.policy inspects every check's signature on
every call (about 0.2 ms of a decision's CPU,
doc/source/performance-history.rst); a conductor's calls all carry the same
credentials.

A refused call raises ``scheduler.exception.Forbidden`` naming the rule, as
an expected exception: the caller catches it, the worker logs one warning
and keeps serving. Usage on an endpoint method::

    @policy.authorize('select_destinations')
    def select_destinations(self, ctxt, ...):   # self.conf: a ConfigOpts

A message evaluates its rule once: the RPC edge enforces it and calls the
method the decorator wraps (``authorized``); the decorator's own check is
for in-process callers.

Entry points: ``oslo.policy.policies`` -> ``list_rules`` and
``oslo.policy.enforcer`` -> ``get_enforcer`` (for oslopolicy-checker and
oslopolicy-policy-generator).
"""

import functools
import threading
import time
import types
import weakref

from oslo_config import cfg
from oslo_log import log as logging
from oslo_messaging.rpc import dispatcher as rpc_dispatcher
from oslo_policy import policy as oslo_policy

from scheduler import exception

LOG = logging.getLogger(__name__)

PREFIX = 'scheduler:'
SERVICE_ROLE = 'service'
ADMIN_ROLE = 'admin'

BASE_RULES = [
    oslo_policy.RuleDefault(
        'context_is_admin', 'role:%s' % ADMIN_ROLE,
        description='Operators: may call every method and see host names '
        'in NoValidHost diagnoses.'),
    oslo_policy.RuleDefault(
        'service_role', 'role:%s' % SERVICE_ROLE,
        description='Control-plane services (conductors, resource '
        'trackers) calling the scheduler.'),
    oslo_policy.RuleDefault(
        'service_or_admin', 'rule:service_role or rule:context_is_admin',
        description='The default of every scheduler method.'),
]

# method -> what its rule guards (the help text in policy.yaml.sample)
METHODS = {
    'select_destinations': 'Ask for destinations (a call); each one '
    'returned is claimed for its instance.',
    'update_resource_stats': 'Report a host\'s inventory and usage '
    '(resource trackers).',
    'delete_allocations': 'Release the claims of a consumer (instance '
    'deleted, build failed).',
    'sync_instance_info': 'Tell which instances a host runs; claims of '
    'others are released after a grace period.',
    'update_aggregates': 'Create or update host aggregates (zones, '
    'ratios, isolation metadata).',
    'delete_aggregate': 'Delete a host aggregate.',
    'update_instance_info': 'Record instances running on a host.',
    'delete_instance_info': 'Forget an instance running on a host.',
    'build_failed': 'Record a failed build on a host '
    '(BuildFailureWeigher).',
    'get_service_versions': 'Read the live workers\' releases and RPC '
    'versions (clients with [upgrade_levels] scheduler = auto).',
}


def list_rules():
    """Every default rule (``oslo.policy.policies`` entry point)."""
    return BASE_RULES + [
        oslo_policy.RuleDefault(PREFIX + method, 'rule:service_or_admin',
                                description=help_text)
        for method, help_text in METHODS.items()]


RELOAD_CHECK_SECONDS = 1.0


class _Enforcer(oslo_policy.Enforcer):
    """oslo.policy's Enforcer, looking for a changed policy file (and
    policy dirs) at most once per ``RELOAD_CHECK_SECONDS``; a forced
    reload always reads them."""

    _next_check = None
    #: {(rule, credentials): bool} since the last look at the files
    _verdicts = None

    def load_rules(self, force_reload=False):
        now = time.monotonic()
        if (not force_reload and self._next_check is not None
                and now < self._next_check):
            return
        self._verdicts = {}
        if self._next_check is None or force_reload:
            super().load_rules(force_reload)    # start-up: errors raise
        else:
            self._reload_or_keep()
        self._next_check = now + RELOAD_CHECK_SECONDS

    _refused_change = None

    def _reload_or_keep(self):
        """A policy file changed while serving: its rules replace the
        running ones only if it loads and every rule it names is defined;
        otherwise the running rules stay and one warning says why (once
        per change of the file), and no call sees the error."""
        running = oslo_policy.Rules(dict(self.rules), self.rules.default_rule)
        try:
            super().load_rules()
            valid = self.check_rules()
            problem = None if valid else ('a rule refers to an undefined '
                                          'rule or to itself')
        except Exception as exc:    # yaml, OS and oslo.policy errors
            problem = '%s: %s' % (type(exc).__name__, exc)
        if problem is None:
            self._refused_change = None
            return
        self.rules = running
        if problem != self._refused_change:
            LOG.warning('Policy file %s not applied, the running rules '
                        'stay: %s', self.policy_path or
                        self.conf.oslo_policy.policy_file,
                        exception.cut(problem.replace('\n', ' '), 300))
        self._refused_change = problem

    def allows(self, rule, ctxt):
        """Whether ``ctxt`` passes ``rule`` on its own project and user,
        remembered until the next look at the policy files."""
        self.load_rules()
        verdicts = self._verdicts
        credentials = _credentials(ctxt)
        key = (rule, credentials)
        verdict = verdicts.get(key) if credentials is not None else None
        if verdict is None:
            target = {'project_id': getattr(ctxt, 'project_id', None),
                      'user_id': getattr(ctxt, 'user_id', None)}
            verdict = bool(self.authorize(rule, target, ctxt,
                                          do_raise=False))
            if credentials is not None and len(verdicts) < MAX_VERDICTS:
                verdicts[key] = verdict
        return verdict


#: verdicts remembered between two looks at the policy files (callers
#: with distinct credentials beyond it are checked every time)
MAX_VERDICTS = 4096


def _credentials(ctxt):
    """What oslo.policy reads of a caller, as a hashable key (None when
    it has none: that caller is checked every time)."""
    to_policy_values = getattr(ctxt, 'to_policy_values', None)
    if to_policy_values is None:
        return None
    try:
        key = tuple(sorted(
            (name, tuple(value) if isinstance(value, list) else value)
            for name, value in dict(to_policy_values()).items()))
        hash(key)
    except TypeError:
        return None
    return key


def new_enforcer(conf):
    """An Enforcer on ``conf`` with every default registered."""
    enforcer = _Enforcer(conf)
    enforcer.register_defaults(list_rules())
    return enforcer


def get_enforcer():
    """``oslo.policy.enforcer`` entry point for the oslopolicy tools.

    They parse their own command line on ``cfg.CONF``; the scheduler's
    daemon and tests never use that global object.
    """
    conf = cfg.ConfigOpts()
    conf([], project='scheduler')
    return new_enforcer(conf)


def check_policy_file(conf):
    """Load the operator's policy file now, so that a file that does not
    parse, or refers to rules nobody defined, stops start-up with
    ``InvalidPolicy`` instead of failing every call later."""
    enforcer = new_enforcer(conf)
    path = conf.oslo_policy.policy_file
    try:
        enforcer.load_rules(force_reload=True)
        path = enforcer.policy_path or path
        valid = enforcer.check_rules()
    except Exception as exc:  # oslo.policy raises yaml, OS and its own
        raise exception.InvalidPolicy(path=path, reason='%s: %s' % (
            type(exc).__name__, exc))
    if not valid:
        raise exception.InvalidPolicy(
            path=path, reason='a rule refers to an undefined rule or to '
            'itself (see the log)')


def check(enforcer, ctxt, method):
    """Raise ``Forbidden`` unless ``ctxt`` passes ``scheduler:<method>``."""
    rule = PREFIX + method
    if enforcer.allows(rule, ctxt):
        return
    raise exception.Forbidden(
        rule=rule, roles=', '.join(getattr(ctxt, 'roles', None) or [])
        or 'none', check=str(enforcer.rules.get(rule, '')))


class EndpointPolicy:
    """An endpoint's policy: the ``Enforcer`` built on its ``conf`` at
    first use (a worker reads its policy file once). Each endpoint whose
    methods are ``authorize``-d holds one as ``policy``, made in its
    constructor."""

    def __init__(self, conf):
        self.conf = conf
        self._enforcer = None
        self._lock = threading.Lock()

    @property
    def enforcer(self):
        if self._enforcer is None:
            with self._lock:
                if self._enforcer is None:
                    self._enforcer = new_enforcer(self.conf)
        return self._enforcer


def enforce(endpoint, ctxt, method):
    """Return if policy lets ``ctxt`` call ``method`` of ``endpoint``;
    otherwise log the refusal once, as a warning naming the rule and the
    caller, and raise it as an expected ``Forbidden`` (a cast's sender
    sees nothing; the worker logs no traceback)."""
    try:
        check(endpoint.policy.enforcer, ctxt, method)
    except exception.Forbidden as exc:
        LOG.warning('Refused %s from user %s project %s: %s',
                    method, getattr(ctxt, 'user_id', None),
                    getattr(ctxt, 'project_id', None), exc)
        raise rpc_dispatcher.ExpectedException()


def authorized(endpoint, method, ctxt):
    """``endpoint``'s ``method`` as the RPC edge calls it, policy
    evaluated here, once: a refused ``ctxt`` is answered now (``enforce``);
    an allowed one gets the method without its ``authorize`` decorator,
    which would evaluate the same rule again (a tenth of a tracker
    report's dispatch)."""
    enforce(endpoint, ctxt, method)
    return unchecked(endpoint, method)


def unchecked(endpoint, method):
    """``endpoint``'s ``method`` without its ``authorize`` decorator, for
    a caller that evaluated policy already (the RPC edge)."""
    func = getattr(endpoint, method)
    inner = _UNCHECKED.get(getattr(func, '__func__', None))
    if inner is None:
        # not ``authorize``'s own wrapper (another decorator around it):
        # call it whole, its check included
        return func
    return types.MethodType(inner, endpoint)


#: ``authorize``'s wrappers -> the methods they wrap (weak: a class that
#: goes takes its entries with it)
_UNCHECKED = weakref.WeakKeyDictionary()


def authorize(method):
    """Decorator: the endpoint method runs only if policy allows it
    (``enforce``). The RPC edge evaluates the rule itself and calls the
    method it wraps (``authorized``); in-process callers (the simulator,
    the bench, tests) go through this check.
    """
    if method not in METHODS:
        raise ValueError('no policy rule for method %r' % method)

    def decorator(func):
        @functools.wraps(func)
        def wrapper(self, ctxt, *args, **kwargs):
            enforce(self, ctxt, method)
            return func(self, ctxt, *args, **kwargs)
        _UNCHECKED[wrapper] = func
        return wrapper
    return decorator
