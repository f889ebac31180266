"""Price one engine (a replica's setup) at every batch of the search space, with the roofline estimate.

Cost is shared across configurations: an engine is resolved once (model, system, efficiency, techniques) and
estimated once per batch limit; every aggregated or disaggregated configuration built from it (replica counts,
prefill/decode pool sizes) reuses those estimates. The kernel timings inside are memoized by shape, so batches
whose passes share shapes (the prefill passes of long prompts) cost little more.

Pruning is exact: a batch is skipped only when it is above the engine's max batch (the most sequences of
prompt + output tokens whose KV fits), because whether a batch fits is monotone in the batch
(roofline.estimate.max_batch_fitting), so a skipped batch could never be deployed."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..errors import WhatifError
from .space import EngineKey, SearchSpace

# Between disaggregated pools on different nodes the KV crosses the network: a 400 Gb/s RDMA NIC per GPU
# (assumed: the DGX/HGX H100 and B200 fabric; name another with kv_link).
CROSS_NODE_KV_LINK = "rdma-400g"


@dataclass(frozen=True)
class BatchPoint:
    """The roofline estimate of `batch` requests of the workload on one replica."""

    batch: int
    ttft_s: float              # prefill of all `batch` prompts (chunked)
    tpot_s: float              # mean decode step at `batch` sequences
    e2e_s: float               # ttft_s + (output - 1) * tpot_s
    throughput_tok_s: float    # batch * output / e2e_s


@dataclass(frozen=True)
class EngineProfile:
    """One engine's estimates: '' error and the batches that fit, or why it cannot run at all."""

    key: EngineKey
    error: str = ""                     # 'invalid: ...' or 'does not fit: ...' when no batch can run
    max_batch: int = 0                  # most sequences that fit memory, capped by the engine's max_num_seqs
    engine_cap: int | None = None       # the serving engine's max_num_seqs (None: no engine spec)
    engine_name: str = ""
    points: tuple[BatchPoint, ...] = ()
    prefill_s: float = 0.0              # one prompt's prefill: a request's own TTFT
    kv_send_node_s: float = 0.0         # one prompt's KV to a decode replica in the same node
    kv_send_net_s: float = 0.0          # ... on another node (CROSS_NODE_KV_LINK or the space's kv_link)
    estimates: int = 0                  # roofline estimates run

    @property
    def gpus(self) -> int:
        return self.key.gpus


def engine_scenario(space: SearchSpace, key: EngineKey, batch: int = 1):
    """The scenario `whatif estimate` would run for this engine at `batch` (the API's and brute force's)."""
    from ..roofline.config import Parallelism, Precision
    from ..roofline.estimate import Workload
    from ..scenario import Scenario
    par = Parallelism(key.tp, key.pp, key.ep, key.dp_attention)
    return Scenario(model=space.model, hardware=key.hardware, parallel=par,
                    precision=Precision(weight=key.weight, kv=key.kv),
                    workload=Workload(batch=batch, prompt=space.prompt, output=space.output,
                                      prefill_chunk=space.prefill_chunk),
                    efficiency=space.efficiency, techniques=tuple(key.techniques))


def _overflow_text(est) -> str:
    over = est.memory.overflow()
    if not over:
        return "no room for one sequence's KV cache"
    tier, need, usable = over[0]
    return f"{tier} needs {need / 1e9:.1f} GB per GPU, usable {usable / 1e9:.1f} GB"


def evaluate_engine(space: SearchSpace, key: EngineKey) -> EngineProfile:
    """Estimate `key` at each batch of the space up to its max batch: Scenario.run, exactly as `whatif estimate`
    and `whatif.estimate` run it (model, system and efficiency loads are cached, so each run is the estimate)."""
    sc = engine_scenario(space, key)

    def run(batch: int):
        return replace(sc, workload=replace(sc.workload, batch=batch)).run(with_max_batch=False)

    try:
        one = run(1)
    except WhatifError as exc:
        return EngineProfile(key, error=f"invalid: {exc}", estimates=1)
    if one.max_batch < 1:
        return EngineProfile(key, error=f"does not fit: {_overflow_text(one)}", estimates=1)
    points, count = [], 1
    for b in sorted(set(space.batches)):
        if b > one.max_batch:
            break        # every larger batch overfills too (fit is monotone in the batch), or the engine caps it
        est = one if b == 1 else run(b)
        count += b != 1
        points.append(BatchPoint(b, est.ttft_s, est.tpot_s, est.e2e_s, est.throughput_tok_s))
    node_s = net_s = 0.0
    if "disaggregated" in space.modes:
        node_s, net_s = _kv_send_times(space, one)
    engine = getattr(one, "engine", None)
    return EngineProfile(key, max_batch=one.max_batch, engine_cap=getattr(engine, "max_num_seqs", None),
                         engine_name=getattr(engine, "name", ""), points=tuple(points), prefill_s=one.ttft_s,
                         kv_send_node_s=node_s, kv_send_net_s=net_s, estimates=count)


def _kv_send_times(space: SearchSpace, one) -> tuple[float, float]:
    """Seconds to send one prompt's KV from a prefill replica to a decode replica, inside a node (the system's
    GPU link) and across nodes; each GPU sends its shard (the estimate's per-GPU KV bytes), one copy per layer,
    as the simulator does."""
    from ..roofline.ops import transfer
    from ..roofline.timing import time_op
    from ..simulator.iteration_time import kv_link_path
    system = one.system
    nbytes = one.memory.sequence_kv_bytes(space.prompt)
    layers = math.ceil(one.model.num_layers / one.parallel.pp)

    def send(link: str | None) -> float:
        try:
            path = kv_link_path(system, link)
        except WhatifError:
            return math.inf      # no link between the pools: a disaggregated cluster cannot run here
        op = transfer("kv_send", nbytes, path, direction="d2h", blocks=layers)
        return time_op(op, system.gpu, one.efficiency).total_s

    return send(space.kv_link), send(space.kv_link or CROSS_NODE_KV_LINK)
