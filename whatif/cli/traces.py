"""Trace scaling for `whatif capacity`: a recorded trace replayed at another arrival rate."""
from __future__ import annotations

from dataclasses import replace

from ..errors import WhatifError


def trace_rate(requests, path) -> float:
    """A trace's own mean arrival rate, req/s, over the span of its arrivals."""
    span = requests[-1].arrival_s - requests[0].arrival_s if requests else 0.0
    if len(requests) < 2 or span <= 0:
        raise WhatifError(f"--trace {path}: capacity scales the trace's arrival times to each rate, which needs "
                          "two or more requests arriving at different times")
    return (len(requests) - 1) / span


def time_scaled(requests, factor: float) -> list:
    """The same requests with their arrival times stretched by `factor` from the first arrival."""
    t0 = requests[0].arrival_s
    return [replace(r, arrival_s=t0 + (r.arrival_s - t0) * factor) for r in requests]
