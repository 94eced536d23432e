"""AttributeStore: each provider's tracker attributes, decoded on demand.

The database holds a provider's attributes (everything a ``ComputeNode``
reports beyond its own columns) as JSON text of about 3 KB. Decoded into a
dict per host they were most of a worker's memory (331 MB at 100k hosts,
doc/performance.rst) and a third of its cold load, although only the
per-host filters and weighers that need them read them, and only for the
rows still in the running. The store keeps the text and decodes a row on
its first read (``store[row]``), keeping the dict until the row changes;
``each_decoded()`` walks every row without keeping what it decodes (for
building a numeric column once).
"""

import json


class AttributeStore:

    def __init__(self):
        self._raw = []
        self._decoded = {}

    def __len__(self):
        return len(self._raw)

    def append(self):
        self._raw.append(None)

    def set(self, row, attributes):
        """``attributes``: JSON text (as stored), a dict, or None."""
        self._decoded.pop(row, None)
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

    def each_decoded(self):
        for row in range(len(self._raw)):
            yield row, self.peek(row)

    def _decode(self, row):
        raw = self._raw[row]
        return json.loads(raw) if raw else {}
