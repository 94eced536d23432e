"""A date-time field that keeps its microseconds on the wire.

oslo.versionedobjects' ``DateTimeField`` sends ``YYYY-MM-DDTHH:MM:SSZ``:
two tracker reports of one host stamped within the same second then
arrive with equal stamps, and the scheduler, which keeps a report only if
it is newer than the stored one, drops the later one. ``DateTimeField``
here sends ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` (UTC) instead.

Both forms are read by every release (``timeutils.parse_isotime``), so the
wire stays compatible in both directions and the object's fingerprint is
unchanged: the field type keeps ovo's class name, ``DateTime``.
"""

import datetime

from oslo_versionedobjects import fields

_FORMAT = '%Y-%m-%dT%H:%M:%S.%fZ'


class DateTime(fields.DateTime):
    """ovo's ``DateTime``, sent with microseconds, in UTC."""

    def to_primitive(self, obj, attr, value):
        if value.utcoffset() is not None:
            value = value.astimezone(datetime.timezone.utc)
        return value.strftime(_FORMAT)


class DateTimeField(fields.DateTimeField):
    """ovo's ``DateTimeField`` (for ``isinstance``) with ``DateTime``."""

    def __init__(self, tzinfo_aware=True, **kwargs):
        self.AUTO_TYPE = DateTime(tzinfo_aware=tzinfo_aware)
        fields.AutoTypedField.__init__(self, **kwargs)
