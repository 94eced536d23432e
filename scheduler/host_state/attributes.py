"""AttributeStore: each provider's tracker attributes, decoded on demand.

The database holds a provider's attributes (everything a ``ComputeNode``
reports beyond its own columns) as JSON text of about 3 KB. Decoded into a dict
per host they were most of a worker's memory (331 MB at 100k hosts,
doc/source/performance-history.rst) and a third of its cold load, although only
the per-host filters and weighers that need them read them, and only for the
rows still in the running. The store keeps the text and decodes a row on its
first read (``store[row]``), keeping the dict until the row changes;
``each_decoded()`` walks every row without keeping what it decodes (for
building a numeric column once); ``texts()`` walks the stored texts.

What a plugin derives from a host's attributes (its NUMA cells, its PCI
pools) is derived once per row change, not once per request
(kube-scheduler's NodeInfo): ``store.derived(row, name, compute)`` calls
``compute(attributes)`` the first time ``name`` is asked of ``row`` and
returns the same value until ``set(row, ...)`` replaces the row's
attributes. Derived values are shared by every request: they must not be
mutated by their readers.
"""

import json


class AttributeStore:

    def __init__(self):
        self._raw = []
        self._decoded = {}
        # row -> {name: value}, see derived()
        self._derived = {}

    def __len__(self):
        return len(self._raw)

    def append(self):
        self._raw.append(None)

    def extend(self, texts):
        """Append one row per JSON text (or None) of ``texts``."""
        self._raw.extend(text or None for text in texts)

    def set(self, row, attributes):
        """``attributes``: JSON text (as stored), a dict, or None."""
        self._decoded.pop(row, None)
        self._derived.pop(row, None)
        if isinstance(attributes, dict):
            self._raw[row] = None
            self._decoded[row] = attributes
        else:
            self._raw[row] = attributes or None

    def __getitem__(self, row):
        decoded = self._decoded.get(row)
        if decoded is None:
            decoded = self._decode(row)
            self._decoded[row] = decoded
        return decoded

    def peek(self, row):
        """The row's attributes, without keeping them decoded."""
        decoded = self._decoded.get(row)
        return decoded if decoded is not None else self._decode(row)

    def derived(self, row, name, compute):
        """``compute(attributes of row)``, computed once per row change
        (an exception is not cached)."""
        values = self._derived.get(row)
        if values is None:
            values = self._derived[row] = {}
        try:
            return values[name]
        except KeyError:
            value = values[name] = compute(self[row])
            return value

    def texts(self):
        """Each row's attributes as stored: JSON text, or None (none, or
        set from a dict); for measuring what the store holds."""
        return iter(self._raw)

    def texts_of(self, rows):
        """The stored texts of ``rows`` (a list of row numbers), as
        ``texts()`` gives them, without decoding any."""
        return map(self._raw.__getitem__, rows)

    def each_decoded(self):
        for row in range(len(self._raw)):
            yield row, self.peek(row)

    def _decode(self, row):
        raw = self._raw[row]
        return json.loads(raw) if raw else {}
