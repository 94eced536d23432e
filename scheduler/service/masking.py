"""Secrets out of anything the scheduler logs or prints.

``mask(text)`` returns ``text`` with every password replaced by ``***``:

* ``key=value`` and JSON/dict forms (``password=...``, ``"token": ...``)
  through ``oslo_utils.strutils.mask_password``;
* the password of every host of a URL, multi-host transport URLs included
  (``rabbit://u1:pw1@h1:5672,u2:pw2@h2:5672/vhost``), and of database URLs,
  percent-encoded or not, whatever characters it holds.
  ``mask_password`` (oslo.utils 10.x) leaves URL credentials alone, so this
  module masks them itself before handing the text to it.

``mask_dict(values)`` does the same for a mapping (config values, settings)
through ``oslo_utils.strutils.mask_dict_password`` and then ``mask`` on every
string it left; nested mappings and lists are masked too.

    >>> mask('rabbit://u1:pw1@h1:5672,u2:pw2@h2:5672/vh')
    'rabbit://u1:***@h1:5672,u2:***@h2:5672/vh'
"""

import re

from oslo_utils import strutils

SECRET = '***'

# scheme://netloc: the netloc ends at the first "/" or blank after the
# user info, which ends at the last "@" before a blank: a password quoted
# for kombu may hold a bare "/" (``amqp://u:p/w@h/``).
_NETLOC = re.compile(r'(\b[A-Za-z][\w+.-]*://)(\S*@[^/\s@]+|[^/\s]+)')
# A host without user info: name or address, optional port.
_BARE_HOST = re.compile(r'^(\[[0-9A-Fa-f:.]+\]|[\w.-]+)(:\d+)?$')


def mask(text):
    """``text`` (any object, as ``str``) with every password masked."""
    if text is None:
        return text
    text = _NETLOC.sub(_mask_netloc, str(text))
    return strutils.mask_password(text, secret=SECRET)


def _mask_netloc(match):
    netloc = match.group(2)
    hosts = netloc.split(',')
    # A multi-host URL (oslo.messaging splits hosts on ","), unless a
    # piece is neither user@host nor host[:port]: then the "," is part of
    # a password and the netloc is one host.
    if not all('@' in host or _BARE_HOST.match(host) for host in hosts):
        hosts = [netloc]
    return match.group(1) + ','.join(_mask_userinfo(h) for h in hosts)


def _mask_userinfo(host):
    userinfo, at, hostport = host.rpartition('@')
    if not at or ':' not in userinfo:
        return host
    return '%s:%s@%s' % (userinfo.split(':', 1)[0], SECRET, hostport)


def mask_dict(values):
    """A copy of mapping ``values`` with every secret masked."""
    return _mask_strings(strutils.mask_dict_password(values, secret=SECRET))


def _mask_strings(value):
    if isinstance(value, dict):
        return {key: _mask_strings(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_mask_strings(item) for item in value)
    if isinstance(value, str):
        return mask(value)
    return value
