"""In-memory, columnar view of every provider, refreshed incrementally.

``HostTable`` holds one numpy array per attribute (free amount per resource
class, disabled, availability zone index, report time ...), so filters and
weighers work on whole columns. ``HostStateCache`` keeps a worker's table in
step with the database by pulling only rows whose change_seq is newer than
the last one it saw.
"""

from scheduler.host_state.cache import HostStateCache  # noqa: F401
from scheduler.host_state.table import HostTable  # noqa: F401
from scheduler.host_state.table import HostView  # noqa: F401
