"""Price one replica setup at every batch of the search space, with the roofline estimate.

Cost is shared across configurations: an engine is resolved once (model, system, efficiency, techniques) and
estimated once per batch limit and prefill chunk; every aggregated or disaggregated configuration built from it
(replica counts, prefill/decode pool sizes) reuses those estimates. The kernel timings inside are memoized by
shape, so batches whose passes share shapes (the prefill passes of long prompts) cost little more. The chunk
changes only the prefill passes and the activation reserve (hence the max batch), not the decode steps, which are
about half of an estimate's time: so all chunks of an engine are priced in one call (one Ray task), where the
steps are remembered (StepPricers): a chunk after the first prices only the prefill passes it does not share.
Only the batch-1 estimate plans memory (the max batch); other batches are timed (roofline.estimate.batch_times).
The KV transfer of disaggregated serving does not depend on the chunk and is priced once per engine.

Pruning is exact: a batch is skipped only when it is above the engine's max batch at that chunk (the most
sequences of prompt + output tokens whose KV fits beside a chunk's activations), because whether a batch fits
is monotone in the batch (roofline.estimate.max_batch_fitting), so a skipped batch could never be deployed."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..errors import WhatifError
from ..simulator.kv_fanout import fans_out_mla
from ..roofline.engines import rank_limit
from ..roofline.overflow_text import tiers_over
from ..simulator.prefill_rows import holds_rows
from .space import DEFAULT_CHUNKS, ReplicaSetup, SearchSpace

# Between disaggregated pools on different nodes the KV crosses the network: a 400 Gb/s RDMA NIC per GPU
# (assumed: the DGX/HGX H100 and B200 fabric; name another with kv_link).
CROSS_NODE_KV_LINK = "rdma-400g"
# A disaggregated prefill replica runs one prompt per attention-DP rank at once (aiconfigurator's generator launches
# prefill workers at max_batch_size 1; simulator/config.py ClusterConfig.prefill_scheduler); recheck.py launches it so.
PREFILL_PROMPTS_PER_RANK = 1


@dataclass(frozen=True)
class BatchPoint:
    """The roofline estimate of `batch` requests of the workload on one replica."""

    batch: int
    ttft_s: float              # prefill of all `batch` prompts (chunked)
    tpot_s: float              # mean decode step at `batch` sequences
    e2e_s: float               # ttft_s + (output - 1) * tpot_s
    throughput_tok_s: float    # batch * output / e2e_s
    # as a disaggregated decode replica, where vLLM V1's pp batch queue decodes it as one micro-batch
    # (roofline/pipeline_micro.py); None: tpot_s
    decode_pool_tpot_s: float | None = None

    @property
    def pool_tpot_s(self) -> float:
        """The mean decode step of this batch on a disaggregated decode replica."""
        return self.tpot_s if self.decode_pool_tpot_s is None else self.decode_pool_tpot_s


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
    step1_s: float = 0.0                # the decode step at one sequence (priced always: the batch-1 estimate)
    prefill_rps: float = 0.0            # prompts/s it prefills as a disaggregated prefill replica (prefill_pool_rps)
    prefill_servers: int = 1            # ... prompts it runs at once (one a rank): its servers in queueing.py
    kv_send_node_s: float = 0.0         # one prompt's KV to a decode replica in the same node
    kv_send_net_s: float = 0.0          # ... on another node (CROSS_NODE_KV_LINK or the space's kv_link)
    mla_kv_fanout: bool = False         # an MLA latent its engine sends to each decode attention-TP rank (kv_fanout)
    prefill_rows_held: bool = False     # a prefill server keeps each prompt's row until its KV is sent (prefill_rows)
    loop_budget: int = DEFAULT_CHUNKS[0]   # a rank's prefill tokens a step (closed_loop_ttft.py)
    prefill_first: bool = False         # its engine prefills alone while decodes wait (closed_loop_ttft.py)
    front_s: float = 0.0                # its server front end's time a request at the space's prompt (engine spec)
    estimates: int = 0                  # full roofline estimates run (not the prefill-only reuses)
    pruned: tuple[int, ...] = ()        # batches that fit but were not priced: dominated (prune.py)

    @property
    def gpus(self) -> int:
        return self.key.gpus


def replica_scenario(space: SearchSpace, key: ReplicaSetup, chunk: int, batch: int = 1):
    """The scenario `whatif estimate` would run for this engine at `batch` and prefill `chunk` (the API's and
    brute force's)."""
    from ..roofline.estimate import Workload
    from .checkpoint_scheme import setup_precision
    from ..scenario import Scenario
    par = key.parallel
    return Scenario(model=space.model, hardware=key.hardware, nodes=space.nodes, parallel=par,
                    precision=setup_precision(space.model, key.quantization, key.weight, key.kv),
                    workload=Workload(batch=batch, prompt=space.prompt, output=space.output,
                                      prefill_chunk=chunk),
                    efficiency=space.efficiency, techniques=tuple(key.techniques), kernel_engine=space.engine)


def _overflow_text(memory) -> str:
    over = memory.overflow()
    if not over:
        return "no room for one sequence's KV cache"
    return tiers_over(over)


def evaluate_replica(space: SearchSpace, key: ReplicaSetup, ends: bool = False) -> list[ReplicaProfile]:
    """Estimate `key` at each prefill chunk and batch of the space up to its max batch at that chunk: the scenario
    resolved once per chunk, a batch-1 estimate (the max batch and a request's own prefill), then each batch's
    timing (roofline.estimate.batch_times, the timing half of `whatif estimate`) with its steps priced by a
    StepPricer that remembers them across the batches and chunks of this engine. One profile per chunk, in the
    space's chunk order. `ends`: only batch 1, the largest that fits and the middle one (prune.py prices the
    others, or not)."""
    out: list[ReplicaProfile] = []
    sends = None      # (in a node, across nodes): the KV of one prompt, whatever the chunk
    fanout = False    # its engine sends an MLA latent to each decode attention-TP rank (simulator/kv_fanout.py)
    pricers = StepPricers()
    for chunk in space.prefill_chunks:
        profile, fitted = _evaluate_at_chunk(space, key, chunk, pricers, ends)
        if fitted is not None and sends is None and "disaggregated" in space.modes:
            sends = _kv_send_times(space, fitted)
            fanout = fans_out_mla(fitted[0].engine_spec, fitted[0].model)
        out.append(profile)
    if sends is not None:
        out = [p if p.error else replace(p, kv_send_node_s=sends[0], kv_send_net_s=sends[1], mla_kv_fanout=fanout)
               for p in out]
    return out


class StepPricers:
    """One remembering StepPricer per distinct PassSetup: the chunk changes the prefill passes and the memory
    reserve, not the setup, so the decode steps (about half an estimate's time) and the prefill passes a batch
    shares with others (the same prompts per pass) are priced once per engine. Exact: a remembered step is the
    one engine_step priced for the same setup and batch, whole, as the estimate prices it (parts.PassParts,
    the simulator's, costs more to set up than a search's few dozen steps per engine save)."""

    def __init__(self):
        self.known: list[tuple[object, object]] = []

    def of(self, setup):
        from ..roofline.step_price import StepPricer
        for s, pricer in self.known:
            if s is setup or s == setup:
                return pricer
        pricer = StepPricer(setup, memoized=False, remember=True)
        self.known.append((setup, pricer))
        return pricer


def _evaluate_at_chunk(space: SearchSpace, key: ReplicaSetup, chunk: int, pricers: StepPricers, ends: bool = False):
    """(the profile at `chunk`, (its batch-1 PassSetup, memory plan) or None when the engine cannot run): the
    memory half of `whatif estimate` at batch 1 (the max batch), then the timing half at each batch that fits
    (with `ends`, at batch 1, the largest that fits and the middle one)."""
    from ..roofline.estimate import batch_times, memory_fit
    sc = replica_scenario(space, key, chunk)
    try:
        resolved = sc.resolved()      # once per chunk: each batch below is only its timing
        setup = resolved.pass_setup(sc.workload.shared_prefix)
        check_whole_prompt(setup.engine_spec, space.prompt, chunk, key.attention_dp)
        memory, max_batch = memory_fit(setup, sc.workload)
        if max_batch >= 1:
            one = batch_times(setup, sc.workload, pricers.of(setup), sc.cuda_graphs)
    except WhatifError as exc:
        return ReplicaProfile(key, chunk, error=f"invalid: {exc}", estimates=1), None
    if max_batch < 1:
        return ReplicaProfile(key, chunk, error=f"does not fit: {_overflow_text(memory)}", estimates=1), None
    fits = [b for b in sorted(set(space.batches)) if b <= max_batch]   # fit is monotone in the batch, or capped
    if ends:
        fits = sorted({fits[0], fits[len(fits) // 2], fits[-1]}) if fits else []
    points = [price_batch(resolved, setup, sc, b, pricers, one) for b in fits]
    engine = setup.engine_spec
    rps = prefill_pool_rps(resolved, setup, sc, max_batch, pricers, one) if "disaggregated" in space.modes else 0.0
    return (ReplicaProfile(key, chunk, max_batch=max_batch, engine_cap=getattr(engine, "max_num_seqs", None),
                           engine_name=getattr(engine, "name", ""), points=tuple(points), prefill_s=one.ttft_s,
                           step1_s=one.tpot_s,
                           prefill_rps=rps, prefill_servers=prefill_servers(setup, max_batch),
                           prefill_rows_held=setup.parallel.attention_dp == 1 and holds_rows(setup, "prefill", None),
                           loop_budget=rank_limit(engine, chunk, key.attention_dp),
                           prefill_first=prefills_first(engine),
                           front_s=engine.frontend.seconds(space.prompt) if engine is not None else 0.0,
                           estimates=1 + sum(p.batch != 1 for p in points)), (setup, memory))


def prefills_first(spec) -> bool:
    """Its engine runs a prefill step alone while the running decodes wait (SGLang's default: chunked prefill off,
    priority prefill, engine_profiles/sglang.yaml), not prompts mixed into decode steps."""
    return spec is not None and not spec.chunked_prefill and spec.priority == "prefill"


def check_whole_prompt(spec, prompt: int, chunk: int, ranks: int) -> None:
    """An engine that computes a prompt whole in one step (chunked prefill off, whole prompts beside the decodes:
    TensorRT-LLM's default, engine_profiles/trtllm.yaml) cannot run a prompt above its token budget: the simulator
    rejects every such request (simulator/cluster.py Cluster.rejection), so the search must not price it in chunks."""
    if spec is None or spec.chunked_prefill or spec.priority != "mixed":
        return
    budget = rank_limit(spec, chunk, ranks)     # (a rank's, as the re-check's ranks run it)
    if prompt > budget:
        raise WhatifError(f"prompt {prompt} tokens > the token budget {budget} of {spec.name}, which computes a "
                          f"prompt whole in one step (chunked prefill off); raise --prefill-chunks")


def prefill_servers(setup, max_batch: int) -> int:
    """Prompts a disaggregated prefill replica runs at once (PREFILL_PROMPTS_PER_RANK a rank, within its max batch)."""
    return max(1, min(setup.parallel.attention_dp * PREFILL_PROMPTS_PER_RANK, max_batch))


def prefill_pool_rps(resolved, setup, sc, max_batch: int, pricers: StepPricers, one) -> float:
    """Prompts/s one replica of `setup` prefills as a disaggregated prefill pool at full load, run as the re-check
    runs it (PREFILL_PROMPTS_PER_RANK running a rank): its ranks' prompts side by side in one group step (the
    estimate at one prompt a rank: the experts see every busy rank's tokens), each prompt ceil(prompt / the rank's
    chunk) steps, and each rank's new prompts a step within its engine's PD send slots (SGLang's metadata buffer,
    simulator/prefill_send_slots.py, the rule the simulator's RankGroup runs). One rank: 1 / a lone prefill."""
    from ..simulator.prefill_send_slots import send_slots_per_rank, steady_prompts_per_step
    ranks = setup.parallel.attention_dp
    busy = prefill_servers(setup, max_batch)
    group_s = one.ttft_s if busy == 1 else price_batch(resolved, setup, sc, busy, pricers, one).ttft_s
    steps = -(-sc.workload.prompt // rank_limit(setup.engine_spec, sc.workload.prefill_chunk, ranks))
    slots = send_slots_per_rank(setup, "prefill", PREFILL_PROMPTS_PER_RANK)
    per_rank = steady_prompts_per_step(slots, 1.0 / steps)   # new prompts a rank takes a step
    return busy * per_rank * steps / group_s


def resolve_at_chunk(space: SearchSpace, key: ReplicaSetup, chunk: int):
    """(the scenario, its ResolvedScenario, its batch-1 PassSetup) of `key` at `chunk` (one that resolved before)."""
    sc = replica_scenario(space, key, chunk)
    resolved = sc.resolved()
    return sc, resolved, resolved.pass_setup(sc.workload.shared_prefix)


def price_batch(resolved, setup, sc, b: int, pricers: StepPricers, one) -> BatchPoint:
    """The BatchPoint of batch `b` (the timing half of `whatif estimate`), its steps priced by `pricers`; `one`:
    batch 1's BatchTimes, reused at b = 1."""
    from ..roofline.estimate import batch_times
    w = replace(sc.workload, batch=b)
    # the setup changes with the batch only if a technique's defaults do (for_workload)
    same = b == 1 or resolved.technique_set(w) == setup.techniques
    setup_b = setup if same else resolved.pass_setup(w.shared_prefix, w)
    t = one if b == 1 else batch_times(setup_b, w, pricers.of(setup_b), sc.cuda_graphs)
    pool = None
    if t.micro > 1 and setup.engine_spec is not None and setup.engine_spec.pp_batch_queue:
        pool = batch_times(setup_b, w, pricers.of(setup_b), sc.cuda_graphs, decode_pool=True).tpot_s
    return BatchPoint(b, t.ttft_s, t.tpot_s, t.e2e_s, b * w.output / t.e2e_s, pool)


def _kv_send_times(space: SearchSpace, fitted) -> tuple[float, float]:
    """Seconds to send one prompt's KV from a prefill replica to a decode replica, inside a node (the system's
    GPU link) and across nodes; each GPU sends its shard (the memory plan's per-GPU KV bytes), one copy per
    layer, as the simulator does. `fitted`: the engine's (PassSetup, memory plan)."""
    from ..roofline.ops import transfer
    from ..roofline.timing import time_op
    from ..simulator.iteration_time import kv_link_path
    setup, memory = fitted
    system = setup.system
    nbytes = memory.sequence_kv_bytes(space.prompt)
    layers = math.ceil(setup.model.num_layers / setup.parallel.pp)

    def send(link: str | None) -> float:
        try:
            path = kv_link_path(system, link)
        except WhatifError:
            return math.inf      # no link between the pools: a disaggregated cluster cannot run here
        op = transfer("kv_send", nbytes, path, direction="d2h", blocks=layers)
        return time_op(op, system.gpu, setup.efficiency).total_s

    return send(space.kv_link), send(space.kv_link or CROSS_NODE_KV_LINK)
