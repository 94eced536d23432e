"""A standalone scheduler service for cloud control planes.

Conductors ask it where instances should go (``select_destinations``);
resource trackers tell it what each host has (``update_resource_stats``).
See ``scheduler.client.SchedulerClient`` for the library other services
import, and ``scheduler.manager`` for the RPC endpoint.
"""

import warnings

# oslo.messaging imports oslo.service's eventlet helpers at import time; the
# scheduler uses threads only, so eventlet's deprecation notice is noise.
warnings.filterwarnings('ignore', message=r'(?s)\s*Eventlet is deprecated')
