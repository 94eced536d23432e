"""Console scripts: scheduler-server, scheduler-manage, scheduler-sim."""
