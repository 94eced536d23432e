"""[solver] options: the solver driver's model size and time budget.

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
                      'options: [scheduler] driver, max_candidates.'),
]


def register_opts(conf):
    # a fresh group each time (see scheduler.conf.scheduler)
    conf.register_group(cfg.OptGroup(GROUP.name, title=GROUP.title))
    conf.register_opts(solver_opts, group=GROUP)


def list_opts():
    return {GROUP: solver_opts}
