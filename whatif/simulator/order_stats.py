"""Order statistics of a run's latencies: p50/p90/p95/p99 (numpy's linear interpolation), mean and max, of plain
values (stats) and of values each repeated a count of times (counted_stats: inter-token gaps held as runs)."""
from __future__ import annotations

import numpy as np

from .metrics_text import PERCENTILES, STAT_KEYS


def stats(values) -> dict:
    """p50/p90/p95/p99 (numpy's linear interpolation), mean and max; all None when there are no values."""
    if len(values) == 0:
        return dict.fromkeys(STAT_KEYS)
    a = np.asarray(values, dtype=float)
    out = {f"p{p}": float(v) for p, v in zip(PERCENTILES, percentiles(a))}
    out.update(mean=float(a.mean()), max=float(a.max()))
    return out


QUANTILES = np.true_divide(np.asanyarray(PERCENTILES), 100)   # (np.percentile's own division)


def percentiles(a: np.ndarray) -> np.ndarray:
    """np.percentile(a, PERCENTILES) float for float: its linear method's order statistics (here from a full sort,
    where it partitions) and its _lerp, without the np.unique its partition calls, which imports numpy.ma (~20 ms
    of a CLI run's start). NaN when `a` holds one, as numpy answers."""
    s = np.sort(a)   # (NaN sorts last)
    if np.isnan(s[-1]):
        return np.full(len(QUANTILES), np.nan)
    n = len(s)
    virtual = (n - 1) * QUANTILES
    prev = np.floor(virtual)
    nxt = prev + 1
    above = virtual >= n - 1
    prev[above], nxt[above] = -1, -1
    prev, nxt = prev.astype(np.intp), nxt.astype(np.intp)
    gamma = np.asanyarray(virtual - prev, dtype=virtual.dtype)
    a_, b_ = s[prev], s[nxt]
    diff = b_ - a_
    out = np.add(a_, diff * gamma)
    np.subtract(b_, diff * (1 - gamma), out=out, where=gamma >= 0.5, casting="unsafe", dtype=type(out.dtype))
    return out


def counted_stats(values: np.ndarray, counts: np.ndarray) -> dict:
    """stats() of `values` each repeated `counts` times, without repeating them: the same order statistics
    and numpy's linear interpolation between them."""
    keep = counts > 0
    v, w = values[keep], counts[keep]
    if not len(v):
        return dict.fromkeys(STAT_KEYS)
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    upto = np.cumsum(w)
    n = upto[-1]

    def ranked(r):   # the value at 0-based rank r of the repeated, sorted values
        return v[np.searchsorted(upto, r, side="right")]

    out = {}
    for p in PERCENTILES:
        h = (n - 1) * p / 100.0
        lo = np.floor(h)
        t = h - lo
        a, b = ranked(lo), ranked(min(lo + 1, n - 1))
        out[f"p{p}"] = float(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t)   # numpy's _lerp
    out.update(mean=float((v * w).sum() / n), max=float(v[-1]))
    return out
