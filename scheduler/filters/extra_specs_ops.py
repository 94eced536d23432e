"""Requirements written in flavor extra specs, matched against host values.

A requirement is an operator followed by operands, separated by spaces;
``parse(text)`` compiles it once, ``Requirement.matches(value)`` tests one
host value (a string, or None when the host does not report it)::

    >>> parse('>= 4').matches('8')
    True
    >>> parse('<or> kvm <or> qemu').matches('xen')
    False

Operators:

* numeric: ``=`` (at least: the host value is >= the operand), ``==``,
  ``!=``, ``>=``, ``<=``. A value or operand that is not a number does not
  match.
* string: ``s==``, ``s!=``, ``s>=``, ``s>``, ``s<=``, ``s<`` (lexical).
* ``<in> x``: the host value contains the substring ``x``.
* ``<all-in> x y ...``: the host value contains every one of the words.
* ``<or> a <or> b ...``: the host value is exactly one of the words.

Text that does not start with an operator must equal the host value
exactly. An operator with no operand never matches, nor does a missing
host value.
"""

import operator


def _numeric(compare):
    def method(value, operands):
        try:
            return compare(float(value), float(operands[0]))
        except ValueError:
            return False
    return method


def _string(compare):
    return lambda value, operands: compare(value, operands[0])


_METHODS = {
    '=': _numeric(operator.ge),
    '==': _numeric(operator.eq),
    '!=': _numeric(operator.ne),
    '>=': _numeric(operator.ge),
    '<=': _numeric(operator.le),
    's==': _string(operator.eq),
    's!=': _string(operator.ne),
    's>=': _string(operator.ge),
    's>': _string(operator.gt),
    's<=': _string(operator.le),
    's<': _string(operator.lt),
    '<in>': lambda value, operands: operands[0] in value,
    '<all-in>': lambda value, operands: all(w in value for w in operands),
    '<or>': lambda value, operands: value in operands,
}


class Requirement:
    """One compiled requirement; see the module docstring."""

    __slots__ = ('text', '_method', '_operands')

    def __init__(self, text):
        self.text = text
        words = text.split()
        self._method = _METHODS.get(words[0]) if words else None
        if self._method is None:
            self._operands = None
        elif words[0] == '<or>':
            # every other word is the '<or>' keyword itself
            self._operands = words[1::2]
        else:
            self._operands = words[1:]

    def matches(self, value):
        if self._method is None:
            return value == self.text
        if value is None or not self._operands:
            return False
        return self._method(value, self._operands)

    def __repr__(self):
        return 'Requirement(%r)' % self.text


def parse(text):
    return Requirement(text)


def match(value, text):
    """``parse(text).matches(value)``, for one-off checks."""
    return Requirement(text).matches(value)
