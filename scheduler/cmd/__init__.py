"""Console scripts: ``scheduler-server``, ``-manage``, ``-status``, ``-sim``.

Each reads its arguments into a ``ConfigOpts`` of its own and calls the
package; what a command prints and its exit status are decided here.
"""
