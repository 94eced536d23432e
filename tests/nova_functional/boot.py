"""Run a Python module with this scheduler behind nova's test seam.

``python -m tests.nova_functional.boot -m MODULE ARGS...`` runs
``MODULE`` as ``python -m MODULE ARGS...`` would, after
``harness.install()`` when ``SCHEDULER_NOVA_FUNCTIONAL=this`` (with
``nova``, nothing is installed: nova's own scheduler runs). stestr runs
its workers through it when ``PYTHON`` is ``python -m
tests.nova_functional.boot`` (``tools/nova-functional``)::

    PYTHON="python -m tests.nova_functional.boot" stestr run ...
"""

import os
import runpy
import sys


def main(argv):
    if len(argv) < 2 or argv[0] != '-m':
        sys.exit('usage: python -m tests.nova_functional.boot -m MODULE '
                 '[ARGS...]')
    choice = os.environ.get('SCHEDULER_NOVA_FUNCTIONAL', 'this')
    if choice not in ('this', 'nova'):
        sys.exit('SCHEDULER_NOVA_FUNCTIONAL must be "this" or "nova", got '
                 '%r' % choice)
    if choice == 'this':
        # nova's own concurrency set-up (eventlet or native threads) comes
        # before anything of the scheduler is imported, as in nova's runs
        import nova.tests.functional  # noqa: F401
        from tests.nova_functional import harness
        harness.install()
    sys.argv = [argv[1]] + argv[2:]
    runpy.run_module(argv[1], run_name='__main__', alter_sys=True)


if __name__ == '__main__':
    main(sys.argv[1:])
