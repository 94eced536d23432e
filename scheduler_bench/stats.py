"""Percentiles and summaries of latency samples.

Percentiles use linear interpolation between closest ranks (numpy's
default, also Excel's PERCENTILE.INC), so p50 of ``[1, 2]`` is 1.5 and the
p100 of any sample is its maximum. Latencies are given in seconds and
summarized in milliseconds.

    >>> summarize([0.001, 0.002, 0.003, 0.004])['p50']
    2.5
"""

import math

import numpy as np

PERCENTILES = (50, 90, 99)


def percentile(samples, pct):
    """The ``pct`` percentile (0..100) of ``samples``; NaN if empty."""
    if not 0 <= pct <= 100:
        raise ValueError('percentile must be within 0..100, got %r' % pct)
    values = np.asarray(samples, dtype=np.float64)
    if not values.size:
        return math.nan
    return float(np.percentile(values, pct))


def summarize(seconds):
    """count, mean, p50, p90, p99 and max of ``seconds``, in ms."""
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    out = {'count': int(ms.size)}
    if not ms.size:
        out.update(mean=math.nan, max=math.nan,
                   **{'p%d' % p: math.nan for p in PERCENTILES})
        return out
    for pct, value in zip(PERCENTILES, np.percentile(ms, PERCENTILES)):
        out['p%d' % pct] = round(float(value), 3)
    out['mean'] = round(float(ms.mean()), 3)
    out['max'] = round(float(ms.max()), 3)
    return out


def rate(count, seconds):
    """``count`` per second over ``seconds``; 0 for an empty interval."""
    return count / seconds if seconds > 0 else 0.0


def buckets(keys, values, edges):
    """Group ``values`` by which ``edges`` interval their ``keys`` fall in.

    Returns a list of ``(low, high, [values])``, one per interval
    ``[edges[i], edges[i+1])``; the last interval includes its upper edge.
    """
    keys = np.asarray(keys, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    out = []
    for i in range(len(edges) - 1):
        low, high = edges[i], edges[i + 1]
        last = i == len(edges) - 2
        mask = (keys >= low) & ((keys <= high) if last else (keys < high))
        out.append((low, high, values[mask].tolist()))
    return out
