"""Why a request found no host: a step per filter, hosts in and out.

``Diagnosis.reason(show_hosts)`` reads like
``0/1200 hosts: 800 removed by ResourceFitFilter (MEMORY_MB: 800), 400
removed by AvailabilityZoneFilter (not in zone 'az2')``; host names are
only included for admin callers. ``as_dict`` is the structured form sent
with ``NoValidHost``. With no host known at all (a fresh deployment whose
trackers have not reported yet) the reason says so:
``0/0 hosts: no hosts have reported yet ...``.
"""

MAX_NAMES = 20
NO_HOSTS = ('no hosts have reported yet (resource trackers send '
            'update_resource_stats; "scheduler-manage host list" shows what '
            'the scheduler knows)')


class Diagnosis:

    def __init__(self, total_hosts):
        self.total_hosts = total_hosts
        self.steps = []
        self.claim_conflicts = 0
        self.note = None

    def add(self, name, hosts_in, hosts_out, removed_names, detail=None):
        self.steps.append({'filter': name, 'hosts_in': hosts_in,
                           'hosts_out': hosts_out, 'detail': detail,
                           'removed': list(removed_names[:MAX_NAMES])})

    @property
    def hosts_left(self):
        if not self.steps:
            return self.total_hosts
        last = self.steps[-1]
        return last['hosts_in'] - last['hosts_out']

    def reason(self, show_hosts=False):
        parts = []
        for step in self.steps:
            if not step['hosts_out']:
                continue
            text = '%d removed by %s' % (step['hosts_out'], step['filter'])
            details = [step['detail']] if step['detail'] else []
            if show_hosts and step['removed']:
                more = step['hosts_out'] - len(step['removed'])
                details.append('hosts: ' + ', '.join(step['removed']) +
                               (' and %d more' % more if more > 0 else ''))
            if details:
                text += ' (%s)' % '; '.join(details)
            parts.append(text)
        summary = '%d/%d hosts' % (self.hosts_left, self.total_hosts)
        if not self.total_hosts:
            parts.append(NO_HOSTS)
        if parts:
            summary += ': ' + ', '.join(parts)
        if self.note:
            summary += '; ' + self.note
        if self.claim_conflicts:
            summary += '; %d claim conflicts with other workers' % (
                self.claim_conflicts)
        return summary

    def as_dict(self, show_hosts=False):
        steps = []
        for step in self.steps:
            step = dict(step)
            if not show_hosts:
                step.pop('removed')
            steps.append(step)
        return {'total_hosts': self.total_hosts, 'steps': steps,
                'claim_conflicts': self.claim_conflicts, 'note': self.note}
