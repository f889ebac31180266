"""Is a run long enough to judge its rate? By Little's law a deployment serving rate r with requests lasting W
seconds holds r x W of them at once; a run reaches that steady state only W seconds after its first arrival. A run
whose arrivals stop sooner (N / r < W) measures the burst of N requests absorbed by an empty server, not the rate:
gpt-oss-120b on one H200 (1k/1k, 150 requests) meets TTFT 1 s / TPOT 30 ms at 64 req/s, its batch never past 150,
where 2,000 requests fail above 7.25 req/s, the batch of ~220 that rate holds slowing TPOT past 30 ms (session 75 C)."""
from __future__ import annotations

import numpy as np

SPANS = 2.0   # arrivals must span this many mean request latencies: the first one is the warm-up ramp, so at least
              # half of the arrivals meet the steady state and decide a 90% attainment (assumed; as the search
              # re-check's FILLS = 3 fills of the batch, one of them warm-up)


def run_length(arrival: np.ndarray, finish: np.ndarray, end_s: float) -> dict:
    """{long_enough, span_s, latency_s, requests_needed}: `arrival`, `finish` from record_times (NaN: unfinished,
    counted as lasting until `end_s`, a lower bound). span_s: first to last arrival; latency_s: the mean request
    latency (arrival to finish); requests_needed: SPANS x the requests in the system at once (rate x latency)."""
    n = len(arrival)
    if n < 2:
        return {"long_enough": True, "span_s": 0.0, "latency_s": None, "requests_needed": None}
    span = float(arrival.max() - arrival.min())
    latency = float(np.mean(np.where(np.isnan(finish), end_s, finish) - arrival))
    needed = int(np.ceil(SPANS * latency * (n - 1) / span)) + 1 if span > 0 else None
    return {"long_enough": span >= SPANS * latency, "span_s": span, "latency_s": latency,
            "requests_needed": needed}
