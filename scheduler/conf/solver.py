"""[solver] options: the solver driver's model size, time budget and
batch window.

Read only when ``[scheduler] driver = solver``
(``scheduler.driver.solver``).
"""

from oslo_config import cfg

GROUP = cfg.OptGroup('solver', title='Solver driver options')

solver_opts = [
    cfg.IntOpt('max_candidates',
               default=200, min=1,
               help='How many hosts the solver driver gives its model per '
                    'request: those that pass every filter and can take at '
                    'least one instance, best first by the weighers. The '
                    'model grows with this number, its answer cannot use '
                    'the hosts left out; a request the model cannot place '
                    'among them is placed by the filter scheduler over '
                    'every host instead. Related options: '
                    '[scheduler] driver, time_budget_ms.'),
    cfg.FloatOpt('time_budget_ms',
                 default=30.0, min=1.0,
                 help='Milliseconds the solver may spend on one request. '
                      'Without a proven optimum by then, the request is '
                      'placed by the filter scheduler (greedy), the log says '
                      'so in one line and the driver counts it. Related '
                      'options: [scheduler] driver, max_candidates, '
                      'batch_window_ms.'),
    cfg.FloatOpt('batch_window_ms',
                 default=0.0, min=0.0,
                 help='Windowed batches: requests that reach one worker '
                      'within this many milliseconds of the first are '
                      'planned by one model, which places first the most '
                      'instances (whole requests only), then by the '
                      'weighers; each request is still claimed on its '
                      'own, all or nothing, and planned alone when the '
                      'window left it out, its hosts changed meanwhile, or '
                      'the window model found no proven optimum within '
                      'time_budget_ms. Every request waits up to the '
                      'window before it is planned. Requests with a '
                      'soft-affinity or soft-anti-affinity group or with '
                      'resource groups are not batched. 0 (the default) '
                      'turns windows off. Related options: [scheduler] '
                      'driver, time_budget_ms, max_candidates.'),
]


def register_opts(conf):
    # a fresh group each time (see scheduler.conf.scheduler)
    conf.register_group(cfg.OptGroup(GROUP.name, title=GROUP.title))
    conf.register_opts(solver_opts, group=GROUP)


def list_opts():
    return {GROUP: solver_opts}
