"""Weigher plugins: how good each candidate host is.

A weigher returns one raw weight per candidate row; the driver normalizes
each weigher's weights to 0..1 and multiplies them by the weigher's
``multiplier``. Weighers are stevedore entry points in the
``scheduler.weighers`` namespace.
"""
