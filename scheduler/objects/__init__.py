"""Versioned objects on the wire, in the ``scheduler`` namespace.

Importing this package registers every object; they are then reachable as
``scheduler.objects.RequestSpec`` etc. Objects hold data and compatibility
only: persistence lives in ``scheduler.db``, legacy dict translation in one
named constructor per object (``RequestSpec.from_primitives``,
``ComputeNode.from_stats``).
"""

from scheduler.objects.aggregate import Aggregate  # noqa: F401
from scheduler.objects.base import SchedulerObjectSerializer  # noqa: F401
from scheduler.objects.compute_node import ComputeNode  # noqa: F401
from scheduler.objects.instance_info import InstanceInfo  # noqa: F401
from scheduler.objects.notification import SelectDestinationsPayload  # noqa: F401,E501
from scheduler.objects.request_spec import Destination  # noqa: F401
from scheduler.objects.request_spec import Flavor  # noqa: F401
from scheduler.objects.request_spec import ImageMeta  # noqa: F401
from scheduler.objects.request_spec import InstanceGroup  # noqa: F401
from scheduler.objects.request_spec import RequestSpec  # noqa: F401
from scheduler.objects.request_spec import SchedulerRetries  # noqa: F401
from scheduler.objects.resource_group import LocalityRule  # noqa: F401
from scheduler.objects.resource_group import ResourceGroup  # noqa: F401
from scheduler.objects.selection import Selection  # noqa: F401
