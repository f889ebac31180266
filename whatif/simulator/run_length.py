"""Is a run long enough to judge its rate? By Little's law a deployment serving rate r with requests lasting W
seconds holds r x W of them at once; a run reaches that steady state only W seconds after its first arrival. A run
whose arrivals stop sooner (N / r < W) measures the burst of N requests absorbed by an empty server, not the rate:
gpt-oss-120b on one H200 (1k/1k, 150 requests) meets TTFT 1 s / TPOT 30 ms at 64 req/s, its batch never past 150,
where 2,000 requests fail above 7.25 req/s, the batch of ~220 that rate holds slowing TPOT past 30 ms (session 75 C)."""
from __future__ import annotations

import numpy as np

from ..specs import units

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


# A closed loop of N clients is not judged: its load is the N clients, held from the first send, not a rate it must
# reach (Little's law gives its rate as an answer, not a target); its first wave of N prompts sent together is what
# a benchmark client at --concurrency N measures too (vllm bench serve --max-concurrency starts N at once).
CLOSED_LOOP = ("not judged: a closed loop's load is its clients, held from the first send, not an arrival rate to "
               "reach")
RULE = (f"open loop: the arrivals must span {SPANS:g} mean request latencies (Little's law: a rate r of requests "
        f"lasting W holds r x W at once, reached W after the first arrival)")


def judged(arrival: np.ndarray, finish: np.ndarray, end_s: float, closed_loop: bool) -> dict:
    """run_length's figures for a run's summary: {judged, long_enough (None when not judged), span_s, latency_s,
    requests_needed, spans, rule}; a closed loop is not judged (CLOSED_LOOP)."""
    r = run_length(arrival, finish, end_s)
    if closed_loop:
        return {**r, "judged": False, "long_enough": None, "requests_needed": None, "spans": SPANS,
                "rule": CLOSED_LOOP}
    return {**r, "judged": True, "spans": SPANS, "rule": RULE}


def short_line(r: dict, arrived: int, overloaded: bool = False) -> str | None:
    """The line a report says near its top when an open-loop run is too short to judge its rate, else None; none
    for an `overloaded` run (overload.verdict_line: its queue grows, so no longer run would reach a steady state)."""
    if overloaded or r.get("long_enough") is not False:
        return None
    need = r["requests_needed"]
    more = f"; rerun with --requests >= {need:,} at this rate (a lower bound: latencies grow as the batch does)" \
        if need is not None else "; rerun with more --requests"
    return (f"TOO SHORT TO JUDGE THE RATE: the {arrived:,} arrivals spanned {units.seconds(r['span_s'])}, under "
            f"{r['spans']:g} mean request latencies ({r['spans']:g} x {units.seconds(r['latency_s'])}), so these "
            f"figures describe a burst absorbed by an empty server, not the rate's steady state{more}")
