"""ImagePropertiesFilter: hosts that can run the image's kind of guest.

Image properties read (the legacy name in brackets is accepted too):

* ``hw_architecture`` (``architecture``), ``img_hv_type``
  (``hypervisor_type``) and ``hw_vm_mode`` (``vm_mode``): a host passes if
  one of its ``supported_instances`` ``[arch, hv_type, vm_mode]`` triples
  has every requested value at its place. Values are compared lower-case
  after mapping common aliases (``amd64`` is ``x86_64``, ``xapi`` is
  ``xen``, ``hv`` is ``hvm``...). A place the host leaves unsaid (a
  shorter triple, an empty string: the Placement feed knows a host's
  architecture from its ``HW_ARCH_*`` trait only) takes any value. A
  host that reports no triples fails any such request.
* ``img_hv_requested_version`` (``hypervisor_version_requires``): clauses
  ``<op><version>`` separated by commas, ``op`` one of ``>= > <= < == !=``
  (default ``==``), e.g. ``>=6.0.0,<8.0``. A dotted version is compared
  with ``hypervisor_version`` read as dotted groups of three digits
  (6002001 is 6.2.1); a plain integer such as ``>=6000`` is compared with
  the integer itself. A host that reports no version fails. Unlike nova,
  the version is checked even when no architecture, hypervisor type or
  mode is requested.

An image without these properties passes everywhere. A malformed version
requirement raises ``InvalidField`` naming the property.
"""

import operator
import re

from scheduler import exception
from scheduler.filters import base

_ALIASES = {
    'amd64': 'x86_64', 'x64': 'x86_64', 'x86_32': 'i686', 'x86': 'i686',
    'i386': 'i686', 'i486': 'i686', 'i586': 'i686', 'ia32': 'i686',
    'arm64': 'aarch64', 'armhf': 'armv7l', 'ppc64el': 'ppc64le',
    'xapi': 'xen', 'pv': 'xen', 'hv': 'hvm', 'baremetal': 'hvm',
}
_PROPERTIES = (('hw_architecture', 'architecture'),
               ('img_hv_type', 'hypervisor_type'),
               ('hw_vm_mode', 'vm_mode'))
_VERSION_PROPERTIES = ('img_hv_requested_version',
                       'hypervisor_version_requires')
_OPERATORS = {'>=': operator.ge, '>': operator.gt, '<=': operator.le,
              '<': operator.lt, '==': operator.eq, '!=': operator.ne}
_CLAUSE = re.compile(r'^\s*(>=|<=|==|!=|>|<)?\s*(\d+(?:\.\d+)*)\s*$')


def _canonical(value):
    if not value:
        return None
    value = str(value).strip().lower()
    return _ALIASES.get(value, value)


def _first(props, names):
    for name in names:
        if props.get(name):
            return name, props[name]
    return None, None


def _parse_version_requirement(name, text):
    clauses = []
    for clause in text.split(','):
        found = _CLAUSE.match(clause)
        if not found:
            raise exception.InvalidField(
                field='image.properties.%s' % name,
                reason='expected comparisons like ">=6.0.0" or ">=6000" '
                       'separated by commas, got %r' % text)
        op, version = found.groups()
        clauses.append((_OPERATORS[op or '=='], version))
    return clauses


def _wanted(request):
    """(triple of wanted values or None, version clauses) of the image."""
    image = request.spec.get('image')
    props = (image.get('properties') if image is not None else None) or {}
    triple = tuple(_canonical(_first(props, names)[1])
                   for names in _PROPERTIES)
    name, text = _first(props, _VERSION_PROPERTIES)
    clauses = _parse_version_requirement(name, text) if text else []
    return (triple if any(triple) else None), clauses


def _dotted(number):
    groups = []
    while number:
        number, group = divmod(number, 1000)
        groups.insert(0, group)
    return tuple(groups) or (0,)


def _version_ok(host_version, clauses):
    for compare, version in clauses:
        if '.' in version:
            have = _dotted(host_version)
            want = tuple(int(g) for g in version.split('.'))
            width = max(len(have), len(want))
            have += (0,) * (width - len(have))
            want += (0,) * (width - len(want))
        else:
            have, want = host_version, int(version)
        if not compare(have, want):
            return False
    return True


def _supports(supported_instances, triple):
    for offered in supported_instances or ():
        offered = tuple(_canonical(v) for v in offered) + (None,) * 3
        if all(w is None or o is None or w == o
               for w, o in zip(triple, offered)):
            return True
    return False


class ImagePropertiesFilter(base.BaseFilter):

    judges_image = True

    def applies_to(self, request):
        triple, clauses = self._wanted(request)
        return triple is not None or bool(clauses)

    @staticmethod
    def _wanted(request):
        return request.derived('image_properties.wanted',
                               lambda: _wanted(request))

    def check_request(self, request):
        self._wanted(request)

    def host_passes(self, host, request):
        triple, clauses = self._wanted(request)
        attributes = host.attributes
        if triple is not None and not _supports(
                attributes.get('supported_instances'), triple):
            return False
        if clauses:
            version = attributes.get('hypervisor_version')
            if version is None or not _version_ok(int(version), clauses):
                return False
        return True
