"""End-to-end estimate: TTFT, TPOT, throughput and memory of a batch on a system.

A request batch is prefilled (in chunks of at most `prefill_chunk` tokens per pass), then decodes
`output - 1` more steps. Each pass's time is the sum of its kernels (per pipeline stage, per GPU)
plus the gaps between kernels (CUDA graphs), or the eager launch queue (each kernel waits for the
CPU to launch it); transfers from slower tiers run beside the kernels (overlapped) or in line.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..errors import WhatifError
from ..specs.engines import EngineSpec
from ..specs.hardware import System
from ..specs.models import ModelSpec
from .config import ForwardBatch, Parallelism, Precision
from .cost import Price, cost_per_million_tokens, scenario_price
from .efficiency import Efficiency
from .engines import limits_per_group
from .forward_pass import PassTime, engine_step, launch_queue_time, overlapped, time_pass  # noqa: F401 (re-exported)
from .pipeline_micro import decode_microbatches
from .memory import DEFAULT_UTILIZATION, MemoryPlan, plan_memory
from .pass_setup import PassSetup, pass_setup
from .step_price import StepPricer
from .placement import NO_PLACEMENT, Placement
from .context import HostPath
from .techniques.compose import NONE, TechniqueSet
from .workload import Workload  # noqa: F401 (re-exported: callers import it here)

if TYPE_CHECKING:   # (imported when a decoder technique runs: a plain estimate's cold start skips it)
    from .decode_round import Round

DECODE_SAMPLES = 5   # decode steps timed across the generation; TPOT integrates between them


@dataclass(frozen=True)
class Estimate:
    """A scenario's prediction: TTFT, TPOT, throughput and memory, with each pass's op times."""

    model: ModelSpec
    system: System
    parallel: Parallelism
    precision: Precision
    workload: Workload
    efficiency: Efficiency
    techniques: TechniqueSet
    prefill: tuple[tuple[PassTime, int], ...]   # distinct prefill passes and how often each runs
    decode: PassTime | None          # the step at mid-generation context (the op table shown)
    ttft_s: float
    tpot_s: float
    e2e_s: float
    memory: MemoryPlan
    max_batch: int                   # sequences of prompt+output tokens that fit
    max_context: int                 # tokens per sequence that fit at the workload's batch (<= model window)
    pipeline_microbatches: int
    at_max_batch: Estimate | None = None   # the same scenario at max_batch (where throughput claims live)
    placement: Placement = NO_PLACEMENT    # resolved to the system's tier names, techniques' shares included
    tier_paths: dict[str, HostPath] | None = None
    price: Price | None = None             # USD per hour of the GPUs used (and devices techniques add)
    memory_max_context: int = 0            # tokens per sequence the memory holds at the batch, window aside
    decode_round: Round | None = None      # a decoder's round at mid-generation (tokens, draft, verify)
    engine_spec: EngineSpec | None = None  # the serving engine spec whose loop and memory accounting were used

    @property
    def frontend_s(self) -> float:
        """The serving front end's time per request (HTTP / OpenAI server, tokenization, hand-off to the engine,
        first token back; the engine spec's `frontend`) that a client measuring through the server adds to
        TTFT and E2E; 0 without an engine. Offline benchmarks (in-process engine) do not pay it."""
        return self.engine_spec.frontend.seconds(self.workload.prompt) if self.engine_spec is not None else 0.0

    @property
    def served_ttft_s(self) -> float:
        return self.ttft_s + self.frontend_s

    @property
    def served_e2e_s(self) -> float:
        return self.e2e_s + self.frontend_s

    @property
    def prefill_pass_count(self) -> int:
        return sum(n for _, n in self.prefill)

    @property
    def throughput_tok_s(self) -> float:
        """Generated tokens per second over the whole request batch (prefill included)."""
        return self.workload.batch * self.workload.output / self.e2e_s

    @property
    def decode_throughput_tok_s(self) -> float:
        return self.workload.batch / self.tpot_s if self.tpot_s > 0 else 0.0

    @property
    def cost_per_mtok(self) -> float | None:
        """USD per million generated tokens at this batch (None without a price)."""
        return cost_per_million_tokens(self.price, self.throughput_tok_s)

    @property
    def max_batch_cost_per_mtok(self) -> float | None:
        return cost_per_million_tokens(self.price, self.max_batch_throughput_tok_s)

    @property
    def max_batch_throughput_tok_s(self) -> float:
        """Generated tokens per second with max_batch sequences (this estimate when already there)."""
        if self.at_max_batch is not None:
            return self.at_max_batch.throughput_tok_s
        return self.throughput_tok_s if self.max_batch == self.workload.batch else 0.0


def prefill_passes(batch: int, prompt: int, chunk: int, cached: int = 0) -> list[tuple[ForwardBatch, int]]:
    """The prefill of `batch` prompts as (pass, how many times it runs), each pass <= `chunk` tokens.

    `prompt` tokens are computed per sequence, after `cached` tokens already in the KV cache."""
    if prompt <= 0 or batch <= 0:
        return []
    if prompt <= chunk:
        per_pass = min(batch, chunk // prompt)
        full, rest = divmod(batch, per_pass)
        passes = [(ForwardBatch.prefill(per_pass, prompt, cached), full)]
        return passes + [(ForwardBatch.prefill(rest, prompt, cached), 1)] if rest else passes
    # A prompt longer than a chunk is prefilled chunk by chunk, each attending to the earlier ones.
    return [(ForwardBatch.prefill(1, min(chunk, prompt - start), cached=cached + start), batch)
            for start in range(0, prompt, chunk)]


def group_prefill_passes(par: Parallelism, batch: int, prompt: int, chunk: int,
                         cached: int = 0, group_limits: bool = True) -> list[tuple[ForwardBatch, int]]:
    """prefill_passes of a TP group. Under DP attention each GPU prefills its own ceil(batch / ranks)
    sequences side by side, in chunks of chunk / ranks tokens where the engine's limits are the group's
    (`group_limits`: SGLang divides --chunked-prefill-size by the DP size, server_args.py), else of `chunk` tokens
    (TensorRT-LLM's max_num_tokens is each rank's own); the group's pass holds the busy ranks' (min(batch, ranks)
    of them: with fewer sequences than ranks the others idle, and the experts see only the busy ranks' tokens, as
    the simulator's per-rank step prices a lone request)."""
    dp = par.attention_dp
    if dp == 1:
        return prefill_passes(batch, prompt, chunk, cached)
    busy = min(batch, dp)
    per_rank = max(1, chunk // dp) if group_limits else chunk
    return [(fb.times(dp) if busy == dp else replace(fb.times(busy), local=fb), n)
            for fb, n in prefill_passes(-(-batch // dp), prompt, per_rank, cached)]


def max_batch_fitting(plan: Callable[[int], MemoryPlan], seq_len: int) -> int:
    """Most sequences of `seq_len` tokens for which `plan(batch)` fits: their KV beside the weights
    and the activations of the largest prefill pass that batch would run."""
    # Fitting is monotone in the batch (more KV, prefill passes at least as large): binary search
    # below the count that fits beside a single prompt's activations.
    lo, hi = 0, plan(1).max_sequences(seq_len)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if plan(mid).fits:
            lo = mid
        else:
            hi = mid - 1
    return lo


def memory_fit(setup: PassSetup, w: Workload) -> tuple[MemoryPlan, int]:
    """The memory plan of `w`'s batch on `setup` and the most sequences of its prompt + output tokens that fit
    (capped at the engine's max_num_seqs): the memory half of an estimate."""
    model = setup.model
    seq_len = w.prompt + w.output
    if seq_len > model.max_position_embeddings:
        raise WhatifError(f"--prompt + --output = {seq_len} tokens is longer than {model.name}'s context "
                          f"window (max_position_embeddings {model.max_position_embeddings})")

    def plan(batch: int) -> MemoryPlan:
        return plan_memory(setup, batch, seq_len, min(batch * w.prompt, w.prefill_chunk), w.prompt)

    max_batch = max_batch_fitting(plan, seq_len)
    if setup.engine_spec is not None:
        max_batch = min(max_batch, setup.engine_spec.max_num_seqs)
    return plan(w.batch), max_batch


def estimate(model: ModelSpec, system: System, par: Parallelism, prec: Precision, workload: Workload,
             eff: Efficiency, *, cuda_graphs: bool = True, utilization: float = DEFAULT_UTILIZATION,
             techniques: TechniqueSet = NONE, with_max_batch: bool = True,
             placement: Placement = NO_PLACEMENT, price_per_hour: float | None = None,
             engine_spec: EngineSpec | None = None) -> Estimate:
    """Estimate one request batch. `model` and `prec` are the user's; the techniques transform them.
    `placement` puts shares of weights, KV and activations in the system's slower tiers.
    With `with_max_batch`, the same scenario is also estimated at its max batch. With an `engine_spec`, its
    memory accounting sizes the KV cache, its max_num_seqs caps the batch, decode steps are padded to its
    CUDA-graph sizes and each step pays its CPU work (step_price.StepPricer, each step priced whole)."""
    user_placement = placement
    setup = pass_setup(model, system, par, prec, eff, utilization, techniques, placement, workload.shared_prefix,
                       engine_spec)
    techs, model, prec, placement, paths = setup.techniques, setup.model, setup.precision, setup.placement, setup.paths
    w = workload
    memory, max_batch = memory_fit(setup, w)

    t = batch_times(setup, w, StepPricer(setup, memoized=False), cuda_graphs)   # whole passes: the ops shown
    prefill, decode, ttft, tpot, e2e, micro, decode_round = (t.prefill, t.decode, t.ttft_s, t.tpot_s, t.e2e_s,
                                                             t.micro, t.decode_round)
    at_max = None
    if with_max_batch and max_batch >= 1 and max_batch != w.batch:
        at_max = estimate(setup.user_model, system, par, setup.user_precision, replace(w, batch=max_batch), eff,
                          cuda_graphs=cuda_graphs, utilization=utilization, techniques=techs, with_max_batch=False,
                          placement=user_placement, price_per_hour=price_per_hour, engine_spec=engine_spec)
    fitting_context = memory.max_context(w.batch)
    extra, extra_source = techs.extra_price_per_hour()
    price = scenario_price(system, par.gpus, price_per_hour, extra, extra_source)
    return Estimate(model=model, system=system, parallel=par, precision=prec, workload=workload, efficiency=eff,
                    techniques=techs, prefill=prefill, decode=decode, ttft_s=ttft, tpot_s=tpot, e2e_s=e2e,
                    memory=memory, max_batch=max_batch,
                    max_context=min(fitting_context, model.max_position_embeddings),
                    pipeline_microbatches=micro, at_max_batch=at_max, placement=placement, tier_paths=paths,
                    price=price, memory_max_context=fitting_context, decode_round=decode_round, engine_spec=engine_spec)


@dataclass(frozen=True)
class BatchTimes:
    """The timing half of an estimate (no memory plan): a batch's prefill passes, TTFT, TPOT and E2E."""

    prefill: tuple[tuple[PassTime, int], ...]   # distinct prefill passes and how often each runs
    decode: PassTime | None     # the step at mid-generation context
    ttft_s: float
    tpot_s: float
    e2e_s: float
    micro: int                  # pipeline micro-batches
    decode_round: Round | None = None


def batch_times(setup: PassSetup, w: Workload, pricer: StepPricer, cuda_graphs: bool,
                decode_pool: bool = False) -> BatchTimes:
    """Prefill and decode times of `w`'s batch on `setup`, each step priced whole by `pricer` (a StepPricer of
    `setup`; one that remembers steps lets a caller timing many batches reuse the passes they share: the same
    figures, bit for bit); `decode_pool`: its decode as a disaggregated decode replica runs it (pipeline_micro.py)."""
    techs, par, engine_spec = setup.techniques, setup.parallel, setup.engine_spec

    def step(fb: ForwardBatch) -> tuple[PassTime, float]:
        return pricer.step(fb, cuda_graphs)
    # Prefill (eager, as engines run variable-length prefill outside CUDA graphs). Techniques may
    # compute only part of each prompt and attend the rest from a cache.
    units = techs.prefill_units([(w.prompt, 0, w.batch)], w.shared_prefix)
    group = limits_per_group(engine_spec)
    passes = [p for new, cached, n in units
              for p in group_prefill_passes(par, n, new, w.prefill_chunk, cached, group)]
    steps_run = [(step(fb), n) for fb, n in passes]
    prefill = tuple((p, n) for (p, _), n in steps_run)
    ttft = sum(wall * n for (_, wall), n in steps_run)

    # Decode: with pp stages, up to pp micro-batches keep the pipeline full; each sequence still
    # traverses every stage once per token. A decoder (speculative, multi-token, diffusion) replaces
    # the one-token step by a round: time per token = round time / tokens it yields.
    micro = decode_microbatches(par.pp, w.batch, w.prompt, w.prefill_chunk,
                                engine_spec is not None and engine_spec.pp_batch_queue, decode_pool)
    per_micro = -(-w.batch // micro)
    dec = techs.decoder
    if dec is not None:   # (only a decoder's rounds need it: a plain estimate's cold start skips the import)
        from .decode_round import RoundContext

    def at(context: int) -> RoundContext:
        return RoundContext(setup=setup, batch=per_micro, context=context, prompt=w.prompt, output=w.output,
                            cuda_graphs=cuda_graphs, prefill_chunk=w.prefill_chunk)

    if dec is not None:
        ttft += dec.prefill_s(RoundContext(setup=setup, batch=w.batch, context=w.prompt, prompt=w.prompt,
                                           output=w.output, cuda_graphs=cuda_graphs, prefill_chunk=w.prefill_chunk))
    prefill_s = ttft
    steps = w.output - 1 if dec is None or dec.first_token_from_prefill else w.output
    decode = decode_round = None
    tpot = 0.0
    if steps > 0:
        first = w.prompt + w.output - steps
        last = first + steps - 1
        n = min(DECODE_SAMPLES, steps)
        contexts = [first + round(i * (last - first) / max(n - 1, 1)) for i in range(n)]
        if dec is None:
            stepped = [step(ForwardBatch.decode(per_micro, c)) for c in contexts]
            sampled, times = [p for p, _ in stepped], [wall for _, wall in stepped]
        else:
            rounds = [dec.round(at(c)) for c in contexts]
            sampled = [r.verify for r in rounds]
            times = [r.per_token_s if engine_spec is None else engine_spec.step_seconds(r.time_s, per_micro) / r.tokens
                     for r in rounds]   # the engine's CPU work once per round
            decode_round = rounds[n // 2]
            if not dec.first_token_from_prefill:   # the first token is final with its block
                ttft += dec.first_visible_tokens(at(first)) * times[0]
        if n == 1:
            tpot = times[0]
        else:   # trapezoid over the context range: step time is smooth in context
            area = sum((times[i] + times[i + 1]) / 2 * (contexts[i + 1] - contexts[i]) for i in range(n - 1))
            tpot = area / (last - first)
        decode = sampled[n // 2]   # the middle of the generation: the step shown op by op
    e2e = prefill_s + steps * tpot
    return BatchTimes(prefill, decode, ttft, tpot, e2e, micro, decode_round)
