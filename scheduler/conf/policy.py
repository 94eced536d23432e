"""``[oslo_policy]``: where the operator's policy overrides live.

The options are oslo.policy's own (``policy_file``, ``policy_dirs``,
``enforce_new_defaults`` ...), registered here so they exist on a private
``ConfigOpts`` before the first RPC call builds the enforcer, and listed in
the config sample under oslo.policy's generator namespace. The default
``policy_file`` is ``policy.yaml``, looked up next to the config files;
with no file, every rule keeps its default (see
``etc/scheduler/policy.yaml.sample`` and ``scheduler.edge.policy``).
"""

from oslo_policy import opts as policy_opts

POLICY_FILE = 'policy.yaml'


def register_opts(conf):
    policy_opts.set_defaults(conf, policy_file=POLICY_FILE)


def list_opts():
    # Published by oslo.policy under its own generator namespace.
    return {}
