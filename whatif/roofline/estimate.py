"""End-to-end estimate: TTFT, TPOT, throughput and memory of a batch on a system.

A request batch is prefilled (in chunks of at most `prefill_chunk` tokens per pass), then decodes
`output - 1` more steps. Each pass's time is the sum of its kernels (per pipeline stage, per GPU)
plus the gaps between kernels (CUDA graphs), or the eager launch queue (each kernel waits for the
CPU to launch it); transfers from slower tiers run beside the kernels (overlapped) or in line.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..errors import WhatifError, positive_int
from ..hardware import System
from ..models import ModelSpec
from .config import ForwardBatch, Parallelism, Precision
from .cost import Price, cost_per_million_tokens, scenario_price
from .efficiency import Efficiency
from .graph import base_kv_format, check_parallelism, forward_ops, kv_width_per_gpu, stage_layers
from .memory import DEFAULT_PREFILL_CHUNK, DEFAULT_UTILIZATION, MemoryPlan, plan_memory
from .placement import NO_PLACEMENT, Placement, placement_ops, resolved
from .techniques.base import HostPath, PassContext
from .techniques.compose import NONE, TechniqueSet
from .tiers import host_path, resolve_tier, tier_paths
from .timing import OpTime, time_op

DECODE_SAMPLES = 5   # decode steps timed across the generation; TPOT integrates between them


@dataclass(frozen=True)
class Workload:
    batch: int = 1
    prompt: int = 512
    output: int = 128
    prefill_chunk: int = DEFAULT_PREFILL_CHUNK
    shared_prefix: int = 0     # leading prompt tokens every sequence of the batch shares (a system prompt)

    def __post_init__(self):
        for name in ("batch", "prompt", "output", "prefill_chunk"):
            positive_int(getattr(self, name), "--" + name.replace("_", "-"))
        sp = self.shared_prefix
        if isinstance(sp, bool) or not isinstance(sp, int) or not 0 <= sp <= self.prompt:
            raise WhatifError(f"--shared-prefix: {sp!r} must be an integer from 0 to --prompt ({self.prompt})")


@dataclass(frozen=True)
class PassTime:
    """One forward pass: its kernels (one pipeline stage each) and the time they take."""

    batch: ForwardBatch
    stages: tuple[tuple[OpTime, ...], ...]
    gpu_s: float        # kernel time + inter-kernel gaps, all stages in sequence
    launch_s: float     # CPU time to launch the kernels (eager mode), all stages
    time_s: float

    @property
    def op_times(self) -> tuple[OpTime, ...]:
        return tuple(t for stage in self.stages for t in stage)

    @property
    def kernels(self) -> int:
        return sum(t.op.count for t in self.op_times)


@dataclass(frozen=True)
class Estimate:
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


def time_pass(model, system, par, prec, eff, batch: ForwardBatch, cuda_graphs: bool,
              techs: TechniqueSet = NONE, shared_prefix: int = 0, placement: Placement = NO_PLACEMENT,
              paths: dict[str, HostPath] | None = None) -> PassTime:
    stages, gpu_s, launch_s, total_s = [], 0.0, 0.0, 0.0
    gpu = system.gpu
    paths = paths if paths is not None else tier_paths(system, par.gpus)
    host = host_path(system, par.gpus) if techs else None
    for stage in range(par.pp):
        layers = len(stage_layers(model, par.pp, stage))
        ops = forward_ops(model, batch, par, prec, stage, techs, shared_prefix, host, int(gpu.sm_count.value))
        if placement:
            ctx = PassContext(model, batch, par, prec, techs.kv(base_kv_format(prec)), kv_width_per_gpu(model, par.tp),
                              layers, shared_prefix, host)
            ops = placement_ops(ops, ctx, placement, paths)
        times = tuple(time_op(op, gpu, eff, system.gpu_link, paths) for op in ops)
        kernels = sum(t.op.count for t in times if t.op.op_class != "transfer")
        serial = sum(t.total_s for t in times if not t.op.shape.get("overlap")) + kernels * eff.kernel_gap_s
        gpu_s += overlapped(serial, times, layers)
        launch = gpu.launch_overhead.value if not cuda_graphs and eff.source != "ideal" else 0.0
        launch_s += kernels * launch
        # Eager mode: the GPU may wait for the CPU to launch each kernel (launch + queuing time).
        in_line = launch_queue_time(times, launch, eff.kernel_gap_s) if launch else serial
        total_s += overlapped(in_line, times, layers)
        stages.append(times)
    return PassTime(batch, tuple(stages), gpu_s, launch_s, total_s)


def launch_queue_time(times, launch_s: float, gap_s: float) -> float:
    """Time of a stream of kernels that the CPU launches one by one, `launch_s` each (eager mode).

    Kernel i can start only once launched, at (i+1) * launch_s, and once kernel i-1 is done: while
    kernels are short the GPU waits on the CPU (launch-bound), while long they queue up (GPU-bound).
    Ops are in layer order; a run of ops with the same count > 1 is one layer, repeated."""
    gpu_free, launched = 0.0, 0.0
    serial = [t for t in times if not t.op.shape.get("overlap")]
    i = 0
    while i < len(serial):
        j = i + 1
        if serial[i].op.count > 1:
            while j < len(serial) and serial[j].op.count == serial[i].op.count:
                j += 1
        reps, last_step = serial[i].op.count, None
        for rep in range(reps):
            before = (gpu_free, launched)
            for t in serial[i:j]:
                if t.op.op_class != "transfer":
                    launched += launch_s
                gpu_free = max(gpu_free, launched) + t.time_s + (gap_s if t.op.op_class != "transfer" else 0.0)
            step = (gpu_free - before[0], launched - before[1])
            if last_step and all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(step, last_step)):
                # steady state: every further layer adds the same
                gpu_free += step[0] * (reps - rep - 1)
                launched += step[1] * (reps - rep - 1)
                break
            last_step = step
        i = j
    return gpu_free


def overlapped(serial_s: float, times, layers: int) -> float:
    """A stage's time when its `overlap` transfers run on copy engines beside the kernels.

    Transfers over the same link in the same direction share it (their times add); different links
    and the two directions of a link run concurrently. Prefetching layer by layer, the pass costs
    max(kernels, transfers) plus one layer's worth of the smaller (the pipeline's fill), never more
    than kernels + transfers in sequence."""
    per_link: dict[str, float] = {}
    for t in times:
        if t.op.shape.get("overlap"):
            key = next(iter(t.op.bytes), "")
            per_link[key] = per_link.get(key, 0.0) + t.total_s
    hidden = max(per_link.values(), default=0.0)
    return max(serial_s, hidden) + min(serial_s, hidden) / max(layers, 1)


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


def estimate(model: ModelSpec, system: System, par: Parallelism, prec: Precision, workload: Workload,
             eff: Efficiency, cuda_graphs: bool = True, utilization: float = DEFAULT_UTILIZATION,
             techniques: TechniqueSet = NONE, with_max_batch: bool = True,
             placement: Placement = NO_PLACEMENT, price_per_hour: float | None = None) -> Estimate:
    """Estimate one request batch. `model` and `prec` are the user's; the techniques transform them.
    `placement` puts shares of weights, KV and activations in the system's slower tiers.
    With `with_max_batch`, the same scenario is also estimated at its max batch."""
    techs = techniques
    user_placement = placement
    placement = resolved(placement, lambda name, where: resolve_tier(name, system, where))
    for t in techs.items:   # shares a technique adds are resolved in its name, so an error says which
        placement = resolved(t.transform_placement(placement), lambda name, where: resolve_tier(name, system, where),
                             f"--technique {t.name} placing")
    techs.check(model, workload.shared_prefix)
    for t in techs.items:
        if t.needs_peak and t.needs_peak not in system.gpu.peak:
            raise WhatifError(f"--technique {t.name}: needs {t.needs_peak} tensor cores, which {system.gpu.name} "
                              f"does not have; its tensor-core dtypes: {', '.join(system.gpu.peak)}")
    user_model, user_prec = model, prec
    model, prec = techs.model(model), techs.precision(prec)
    check_parallelism(model, par)
    if par.gpus > system.gpu_count:
        raise WhatifError(f"--tp x --pp = {par.gpus} GPUs, but {system.name} has {system.gpu_count}")
    if not 0 < utilization <= 1:
        raise WhatifError(f"--memory-utilization: {utilization} must be in (0, 1]")
    w = workload
    seq_len = w.prompt + w.output
    if seq_len > model.max_position_embeddings:
        raise WhatifError(f"--prompt + --output = {seq_len} tokens is longer than {model.name}'s context "
                          f"window (max_position_embeddings {model.max_position_embeddings})")
    hbm = system.gpu.hbm_capacity.value
    paths = tier_paths(system, par.gpus)
    capacity = {name: path.capacity for name, path in paths.items()}

    def plan(batch: int) -> MemoryPlan:
        return plan_memory(model, par, prec, hbm, batch, seq_len, min(batch * w.prompt, w.prefill_chunk),
                           utilization, techs, w.shared_prefix, placement, capacity)

    memory = plan(w.batch)
    max_batch = max_batch_fitting(plan, seq_len)

    def timed(fb: ForwardBatch, graphs: bool) -> PassTime:
        return time_pass(model, system, par, prec, eff, fb, graphs, techs, w.shared_prefix, placement, paths)

    # Prefill (eager, as engines run variable-length prefill outside CUDA graphs). Techniques may
    # compute only part of each prompt and attend the rest from a cache.
    units = techs.prefill_units([(w.prompt, 0, w.batch)], w.shared_prefix)
    passes = [p for new, cached, n in units for p in prefill_passes(n, new, w.prefill_chunk, cached)]
    prefill = tuple((timed(fb, False), n) for fb, n in passes)
    ttft = sum(p.time_s * n for p, n in prefill)

    # Decode: with pp stages, up to pp micro-batches keep the pipeline full; each sequence still
    # traverses every stage once per token.
    micro = min(par.pp, w.batch)
    steps = w.output - 1
    decode = None
    tpot = 0.0
    if steps > 0:
        first, last = w.prompt + 1, w.prompt + steps
        n = min(DECODE_SAMPLES, steps)
        contexts = [first + round(i * (last - first) / max(n - 1, 1)) for i in range(n)]
        per_micro = -(-w.batch // micro)
        sampled = [timed(ForwardBatch.decode(per_micro, c), cuda_graphs) for c in contexts]
        times = [p.time_s for p in sampled]
        if n == 1:
            tpot = times[0]
        else:   # trapezoid over the context range: step time is smooth in context
            area = sum((times[i] + times[i + 1]) / 2 * (contexts[i + 1] - contexts[i]) for i in range(n - 1))
            tpot = area / (last - first)
        decode = sampled[n // 2]   # the middle of the generation: the step shown op by op
    e2e = ttft + steps * tpot
    at_max = None
    if with_max_batch and max_batch >= 1 and max_batch != w.batch:
        at_max = estimate(user_model, system, par, user_prec, replace(w, batch=max_batch), eff, cuda_graphs,
                          utilization, techs, False, user_placement, price_per_hour)
    fitting_context = memory.max_context(w.batch)
    extra, extra_source = techs.extra_price_per_hour()
    price = scenario_price(system, par.gpus, price_per_hour, extra, extra_source)
    return Estimate(model, system, par, prec, workload, eff, techs, prefill, decode, ttft, tpot, e2e,
                    memory, max_batch,
                    min(fitting_context, model.max_position_embeddings), micro, at_max,
                    placement, paths, price, fitting_context)
