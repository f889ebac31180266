"""Op time = the slower of its compute and memory ceilings, each scaled by the efficiency model.

time = combine(FLOPs / (peak * compute_eff), bytes / (bandwidth * memory_eff)) + overhead,
where GEMM compute time also pays tile and wave quantization on the GPU's SMs.
"""
from __future__ import annotations

import importlib

import math
from dataclasses import dataclass, replace

from .comm import collective_time
from .efficiency import SPLIT_K, TILES, Efficiency
from .gathered_attention import gathered_efficiency
from .grouped_problems import grouped_problem_seconds
from ..specs.op_kinds import TENSOR_CORE_CLASSES
from .op_shapes import DeepEPShape
from .ops import Op, OpClass, link_bytes


@dataclass(frozen=True)
class OpTime:
    """One op's predicted time: its compute, memory and overhead parts."""

    op: Op
    time_s: float        # one instance
    compute_s: float
    memory_s: float
    overhead_s: float
    bound: str           # compute | memory | overhead | network | link

    @property
    def total_s(self) -> float:
        return self.time_s * self.op.count

    @property
    def attained_flops(self) -> float:
        return self.op.flops / self.time_s if self.time_s > 0 else 0.0


def gemm_compute_time(m: float, n: float, k: float, groups: float, peak: float, sms: int,
                      tiles: bool) -> float:
    """Seconds of tensor-core work with the best tile/split-K choice (or plain FLOPs/peak)."""
    flops = 2.0 * m * n * k
    if not tiles:
        return flops / peak
    per_sm = peak / sms
    g = max(1, math.ceil(groups - 1e-9))
    rows = m / max(groups, 1e-9)
    best = math.inf
    for tm, tn, rel in TILES:
        blocks = g * math.ceil(rows / tm - 1e-9) * math.ceil(n / tn - 1e-9)
        for split in SPLIT_K:
            if split > 1 and (blocks * split > 2 * sms or k / split < 256):
                break
            waves = math.ceil(blocks * split / sms)
            best = min(best, waves * 2.0 * tm * tn * (k / split) / (per_sm * rel))
    return max(best, flops / peak)


_LAZY: dict = {}


def _lazy(name: str):
    """A roofline module imported on first use (the fitted models need numpy, which building the CLI parser avoids)
    and kept here: an import statement per op cost ~4% of a search's passes."""
    module = _LAZY.get(name)
    if module is None:
        module = _LAZY[name] = importlib.import_module(f"{__package__}.{name}")
    return module


def _kernel_timing():
    return _lazy("kernel_timing")


def _collective_timing():
    return _lazy("collective_timing")


def time_op(op: Op, gpu, eff: Efficiency, link=None, tiers: dict | None = None) -> OpTime:
    """Time one instance of `op` on `gpu` (and `link` for collectives, `tiers` for in-place tier reads)."""
    parts = getattr(op.shape, "parts", ())
    if parts:   # a mixed pass's attention: its prefill and decode kernels, one after the other
        return summed(op, [time_op(split_modifiers(op, p), gpu, eff, link, tiers) for p in parts])
    share = gathered_efficiency(op)
    if share < 1.0:   # tokens gathered by index: dense attention's time over them, at the sparse kernel's rate
        t = time_op(replace(op, shape=replace(op.shape, gathered=False)), gpu, eff, link, tiers)
        busy = (t.time_s - t.overhead_s) / share
        return OpTime(op, busy + t.overhead_s, t.compute_s / share, t.memory_s / share, t.overhead_s, t.bound)
    if op.op_class == OpClass.COMM:
        t = deepep_time(op, gpu, link) or comm_time(op, eff, link)
        if not op.hbm_bytes or not t.time_s:
            return t
        # a fused epilogue (an all-reduce that also adds the residual and norms: engine_kernels.py) streams HBM
        extra = op.hbm_bytes / (gpu.hbm_bandwidth.value * eff.params(OpClass.NORM).memory_eff)
        return OpTime(op, t.time_s + extra, t.compute_s, t.memory_s + extra, t.overhead_s, t.bound)
    if op.op_class == OpClass.TRANSFER and op.shape.lane:   # a copy within HBM on a link's stream (ops.device_copy)
        p = eff.params(OpClass.ELEMENTWISE)   # a copy kernel (torch.cat) streams HBM as an elementwise kernel does
        t = op.hbm_bytes / (gpu.hbm_bandwidth.value * p.memory_eff)
        return OpTime(op, t + p.overhead_s, 0.0, t, p.overhead_s, "memory")
    if op.op_class == OpClass.TRANSFER:
        p = eff.params(OpClass.TRANSFER)
        s = op.shape
        # Each block of a scattered transfer pays the path's setup latency: small blocks waste the link.
        t = s.latency * s.blocks + link_bytes(op) / (s.bandwidth * p.memory_eff)
        return OpTime(op, t + p.overhead_s, 0.0, t, p.overhead_s, "link")
    if eff.engine:
        kernel_timing = _kernel_timing()
        if kernel_timing.covers(op, gpu, kernel_timing.fit_engine(op, eff)):
            return kernel_model_time(op, gpu, eff, tiers)
    p = eff.params(op.op_class)
    if op.op_class in TENSOR_CORE_CLASSES:
        peak = gpu.peak_flops(op.dtype)
    else:
        peak = gpu.peak_flops("fp32")   # elementwise work runs on the CUDA cores, not tensor cores
    if op.op_class == OpClass.GEMM:
        s = op.shape
        t_c = gemm_compute_time(s.m, s.n, s.k, s.groups, peak,
                                int(gpu.sm_count.value), eff.tiles) / p.compute_eff
    else:
        t_c = op.flops / (peak * p.compute_eff)
    if op.alu_ops:   # CUDA-core work that runs beside the tensor cores
        t_c = max(t_c, op.alu_ops / (gpu.peak_flops("fp32") * p.compute_eff))
    t_m = op.hbm_bytes / (gpu.hbm_bandwidth.value * p.memory_eff * op.bandwidth_share)
    t_tier = tier_read_time(op, tiers or {}, eff)
    busy = p.combine(t_c, max(t_m, t_tier))   # HBM and the tier's link are separate, concurrent streams
    if eff.grouped_problem_cost and op.op_class == OpClass.GEMM and op.shape.groups != 1.0:   # its problems' cost
        busy += grouped_problem_seconds(op, gpu, eff.engine)
    total = busy + p.overhead_s
    bound = "compute" if t_c >= max(t_m, t_tier) else ("link" if t_tier > t_m else "memory")
    if p.overhead_s > busy:
        bound = "overhead"
    return OpTime(op, total, t_c, max(t_m, t_tier), p.overhead_s, bound)


def deepep_time(op: Op, gpu, link) -> OpTime | None:
    """A DeepEP dispatch / combine (op_shapes.DeepEPShape) by its fit on aiconfigurator's measured DeepEP tables
    (kernel_models/deepep.py), inside one NVLink domain as measured; None for any other op (or across nodes,
    where the NCCL model prices it)."""
    s = op.shape
    if not isinstance(s, DeepEPShape) or link is None or int(s.gpus) <= 1:
        return None
    if link.scale_out is not None and int(s.gpus) > (link.domain_gpus or int(s.gpus)):
        return None
    deepep = _lazy("kernel_models.deepep")
    price = deepep.deepep_dispatch_seconds if s.phase == "dispatch" else deepep.deepep_combine_seconds
    t = price(max(1, round(s.tokens)), s.hidden, s.topk, s.experts, gpu, link.bandwidth.value,
              low_latency=s.mode == "ll", ranks=int(s.gpus), link=link.name)
    return OpTime(op, t, 0.0, t, 0.0, "network")


def comm_time(op: Op, eff: Efficiency, link) -> OpTime:
    """A collective on `link`: the engine's fitted model (NCCL protocols, NVLS, its custom all-reduce) where the
    efficiency has one, else the ideal collective scaled by the per-class efficiency."""
    s = op.shape
    gpus = int(s.gpus)
    if gpus <= 1 or link is None:
        return OpTime(op, 0.0, 0.0, 0.0, 0.0, "network")
    if link.scale_out is not None:   # a multi-node system: a group across nodes runs hierarchically
        t = multinode_time(s, link, eff)
        if t is not None:
            return OpTime(op, t, 0.0, t, 0.0, "network")
    if eff.engine:   # fitted collective model: NCCL protocols, NVLS, the engine's custom all-reduce
        # (a fused all-reduce run by another engine's kernel: that engine's fit, its own thresholds)
        engine, cap = (op.collective_kernel, None) if op.collective_kernel else (eff.engine,
                                                                                 eff.custom_allreduce_max_bytes)
        t = _collective_timing().collective_seconds(s.collective, s.bytes, gpus, link, engine, custom_max=cap)
        return OpTime(op, t, 0.0, t, 0.0, "network")
    p = eff.comm_params(link.type)
    # The efficiency scales the whole ideal collective (bandwidth and per-step latency), the
    # same form fit.py fits, so fitted parameters mean the same thing here.
    t = collective_time(s.collective, s.bytes, gpus, link.group_bandwidth(gpus),
                        link.latency.value) / p.memory_eff
    return OpTime(op, t + p.overhead_s, 0.0, t, p.overhead_s, "network")


def split_modifiers(op: Op, part: Op) -> Op:
    """A part of a mixed attention op with what was changed on the op after it was built (a technique's
    FLOPs, bytes or in-kernel ALU work, a bandwidth share, bytes moved to a slower tier read in place)
    carried over in proportion to the part's share of the kernels' HBM bytes and FLOPs."""
    parts = op.shape.parts
    hbm, flops = sum(p.hbm_bytes for p in parts), sum(p.flops for p in parts)
    added = {k: v for k, v in op.bytes.items() if k not in ("hbm", "l2")}
    if (op.hbm_bytes == hbm and op.flops == flops and not added and not op.alu_ops
            and op.bandwidth_share == 1.0):
        return part
    share = part.hbm_bytes / hbm if hbm else 1.0 / len(parts)
    return replace(part, flops=part.flops * (op.flops / flops if flops else 1.0),
                   bytes={**part.bytes, "hbm": op.hbm_bytes * share, **{k: v * share for k, v in added.items()}},
                   alu_ops=op.alu_ops * share, bandwidth_share=op.bandwidth_share)


def summed(op: Op, times: list[OpTime]) -> OpTime:
    """One OpTime of kernels run back to back: their times summed, the bound of the longest."""
    longest = max(times, key=lambda t: t.time_s)
    return OpTime(op, sum(t.time_s for t in times), sum(t.compute_s for t in times),
                  sum(t.memory_s for t in times), sum(t.overhead_s for t in times), longest.bound)


def multinode_time(s, link, eff: Efficiency) -> float | None:
    """Seconds of the collective `s` (a CommShape) across nodes of `link`'s multi-node fabric, None when it
    stays inside one node (kernel_models/collectives_multinode.py): the fitted NVLink model and NCCL over the
    NICs with an engine; without one, this module's ideal ring per leg over the efficiency's comm terms."""
    from .kernel_models import collectives_multinode as mn   # here: it needs numpy (see time_op)
    if not mn.spans_nodes(s, link):
        return None
    if eff.engine:
        return mn.collective_seconds(s.collective, s.bytes, s, link, eff.engine, eff.multinode_nvls)

    def leg(kind, op, nbytes, gpus):
        used = link if kind == "nvlink" else link.scale_out
        p = eff.comm_params(used.type)
        op = "all_gather" if op == "reduce_scatter" else op   # the same ring bytes and steps
        return collective_time(op, nbytes, gpus, used.bandwidth.value, used.latency.value) / p.memory_eff + p.overhead_s
    nodes, per_node = mn.group_layout(s.first_rank, s.stride, int(s.gpus), link.domain_gpus)
    return mn.hierarchical_seconds(s.collective, s.bytes, nodes, per_node, leg)


def kernel_model_time(op: Op, gpu, eff: Efficiency, tiers: dict | None) -> OpTime:
    """A GEMM or attention op timed by its fitted kernel model (roofline/kernel_timing.py)."""
    t_tier = tier_read_time(op, tiers or {}, eff)
    kernel_timing = _kernel_timing()
    total, t_c, t_m, fixed = kernel_timing.op_seconds(op, gpu, kernel_timing.fit_engine(op, eff), t_tier,
                                                      eff.kernel_params)
    bound = "compute" if t_c >= t_m else ("link" if t_tier >= t_m and t_tier > 0 else "memory")
    if fixed > max(t_c, t_m):
        bound = "overhead"
    return OpTime(op, total, t_c, t_m, fixed, bound)


def tier_read_time(op: Op, tiers: dict, eff: Efficiency) -> float:
    """Seconds a kernel spends on bytes it reads or writes in place in slower tiers ('h2d:TIER' levels),
    each at its path's bandwidth for that direction."""
    if not tiers or not link_bytes(op):
        return 0.0
    p = eff.params(OpClass.TRANSFER)
    t = 0.0
    for key, nbytes in op.bytes.items():
        direction, _, name = key.partition(":")
        if direction in ("h2d", "d2h") and name in tiers:
            t += nbytes / (tiers[name].rate(direction) * p.memory_eff)
    return t
