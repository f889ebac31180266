"""A closed-loop load: N clients, each sending its next request the moment its last one finishes, as a
benchmark at fixed concurrency drives a server (`vllm bench serve --max-concurrency`, `genai-perf
--concurrency`, `trtllm-bench --concurrency`).

Run as an open simulation: every request queued at t = 0 in id order and the engine holding at most N
(never more than its own limit), so a request is admitted no earlier than a slot frees. Afterwards each
request gets the time its client sent it: the first N at 0, and each later one (in id order) when the client
that was free first got its last answer (its finish; a rejected request answers at once). With identical
clients and a first-come scheduler that is the same schedule a client-driven run would produce; the check
below fails loudly if a request was admitted before its client sent it. TTFT, E2E and queue time then count
from the send, as the benchmark measures them. No think time: a client sends at once.

A cluster of several engines (replicas, disaggregated pools, attention-DP ranks) is driven by the clients
themselves (`client_driven`): the first N requests are sent at t = 0 and each answer (a finish, or a rejection)
sends the client's next one at that moment, through the cluster's routers like any arrival."""
from __future__ import annotations

import heapq
from dataclasses import replace

from ..errors import WhatifError

SLACK_S = 1e-9   # float rounding between a finish time and the admission step it freed


def check_closed_loop(cfg) -> None:
    """The settings a closed loop cannot take, each a one-line error naming what is valid."""
    w = cfg.workload
    if w.duration_s is not None:
        raise WhatifError("--concurrency: a closed loop runs --requests (N requests through N clients); drop "
                          "--duration")
    if w.turns > 1 or w.trace is not None:
        raise WhatifError("--concurrency: a closed loop sends generated single-turn requests; drop --turns/--trace")
    if cfg.horizon_s is not None:
        raise WhatifError("--concurrency: a closed loop runs until every request is answered; drop --horizon")


def client_driven(cfg) -> bool:
    """Whether the clients drive the run themselves: more than one engine serves the load (replicas, pools,
    attention-DP ranks), so 'the engine holds at most N' is no longer the same schedule."""
    cl = cfg.cluster
    return cl.replicas > 1 or cl.disaggregated or cfg.scenario.parallelism().attention_dp > 1


def closed_loop_run(cfg, requests, run):
    """`run(cfg, requests)` (the open simulation) of `requests` sent by `cfg.workload.concurrency` clients;
    the result's records carry each request's send time as its arrival."""
    check_closed_loop(cfg)
    clients = cfg.workload.concurrency
    queued = [replace(r, arrival_s=0.0) for r in requests]
    scheduler = replace(cfg.scheduler, max_batch=min(cfg.scheduler.max_batch, clients))
    result = run(replace(cfg, scheduler=scheduler), queued)
    free = [0.0] * clients     # when each client is free to send (a heap)
    for rec in sorted(result.records, key=lambda r: r.request.id):
        sent = heapq.heappop(free)
        if rec.first_scheduled_s is not None and rec.first_scheduled_s < sent - SLACK_S:
            raise AssertionError(f"request {rec.request.id} admitted at {rec.first_scheduled_s} s, before its "
                                 f"client sent it at {sent} s")
        rec.request = replace(rec.request, arrival_s=sent)
        heapq.heappush(free, rec.finish_s if rec.finish_s is not None else sent)
    return result
