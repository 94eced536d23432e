"""Request context carried with every RPC message.

A thin ``oslo_context.RequestContext`` subclass; callers may pass any
``oslo_context.RequestContext``, the serializer rebuilds it as this class.
"""

from oslo_context import context as oslo_context

ADMIN_ROLE = 'admin'


class RequestContext(oslo_context.RequestContext):

    @property
    def is_admin_caller(self):
        """True if the caller may see host names in diagnoses."""
        return bool(self.is_admin) or ADMIN_ROLE in (self.roles or [])


def get_admin_context():
    return RequestContext(is_admin=True, roles=[ADMIN_ROLE],
                          overwrite=False)
