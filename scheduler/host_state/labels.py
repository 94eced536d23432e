"""ProviderLabels: kind, traits and locality of every HostTable row, as
numpy columns, so a request group is matched by whole-column operations
and never by a Python loop over providers.

* ``kind``: an int32 column of kind ids (``kind_id(name)``);
* one boolean column per trait ever seen (``has_trait``);
* one int32 column per locality key ever seen (``'rack'``, ``'row'`` ...,
  and ``'host'``, which every row has): the id of the row's value, -1 where
  the provider reports none (``locality``).

Rows are set by ``HostTable`` as providers are loaded; a row update costs
the traits and keys of its old and new report, not the number of columns.
"""

import numpy as np

HOST_SCOPE = 'host'


class ProviderLabels:

    def __init__(self, allocated):
        self._allocated = allocated
        self.kind = np.zeros(allocated, dtype=np.int32)
        self.kind_names = []
        self._kind_index = {}
        self._traits = {}          # trait -> bool column
        self._locality = {}        # key -> int32 column of value ids
        self._values = {}          # key -> {value: id}
        self._row_traits = []
        self._row_keys = []

    def grow(self, size):
        self.kind = _grown(self.kind, size, 0)
        self._traits = {t: _grown(c, size, False)
                        for t, c in self._traits.items()}
        self._locality = {k: _grown(c, size, -1)
                          for k, c in self._locality.items()}
        self._allocated = size

    def append(self):
        self._row_traits.append(frozenset())
        self._row_keys.append(frozenset())

    def set_bulk(self, kinds, hosts, n):
        """Label the first ``n`` rows of an empty table: their kinds and
        host names (no traits, no other locality yet)."""
        ids = {kind: self.kind_id(kind or 'compute') for kind in set(kinds)}
        self.kind[:n] = np.fromiter((ids[k] for k in kinds), np.int32, n)
        column = self._column(self._locality, HOST_SCOPE, -1)
        values = self._values.setdefault(HOST_SCOPE, {})
        # ids in order of first appearance, as value_id gives them
        column[:n] = np.fromiter(
            (values.setdefault(host, len(values)) for host in hosts),
            np.int32, n)
        self._row_traits.extend([frozenset()] * n)
        self._row_keys.extend([frozenset((HOST_SCOPE,))] * n)

    def set_row(self, row, kind, traits, locality):
        """Label ``row``: its kind, traits (names) and locality (a dict
        with at least the ``'host'`` key)."""
        self.kind[row] = self.kind_id(kind or 'compute')
        traits = frozenset(traits or ())
        for trait in self._row_traits[row] - traits:
            self._traits[trait][row] = False
        for trait in traits:
            self._column(self._traits, trait, False)[row] = True
        self._row_traits[row] = traits
        keys = frozenset(k for k, v in locality.items() if v)
        for key in self._row_keys[row] - keys:
            self._locality[key][row] = -1
        for key in keys:
            self._column(self._locality, key, -1)[row] = self.value_id(
                key, locality[key])
        self._row_keys[row] = keys

    def _column(self, columns, name, default):
        column = columns.get(name)
        if column is None:
            dtype = bool if default is False else np.int32
            column = columns[name] = np.full(self._allocated, default,
                                             dtype=dtype)
        return column

    def kind_id(self, name):
        index = self._kind_index.get(name)
        if index is None:
            index = self._kind_index[name] = len(self.kind_names)
            self.kind_names.append(name)
        return index

    def value_id(self, key, value):
        values = self._values.setdefault(key, {})
        index = values.get(value)
        if index is None:
            index = values[value] = len(values)
        return index

    def value_count(self, key):
        """How many distinct values locality ``key`` has had."""
        return len(self._values.get(key, ()))

    # -- masks over the first ``size`` rows --------------------------------

    def of_kind(self, name, size):
        index = self._kind_index.get(name)
        if index is None:
            return np.zeros(size, dtype=bool)
        return self.kind[:size] == index

    def has_trait(self, trait, size):
        column = self._traits.get(trait)
        if column is None:
            return np.zeros(size, dtype=bool)
        return column[:size]

    def locality(self, key, size):
        """Value ids of locality ``key`` (-1: the provider has none)."""
        column = self._locality.get(key)
        if column is None:
            return np.full(size, -1, dtype=np.int32)
        return column[:size]


def _grown(column, size, default):
    new = np.full(size, default, dtype=column.dtype)
    new[:len(column)] = column
    return new
