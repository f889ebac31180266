"""A closed-loop load: N clients, each sending its next request the moment its last one is answered, as a
benchmark at fixed concurrency drives a server (`vllm bench serve --max-concurrency`, `genai-perf
--concurrency`, aiperf `--concurrency`, `trtllm-bench --concurrency`).

The clients run on the simulation's clock (ClientLoop): the first N requests are sent at t = 0, and each
later one (in id order) the moment a request is answered (finished, or refused at once). A sent request
crosses the server's front end before the engine sees it: HTTP, tokenization and hand-off (the engine
spec's `frontend`), one request at a time, since the OpenAI servers tokenize on one thread (vLLM's API server:
vllm-project/vllm#25301; SGLang's TokenizerManager and trtllm-serve likewise run one asyncio loop). So N
requests sent together reach the engine one front-end time apart, which is what keeps real clients from
moving in lockstep. A disaggregated cluster's requests cross as many front ends as it has prefill workers, each
one request at a time: each worker's own server tokenizes what it is handed (trtllm-serve disaggregated, SGLang's
PD router), and NVIDIA Dynamo's Rust frontend tokenizes on a multi-threaded runtime (worker threads = cores:
dynamo lib/runtime/src/config.rs RuntimeConfig.num_worker_threads). A record's `request.sent_s` is its send time
and `arrival_s` the time it reached the engine: `ttft_s` is the engine's, `served_ttft_s(frontend)` the client's
(send to first token). No think time: a client sends at once; the answer's own way back (detokenizing the last
token) is not simulated."""
from __future__ import annotations

import heapq

from ..errors import WhatifError
from .request import REJECTED


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


class ClientLoop:
    """`clients` clients sending `records` (in order) to `cluster` through `lanes` front ends `frontend` (a
    FrontEnd, or None for none): started by `start` on the clock, told of each answer by `answered`."""

    def __init__(self, env, cluster, records: list, clients: int, frontend, lanes: int = 1):
        self.env, self.cluster, self.records, self.clients = env, cluster, records, clients
        self.frontend = frontend
        self.sent = 0               # records sent so far (the first `sent` of `records`)
        self.front_free = [0.0] * lanes   # when each front end is done with the requests it holds (a heap)

    def start(self, _arg=None) -> None:
        for _ in range(self.clients):
            self._send()

    def answered(self, _rec=None) -> None:
        self._send()

    def _send(self) -> None:
        if self.sent >= len(self.records):
            return
        rec = self.records[self.sent]
        self.sent += 1
        now = self.env.now
        work = self.frontend.seconds(rec.request.prompt) if self.frontend is not None else 0.0
        done = max(now, self.front_free[0]) + work   # one request at a time per front end, the first free one
        heapq.heapreplace(self.front_free, done)
        rec.request = rec.request.sent(now, done)
        self.env.at(done - now, self._deliver, rec)

    def _deliver(self, rec) -> None:
        self.cluster.arrive(rec)
        if rec.status == REJECTED:   # refused when it reaches the engine: answered at once
            self.answered(rec)
