"""Time of one forward pass: its kernels per pipeline stage, the gaps between them or the eager
launch queue, and transfers from slower tiers running beside the kernels (overlapped) or in line."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .attention_sync import attention_sync_points
from .config import ForwardBatch
from .context import pass_context
from .dsa_prefill import dsa_prefill_ops
from .engine_kernels import engine_ops
from .graph import pass_ops
from .module_fits import priced_modules
from .module_host import launch_factors
from .op_launches import op_launch_factors
from .moe_kernels import fused_layer_ops
from .shared_expert_stream import hidden_shared_s, runs_shared_expert_stream
from .pass_setup import PassSetup
from .graphless_step import graphless_step
from .piecewise_graph import piecewise_calls
from .placement import placement_ops
from .tiers import host_path
from .ops import OpClass, is_overlapped, lane_of
from .op_memo import memo_price
from .timing import OpTime, time_op


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


def time_pass(setup: PassSetup, batch: ForwardBatch, cuda_graphs: bool, piecewise: bool = False,
              op_times: dict | None = None) -> PassTime:
    """One pass of `batch` in the scenario `setup` describes, every pipeline stage in sequence. `piecewise`: its
    CUDA graphs in pieces between eagerly run attention ops (piecewise_graph.py), at the engine's host time a call.
    `op_times`: a memo of `setup`'s op times by op value (op_memo.py) a caller pricing many passes of it keeps: the
    same time_op call on an equal op, so the same floats (a search's passes repeat most ops: its decode steps at
    five contexts share every op but attention's)."""
    model, system, par, prec, eff = setup.model, setup.system, setup.parallel, setup.precision, setup.efficiency
    techs, shared_prefix, placement, paths = setup.techniques, setup.shared_prefix, setup.placement, setup.paths
    stages, gpu_s, launch_s, total_s = [], 0.0, 0.0, 0.0
    gpu = system.gpu
    host = host_path(system, par.gpus) if techs else None
    graph_par = moe_comm_parallel(setup)
    price, layer_memo = time_op, None
    if op_times is not None:
        price = memo_price(op_times)
    if par.pp > 1:   # stages of the same layers build their ops once, and each op object is priced once
        layer_memo, priced, price_new = {}, {}, price

        def price(op, *args):
            t = priced.get(id(op))   # (an op priced here stays alive in its OpTime, so its id stays its own)
            if t is None:
                t = priced[id(op)] = price_new(op, *args)
            return t
    for stage in range(par.pp):
        ctx = pass_context(model, batch, graph_par, prec, stage, transform_kv=techs.kv, shared_prefix=shared_prefix,
                           host=host, sm_count=int(gpu.sm_count.value))
        layers = ctx.layers
        ops = fused_layer_ops(engine_ops(pass_ops(ctx, techs, layer_memo), setup.engine_spec, ctx.model), eff, gpu)
        ops = dsa_prefill_ops(ops, setup.engine_spec, ctx.model, gpu.arch, batch)   # (SGLang, Blackwell)
        if placement:
            ops = placement_ops(ops, ctx, placement, paths)
        times, gaps = priced_modules(tuple(price(op, gpu, eff, system.gpu_link, paths) for op in ops), setup, batch)
        kernels = sum(t.op.count for t in times if t.op.op_class != OpClass.TRANSFER)
        # one gap a kernel, but a module priced whole by its fit pays one an instance (module_fits.module_gap_shares)
        gapped = kernels - sum((1.0 - g) * t.op.count for t in times if (g := gaps.get(id(t.op))) is not None)
        serial = sum(t.total_s for t in times if not is_overlapped(t.op)) + gapped * eff.kernel_gap_s
        if runs_shared_expert_stream(setup.engine_spec, ctx.model, cuda_graphs):   # its second stream (decode graphs)
            serial -= hidden_shared_s(times, eff.kernel_gap_s)
        gpu_s += overlapped(serial, times, layers)
        launch = gpu.launch_overhead.value if not cuda_graphs and eff.source != "ideal" else 0.0
        if launch and graphless_step(setup.engine_spec, batch.tokens):   # vLLM above its capture sizes: no graph
            launch = setup.engine_spec.piecewise_call_s
        # An eager prefill's attention module costs the host what the engine measured it whole (module_host.py),
        # an op the engine runs as a chain of kernels one launch each (op_launches.py).
        factors = {**op_launch_factors(setup, times), **launch_factors(setup, times, batch)} \
            if launch and not batch.is_decode else {}
        if piecewise and cuda_graphs and eff.source != "ideal":   # graph pieces and eager attention ops
            launch, factors = setup.engine_spec.piecewise_call_s, piecewise_calls(times)
        extra = sum((f - 1) * t.op.count for t in times if (f := factors.get(id(t.op))) is not None)
        launch_s += (kernels + extra) * launch
        # Eager mode: the GPU may wait for the CPU to launch each kernel (launch + queuing time).
        # (a loop that synchronizes around each attention call: host and attention add, attention_sync.py)
        syncs = attention_sync_points(times) if launch and setup.engine_spec is not None \
            and setup.engine_spec.sync_around_attention else frozenset()
        fenced = {"sync_before": lambda op, marks=syncs: id(op) in marks} if syncs else {}
        in_line = launch_queue_time(times, launch, eff.kernel_gap_s, factors, gaps, **fenced) if launch else serial
        total_s += overlapped(in_line, times, layers)
        stages.append(times)
    return PassTime(batch=batch, stages=tuple(stages), gpu_s=gpu_s, launch_s=launch_s, time_s=total_s)


# Nodes of a multi-node NVLink domain (GB200 NVL72) hold more GPUs than an 8-GPU HGX / DGX board.
MNNVL_MIN_GPUS = 9


def moe_comm_parallel(setup: PassSetup):
    """The layout the graph is built from: the setup's, with `moe_gather` where the engine's attention-DP MoE
    all-gathers every rank's tokens instead of an all-to-all (kernels.dp_moe_alltoall: mnnvl, TensorRT-LLM:
    fused_moe select_alltoall_method_type returns NotEnabled when moe_ep_size <= top_k, and enables one only
    with MNNVL or TRTLLM_CAN_USE_DEEP_EP=1; else the forward all-gathers x and reduce-scatters the outputs)."""
    par, spec, moe = setup.parallel, setup.engine_spec, setup.model.moe
    if spec is None or moe is None or not par.dp_attention:
        return par
    if spec.dp_prefill_gather == "all_reduce":   # (SGLang: moe.gather_collective)
        par = replace(par, prefill_gather_all_reduce=True)
    if spec.dp_moe_alltoall != "mnnvl" or par.ep == 1:
        return par
    system = setup.system
    nvlink_domain = system.gpu_link.domain_gpus or system.gpus_per_node or system.gpu_count
    if par.ep > moe.experts_per_token and nvlink_domain >= MNNVL_MIN_GPUS:
        return par
    return replace(par, moe_gather=True)


def step_shape(setup: PassSetup, batch: ForwardBatch, cuda_graphs: bool) -> tuple[ForwardBatch, bool]:
    """The pass a serving step of `batch` runs and whether it runs as a CUDA graph.

    Decode batches run as CUDA graphs (with `cuda_graphs`), anything with a prefill eagerly. With an
    engine in the setup, a decode batch is padded up to the engine's next captured size (the padded rows
    are dummy one-token sequences: their GEMM rows cost, their attention next to nothing, no logits) or
    runs eagerly above the largest (under attention DP: each rank's share against its own graphs)."""
    engine = setup.engine_spec
    graphs = cuda_graphs and batch.is_decode
    if engine is None:
        return batch, graphs
    dp = setup.parallel.attention_dp
    if graphs and batch.logits == 0 and dp > 1:   # attention-DP: each rank replays its own graph
        return dp_graph_shape(engine, batch, dp)
    if graphs and batch.logits == 0:   # a plain decode step (verify passes keep their own shape)
        real = batch.sequences
        padded = engine.graph_batch(real)
        if padded is not None and padded > real:
            batch = ForwardBatch(batch.groups + ((1, 1, padded - real),), logits=real)
        return batch, padded is not None
    if not batch.is_decode:
        graphs = cuda_graphs and engine.graph_prefill
    return batch, graphs


def engine_step(setup: PassSetup, batch: ForwardBatch, cuda_graphs: bool, passes: int = 1,
                op_times: dict | None = None) -> tuple[PassTime, float]:
    """One serving step of `batch`: its pass (step_shape) and its wall time in seconds, the engine's CPU
    work per step added, or overlapped with the GPU where the engine overlaps them. With `passes` > 1 the
    step runs that many passes back to back for one round of CPU work (multi-step scheduling). `op_times`:
    time_pass's memo of op times."""
    run, graphs = step_shape(setup, batch, cuda_graphs)
    p = time_pass(setup, run, graphs, piecewise_step(setup, run, graphs), op_times)
    if setup.engine_spec is None:
        return p, passes * p.time_s
    # (attention-DP: each rank's scheduler runs on its own CPU process, over its own sequences)
    return p, setup.engine_spec.step_seconds(passes * p.time_s, batch.split(setup.parallel.attention_dp).sequences)


def piecewise_step(setup: PassSetup, run: ForwardBatch, graphs: bool) -> bool:
    """Whether a step's captured pass runs in graph pieces (the engine's decode_graph_mode piecewise: vLLM's
    cudagraph_mode PIECEWISE replays pieces for decode batches too; prefill steps run eagerly as before)."""
    spec = setup.engine_spec   # (the engine's mode first: is_decode walks the groups, a simulator's every new shape)
    return spec is not None and spec.piecewise_decode and graphs and run.is_decode


def dp_graph_shape(engine, batch: ForwardBatch, dp: int) -> tuple[ForwardBatch, bool]:
    """An attention-DP decode step: the busiest rank's batch padded to its engine's next captured size, every
    rank padded alike (SGLang runs all DP ranks' graphs at the largest rank's size), the experts seeing the
    padded rows of every rank."""
    local = batch.split(dp)
    real = local.sequences
    padded = engine.graph_batch(real)
    if padded is None or padded == real:
        return batch, padded is not None
    pad = ((1, 1, padded - real),)
    local = ForwardBatch(local.groups + pad, logits=local.logits or real)
    extra = ((1, 1, padded * dp - batch.sequences),)   # every rank padded to `padded`: all rows join the experts
    return ForwardBatch(batch.groups + extra, logits=batch.logits or batch.sequences, local=local), True


def launch_queue_time(times, launch_s: float, gap_s: float, factors: dict | None = None,
                      gaps: dict | None = None, sync_before=None, sync_s: float = 0.0) -> float:
    """Time of a stream of kernels that the CPU launches one by one, `launch_s` each (eager mode; an op in
    `factors`, {id(op): launches}, that many times `launch_s`; an op in `gaps`, {id(op): gaps each}, that many
    times `gap_s` after it, else one). `sync_before(op)` true: the host reads a GPU result before launching that
    op (a `.item()` / `.tolist()`), so it waits for every kernel queued so far, then `sync_s` (the copy's round
    trip): host and GPU time add there instead of overlapping (none by default; benchmarks/moe_sync_price.py).

    Kernel i can start only once launched, at (i+1) * launch_s, and once kernel i-1 is done: while
    kernels are short the GPU waits on the CPU (launch-bound), while long they queue up (GPU-bound).
    Ops are in layer order; a run of ops with the same count > 1 is one layer, repeated."""
    gpu_free, launched = 0.0, 0.0
    serial = [t for t in times if not is_overlapped(t.op)]
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
                if sync_before is not None and sync_before(t.op):   # the host blocks until the GPU drains
                    launched = max(launched, gpu_free) + sync_s
                if t.op.op_class != OpClass.TRANSFER:
                    launched += launch_s * (factors.get(id(t.op), 1.0) if factors else 1.0)
                gap = gap_s * (gaps.get(id(t.op), 1.0) if gaps else 1.0) if t.op.op_class != OpClass.TRANSFER else 0.0
                gpu_free = max(gpu_free, launched) + t.time_s + gap
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
    and the two directions of a link run concurrently; a copy within HBM issued on a link's stream
    (ops.device_copy) waits its turn there. Prefetching layer by layer, the pass costs
    max(kernels, transfers) plus one layer's worth of the smaller (the pipeline's fill), never more
    than kernels + transfers in sequence."""
    per_link: dict[str, float] = {}
    for t in times:
        if is_overlapped(t.op):
            key = lane_of(t.op)
            per_link[key] = per_link.get(key, 0.0) + t.total_s
    hidden = max(per_link.values(), default=0.0)
    return max(serial_s, hidden) + min(serial_s, hidden) / max(layers, 1)
