"""A run's records as time arrays, and the windows the summary measures over: the busy window (first arrival to
last finish) and the steady one (warm-up and drain left out)."""
from __future__ import annotations

import numpy as np

from .request import Record

STEADY_SHARE = 0.1   # arrivals left out at each end of the steady-state window (warm-up, drain)


def record_times(records: list[Record]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(arrival, first token, first scheduled, finish) seconds of each record as float arrays, None as NaN."""
    return (np.array([r.request.arrival_s for r in records], dtype=float),
            np.array([r.first_token_s for r in records], dtype=float),
            np.array([r.first_scheduled_s for r in records], dtype=float),
            np.array([r.finish_s for r in records], dtype=float))


def busy_window_s(arrival: np.ndarray, finish: np.ndarray) -> float | None:
    """Seconds from the first arrival to the last finish (None when nothing finished), from record_times'
    arrival and finish arrays."""
    done = finish[~np.isnan(finish)]
    return float(done.max() - arrival.min()) if len(done) else None


def steady_window(finish: np.ndarray) -> tuple[float, float, int] | None:
    """(from, to, completions between) seconds: the STEADY_SHARE-th and the (1 - STEADY_SHARE)-th completion,
    from record_times' finish array. Completions come as fast as requests arrive when nothing queues, as fast as
    the engine serves past capacity; dropping the first and last ones leaves out warm-up and drain. None for
    fewer than 10 finished requests."""
    ends = np.sort(finish[~np.isnan(finish)])
    k = int(len(ends) * STEADY_SHARE)
    if len(ends) < 10 or ends[-1 - k] <= ends[k]:
        return None
    return float(ends[k]), float(ends[-1 - k]), len(ends) - 1 - 2 * k
