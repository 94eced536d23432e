"""Request context carried with every RPC message.

A thin ``oslo_context.RequestContext`` subclass; callers may pass any
``oslo_context.RequestContext``, the serializer rebuilds it as this class.

Roles decide what a caller may do (``scheduler.edge.policy``): conductors and
resource trackers send the ``service`` role, operators the ``admin`` role::

    from scheduler.context import RequestContext
    conductor = RequestContext(user_id='conductor', project_id='service',
                               roles=['service'])

``service_context(name)`` builds exactly that. The ``is_admin`` flag of
oslo.context is a sender's claim like any other and grants nothing here:
only the ``admin`` role does.
"""

from oslo_context import context as oslo_context

ADMIN_ROLE = 'admin'
SERVICE_ROLE = 'service'


class RequestContext(oslo_context.RequestContext):

    @property
    def is_admin_caller(self):
        """True if the caller has the admin role (sees host names in
        diagnoses); the ``is_admin`` flag alone does not count."""
        return ADMIN_ROLE in (self.roles or [])


def service_context(user_id, project_id='service', **kwargs):
    """The context a conductor or tracker sends: the ``service`` role."""
    return RequestContext(user_id=user_id, project_id=project_id,
                          roles=[SERVICE_ROLE], **kwargs)


def get_admin_context():
    return RequestContext(is_admin=True, roles=[ADMIN_ROLE],
                          overwrite=False)
