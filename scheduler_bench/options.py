"""What one ``scheduler-bench`` invocation was asked to do."""

import dataclasses
import tempfile


@dataclasses.dataclass
class Options:
    db: str = 'postgresql'
    #: the server to create the bench database on (None: the local one
    #: of ``db``, ``cluster.ADMIN_URLS``)
    db_url: str = None
    quick: bool = False
    output_dir: str = 'bench-results'
    plot: bool = False
    #: cluster sizes from --hosts (None: each scenario's default)
    hosts: list = None
    seed: int = 1
    progress: bool = True
    #: False: skip everything that needs RabbitMQ
    rpc: bool = True
    #: requests per measured series (None: each scenario's default)
    requests: int = None
    #: where server configs and logs go (a temporary directory if None)
    workdir: str = None

    def __post_init__(self):
        if self.workdir is None:
            self.workdir = tempfile.mkdtemp(prefix='scheduler-bench-')

    def scales(self, default, quick):
        """Cluster sizes of a multi-size scenario."""
        if self.hosts:
            return list(self.hosts)
        return list(quick if self.quick else default)

    def size(self, default, quick):
        """Cluster size of a single-size scenario: the first --hosts."""
        if self.hosts:
            return self.hosts[0]
        return quick if self.quick else default

    def pick(self, default, quick):
        """A knob that --quick scales down."""
        return quick if self.quick else default

    def count(self, default, quick):
        """Requests in one measured series (--requests overrides)."""
        return self.requests or self.pick(default, quick)
