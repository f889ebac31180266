"""Price one replica setup at every batch of the search space, with the roofline estimate.

Cost is shared across configurations: an engine is resolved once (model, system, efficiency, techniques) and
estimated once per batch limit and prefill chunk; every aggregated or disaggregated configuration built from it
(replica counts, prefill/decode pool sizes) reuses those estimates. The kernel timings inside are memoized by
shape, so batches whose passes share shapes (the prefill passes of long prompts) cost little more. The chunk
changes only the prefill passes and the activation reserve (hence the max batch), not the decode steps, which are
about half of an estimate's time: so all chunks of an engine are priced in one call (one Ray task), and for an
engine without techniques the chunks after the first run a batch-1 estimate (the max batch and a request's own
prefill) and, per batch, only the prefill passes, reusing the first chunk's decode (shared_decode). The KV
transfer of disaggregated serving does not depend on the chunk and is priced once per engine.

Pruning is exact: a batch is skipped only when it is above the engine's max batch at that chunk (the most
sequences of prompt + output tokens whose KV fits beside a chunk's activations), because whether a batch fits
is monotone in the batch (roofline.estimate.max_batch_fitting), so a skipped batch could never be deployed."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..errors import WhatifError
from .space import DEFAULT_CHUNKS, ReplicaSetup, SearchSpace

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
class ReplicaProfile:
    """One engine's estimates at one prefill chunk: '' error and the batches that fit, or why it cannot run."""

    key: ReplicaSetup
    chunk: int = DEFAULT_CHUNKS[0]      # tokens per prefill pass (the engine's max_num_batched_tokens)
    error: str = ""                     # 'invalid: ...' or 'does not fit: ...' when no batch can run
    max_batch: int = 0                  # most sequences that fit memory, capped by the engine's max_num_seqs
    engine_cap: int | None = None       # the serving engine's max_num_seqs (None: no engine spec)
    engine_name: str = ""
    points: tuple[BatchPoint, ...] = ()
    prefill_s: float = 0.0              # one prompt's prefill: a request's own TTFT
    kv_send_node_s: float = 0.0         # one prompt's KV to a decode replica in the same node
    kv_send_net_s: float = 0.0          # ... on another node (CROSS_NODE_KV_LINK or the space's kv_link)
    estimates: int = 0                  # full roofline estimates run (not the prefill-only reuses)

    @property
    def gpus(self) -> int:
        return self.key.gpus


def replica_scenario(space: SearchSpace, key: ReplicaSetup, chunk: int, batch: int = 1):
    """The scenario `whatif estimate` would run for this engine at `batch` and prefill `chunk` (the API's and
    brute force's)."""
    from ..roofline.config import Parallelism, Precision
    from ..roofline.estimate import Workload
    from ..scenario import Scenario
    par = Parallelism(key.tp, key.pp, key.ep, key.dp_attention)
    return Scenario(model=space.model, hardware=key.hardware, nodes=space.nodes, parallel=par,
                    precision=(Precision.of_scheme(key.quantization, kv=key.kv) if key.quantization
                               else Precision(weight=key.weight, kv=key.kv)),
                    workload=Workload(batch=batch, prompt=space.prompt, output=space.output,
                                      prefill_chunk=chunk),
                    efficiency=space.efficiency, techniques=tuple(key.techniques))


def _overflow_text(est) -> str:
    over = est.memory.overflow()
    if not over:
        return "no room for one sequence's KV cache"
    tier, need, usable = over[0]
    return f"{tier} needs {need / 1e9:.1f} GB per GPU, usable {usable / 1e9:.1f} GB"


def evaluate_replica(space: SearchSpace, key: ReplicaSetup) -> list[ReplicaProfile]:
    """Estimate `key` at each prefill chunk and batch of the space up to its max batch at that chunk: the scenario
    resolved once per chunk, then each batch's estimate, as `whatif estimate` and `whatif.estimate` run it
    (Scenario.run). One profile per chunk, in the space's chunk order. Without techniques, the chunks
    after the first reuse the first chunk's decode steps (shared_decode)."""
    out: list[ReplicaProfile] = []
    sends = None      # (in a node, across nodes): the KV of one prompt, whatever the chunk
    first: dict[int, object] = {}     # batch -> the first fitting chunk's estimate
    for chunk in space.prefill_chunks:
        profile, one, ests = _evaluate_at_chunk(space, key, chunk, first)
        if one is not None and sends is None and "disaggregated" in space.modes:
            sends = _kv_send_times(space, one)
        if not first:
            first = ests
        out.append(profile)
    if sends is not None:
        out = [p if p.error else replace(p, kv_send_node_s=sends[0], kv_send_net_s=sends[1]) for p in out]
    return out


def _evaluate_at_chunk(space: SearchSpace, key: ReplicaSetup, chunk: int, first: dict):
    """(the profile at `chunk`, its batch-1 estimate or None when the engine cannot run, {batch: estimate} of the
    batches fully estimated here)."""
    sc = replica_scenario(space, key, chunk)
    try:
        resolved = sc.resolved()      # once per chunk: each batch below is only its estimate
        one = resolved.estimate(with_max_batch=False)
    except WhatifError as exc:
        return ReplicaProfile(key, chunk, error=f"invalid: {exc}", estimates=1), None, {}
    if one.max_batch < 1:
        return ReplicaProfile(key, chunk, error=f"does not fit: {_overflow_text(one)}", estimates=1), None, {}
    shared = shared_decode(resolved) if first and not key.techniques else None
    points, count, ests = [], 1, {1: one}
    for b in sorted(set(space.batches)):
        if b > one.max_batch:
            break        # every larger batch overfills too (fit is monotone in the batch), or the engine caps it
        if b != 1 and shared is not None and b in first:
            points.append(shared(first[b], b))
            continue
        est = one if b == 1 else resolved.estimate(with_max_batch=False, workload=replace(sc.workload, batch=b))
        count += b != 1
        ests[b] = est
        points.append(BatchPoint(b, est.ttft_s, est.tpot_s, est.e2e_s, est.throughput_tok_s))
    engine = getattr(one, "engine", None)
    return (ReplicaProfile(key, chunk, max_batch=one.max_batch, engine_cap=getattr(engine, "max_num_seqs", None),
                          engine_name=getattr(engine, "name", ""), points=tuple(points), prefill_s=one.ttft_s,
                          estimates=count), one, ests)


def shared_decode(resolved):
    """A function (estimate of `batch` at another chunk, batch) -> BatchPoint at the chunk of `resolved` (a
    ResolvedScenario), reusing the other estimate's decode. Only for an engine without techniques: there the chunk
    changes the prefill passes and the activation reserve (the max batch, checked by the caller with a batch-1
    estimate at this chunk) and nothing of the decode steps, and the estimate's TTFT is exactly the sum of its
    prefill passes (roofline.estimate: no decoder adds to it, no technique changes the prompt's units).
    tests/test_search_chunks.py checks the figures against whatif.estimate at each chunk."""
    from ..roofline.estimate import group_prefill_passes
    from ..roofline.step_price import StepPricer
    sc, par = resolved.scenario, resolved.parallel
    setup = resolved.pass_setup(sc.workload.shared_prefix)
    w = sc.workload
    pricer = StepPricer(setup, memoized=False)   # whole passes, as the estimate prices them: the same TTFT

    def point(other, batch: int) -> BatchPoint:
        passes = group_prefill_passes(par, batch, w.prompt, w.prefill_chunk)
        ttft = sum(pricer.seconds(fb, sc.cuda_graphs) * n for fb, n in passes)
        e2e = ttft + (other.e2e_s - other.ttft_s)      # the same decode steps, after this chunk's prefill
        return BatchPoint(batch, ttft, other.tpot_s, e2e, batch * w.output / e2e)

    return point


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
