"""The overload verdict: is the offered load more than the run sustains? Then the queue grows for as long as the
run lasts, and the tail of every latency that includes queueing measures the run's length, not the deployment."""
from __future__ import annotations

import numpy as np

from .metrics_text import QUEUED_LATENCIES, TAIL_KEYS

SUSTAIN_SHARE = 0.9   # sustained below 90% of offered: short of the offered rate beyond a run's sampling noise
GROWTH = 2.0          # and the late arrivals wait over twice as long for their first token as the early ones, by
                      # at least a quarter of what the rate deficit predicts (the busy window's drain biases
                      # the sustained rate low): the queue grows
EDGE_SHARE = 0.25     # the first and the last quarter of arrivals compared


def _waits(arrival, first_token, end_s: float) -> list[float]:
    """Each request's wait for its first token (admitted into a large batch, a prompt still waits for its prefill
    chunks); one without a first token (NaN) has waited at least until the end. Arrays in, a list of floats out
    (the float arithmetic a record's own times give)."""
    return (np.where(np.isnan(first_token), end_s, first_token) - arrival).tolist()


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def overload(arrival, first_token, end_s: float, offered: float | None, sustained: float | None) -> dict:
    """{overloaded, offered_rps, sustained_rps, queue_growth_rps, early/late mean wait}. `arrival`, `first_token`:
    the records' times as arrays (record_windows.record_times: None as NaN), in arrival order; `sustained`:
    completions per second of the busy window (first arrival to last finish), which an overloaded engine, busy
    throughout, holds at its service rate (None when nothing finished)."""
    n = len(arrival)
    k = max(1, int(n * EDGE_SHARE))
    early_s = _mean(_waits(arrival[:k], first_token[:k], end_s))
    late_s = _mean(_waits(arrival[-k:], first_token[-k:], end_s))
    short = offered is not None and (sustained is None or sustained < SUSTAIN_SHARE * offered)
    # no records (nothing arrived inside the run): no spread of arrivals to compare
    between = _mean(arrival[-k:].tolist()) - _mean(arrival[:k].tolist()) if n else 0.0
    predicted = (1 - (sustained or 0.0) / offered) * between if short else 0.0
    growing = (early_s is not None and late_s is not None and late_s > GROWTH * early_s
               and late_s - early_s > 0.25 * predicted)
    over = bool(short and growing and n >= 10)
    growth = (offered - (sustained or 0.0)) if over else None
    return {"overloaded": over, "offered_rps": offered, "sustained_rps": sustained, "queue_growth_rps": growth,
            "unbounded": {"latencies": list(QUEUED_LATENCIES), "stats": list(TAIL_KEYS)} if over else None,
            "early_wait_s": early_s, "late_wait_s": late_s,
            "rule": f"sustained (completions per second of the busy window) below {SUSTAIN_SHARE:.0%} of offered, "
                    f"and the last {EDGE_SHARE:.0%} of arrivals waiting for their first token over {GROWTH:g}x as "
                    f"long as the first {EDGE_SHARE:.0%}, by at least a quarter of the growth the deficit predicts"}


def verdict_line(o: dict) -> str | None:
    """The line a report says first when the run is overloaded, else None."""
    if not o.get("overloaded"):
        return None
    sustained = "-" if o["sustained_rps"] is None else f"{o['sustained_rps']:.3g}"
    growth = ("" if o["queue_growth_rps"] is None else
              f"; the queue grows by {o['queue_growth_rps']:.3g} requests per second")
    return (f"OVERLOADED: offered {o['offered_rps']:.3g} req/s, sustained {sustained} req/s{growth}. Tail "
            f"latencies that include queueing (TTFT, E2EL, queue: p90 and up, marked +) are unbounded: they grow "
            f"with the run's length; lower --rate, or add replicas (see `whatif capacity`)")
