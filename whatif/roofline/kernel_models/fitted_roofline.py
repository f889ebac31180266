"""The one fitted-roofline form of the 2025-26 op families (GDN, DSA, whole MLA modules, wide-EP MoE,
DeepEP, encoder attention, quantize kernels) and its parameters (data/modern_fit.yaml).

An op is a few kernels run back to back; each kernel k has ideal times at efficiency 1 from its
mechanism (FLOPs over the datasheet peak, bytes over the datasheet bandwidth), and
    t = floor_s + floor_cycles / clock + (item_s + item_cycles / clock) * items / SMs + step_s * steps
        + step_cycles * clocked / clock + sum_k (( t_c,k / compute_eff )^p + ( t_m,k / memory_eff )^p)^(1/p)
    t_m,k = (HBM bytes + L2-resident bytes / l2_speedup) / datasheet bandwidth
A kernel whose bytes fit in the GPU's L2 (datasheet size) reads them from L2 on the tables' back-to-back
replays (warm L2), l2_speedup times faster than HBM (fitted, 1 to 10). `items` counts the op's fixed-cost
work items (a chunk of a sequence, a (sequence, head) pair), spread over the SMs. `steps` counts the steps of
a serial chain no SM count shortens (GDN's inter-chunk state pass: one chunk after another per (sequence, head),
times the waves of such chains), each step_s seconds (a latency: fitted, GPU-independent); `clocked` counts the
steps of a dependent loop on one SM (GDN's in-chunk triangular solve, row by row), each step_cycles SM clocks
(fitted; the GPU's boost clock converts them). A family whose fixed cost is its kernels' own instruction chain on
an SM (FIXED_COST_IN_CLOCKS) has its floor and per-item cost in SM clocks instead (floor_cycles, item_cycles;
floor_s = item_s = 0). Parameters are per op
family x engine, pooled over the calibration GPUs (A100, H100, B200, L40S where measured), so a GPU enters
only through its datasheet: compute_eff, memory_eff in (0, 1], floor_s and item_s in seconds, smooth p in [1, 20],
step_s in seconds, step_cycles in clocks.
A measured architecture also has its own fit (the GPU's rows alone), used for GPUs of that architecture.
Fitted by validate/modern_fit.py; scored leave-one-GPU-out by benchmarks/accuracy_modern.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ...errors import WhatifError
from ..ridge import ridge

FIT_FILE = Path(__file__).resolve().parents[1] / "data" / "modern_fit.yaml"


@dataclass(frozen=True)
class RooflineParams:
    """A fitted roofline: a floor, compute and memory efficiencies and the blend between them."""

    floor_s: float
    compute_eff: float
    memory_eff: float
    smooth: float = 2.0
    item_s: float = 0.0
    l2_speedup: float = 1.0
    provenance: str = ""
    step_s: float = 0.0
    step_cycles: float = 0.0
    host_smooth: float = 0.0   # > 0: an eagerly timed op, host launches overlapping its GPU time (host_overlap)
    expert_s: float = 0.0   # fused MoE: seconds per touched expert, whatever its slice (moe_fit.EXPERT_COST_KERNELS)
    floor_cycles: float = 0.0   # SM clocks a call (FIXED_COST_IN_CLOCKS families), beside floor_s
    item_cycles: float = 0.0    # SM clocks a fixed-cost work item on one SM (FIXED_COST_IN_CLOCKS), beside item_s


# Families whose fixed cost (floor and per-item cost) is the kernel's own instruction chain on one SM, so SM clocks:
# encoder attention's smallest call is one CTA's pass over one query tile (load Q, one K/V tile, QK^T, softmax, PV,
# store: FlashAttention-3 / -4, TensorRT-LLM's fmha_v2 / trtllm-gen, query_tile in encoder_attention.py), its items
# whole query tiles. Leave-one-GPU-out, every cell better (docs/accuracy.md "Session 72 G"): TensorRT-LLM B200 /
# H100 / L40S 13.8 / 13.3 / 27.5 -> 10.6 / 9.2 / 14.3%, SGLang and vLLM (B200, H100) 0.1-0.6 points.
FIXED_COST_IN_CLOCKS = ("encoder_attention",)
# (family, engine) pairs whose floor is in SM clocks for that engine's kernels alone: vLLM's one-block-a-token
# static_scaled_fp8_quant and SGLang's collector chain of four PyTorch elementwise kernels, graph-replayed; their
# smallest calls cost ~3,100-3,900 SM clocks a kernel on B200, H100 and L40S alike (docs/accuracy.md "Session 74 E").
# TensorRT-LLM's scaleMatrixPerTensorVec is not among them: launched with programmatic dependent launch on sm90+
# (cudaGridDependencySynchronize; TensorRT-LLM cpp/tensorrt_llm/common/cudaFp8Utils.cu), its floor is 2,400 clocks
# on H100, 3,300 on B200 and 6,500 on L40S.
FIXED_COST_IN_CLOCKS_BY_ENGINE = {"quantize_scale": ("vllm", "sglang")}


def fixed_cost_in_clocks(family: str, engine: str = "") -> bool:
    """Whether `family`'s floor and per-item cost are fitted in SM clocks (FIXED_COST_IN_CLOCKS, by name prefix;
    FIXED_COST_IN_CLOCKS_BY_ENGINE, for `engine`'s rows of that family)."""
    return family.startswith(FIXED_COST_IN_CLOCKS) or engine in FIXED_COST_IN_CLOCKS_BY_ENGINE.get(family, ())


def memory_times(moved, bandwidth, l2_bytes, footprint=None):
    """(HBM s, L2-resident s) of `moved` bytes at `bandwidth`: all of it one or the other (floats or columns).
    footprint: the distinct bytes the kernel touches, where it reads and rewrites them in place (a recurrent
    state: moved twice, resident once); default `moved`. Residency is footprint <= L2."""
    held = moved if footprint is None else footprint
    if isinstance(moved, (int, float)) and isinstance(held, (int, float)):
        return (0.0, moved / bandwidth) if held <= l2_bytes else (moved / bandwidth, 0.0)
    import numpy as np   # (here only: the fitters pass columns)
    t = np.asarray(moved, dtype=float) / bandwidth
    resident = np.asarray(held) <= l2_bytes
    return np.where(resident, 0.0, t), np.where(resident, t, 0.0)


def fitted_seconds(parts, items, sms, p: RooflineParams, steps=0.0, clocked=0.0, clock=1.0, stream=None, host=1.0):
    """Seconds of an op from its kernels' ideal (compute s, HBM s, L2-resident s) `parts`, its fixed-cost `items`,
    its serial `steps` and its `clocked` steps at `clock` Hz; floats or columns. stream: (HBM s,
    L2-resident s) of a stream the op's kernels' bytes run beside (under_stream), None where they run alone.
    host: the GPU's hosts' eager launch over the fit's reference host (eager_host.host_x), scaling floor_s of a
    family whose floor is host launches (eager_host.EAGER_HOST_FAMILIES; host_overlap: its launches); 1.0 elsewhere."""
    if p.host_smooth:
        return host_overlap(parts, items, sms, p, steps, clocked, clock, host)
    serial = p.step_s * steps + p.step_cycles * clocked / clock
    fixed = p.floor_s * host + p.floor_cycles / clock + (p.item_s + p.item_cycles / clock) * items / sms
    if stream is not None:   # the kernels' work, serial steps too, runs beside another stream (vLLM's per-token
        # quantizer less the static one: H100's chain hides under HBM, B200's shows; docs/accuracy.md "Session 63 I")
        return fixed + under_stream(kernels_busy(serial, parts, p), stream, p)
    return fixed + kernels_busy(serial, parts, p)


def under_stream(busy, stream, p: RooflineParams):
    """What `busy` seconds of memory traffic add to a kernel already streaming `stream` (HBM s, L2-resident s) at
    the datasheet's rate: the ridge of the two less the stream (the two run concurrently, so traffic well under
    the stream mostly hides and traffic above it shows whole)."""
    s_m, s_l2 = stream
    t = s_m + s_l2 / p.l2_speedup
    return ridge(busy, t, p.smooth) - t


def kernels_busy(busy, parts, p: RooflineParams):
    """`busy` plus each kernel's ridge of its compute and memory seconds at `p`'s efficiencies (added in order:
    fitted_seconds and host_overlap share it)."""
    for t_c, t_m, t_l2 in parts:
        busy = busy + ridge(t_c / p.compute_eff, (t_m + t_l2 / p.l2_speedup) / p.memory_eff, p.smooth)
    return busy


def host_overlap(parts, items, sms, p: RooflineParams, steps=0.0, clocked=0.0, clock=1.0, host=1.0):
    """Seconds of an op timed eagerly (no CUDA graph): the host issues its launches (floor_s + step_s a launch)
    while the GPU runs the kernels already queued, so the two overlap: ridge(host, GPU, host_smooth) (the
    launches are asynchronous, cudaLaunchKernel returning before the kernel runs; CUDA C++ Programming Guide,
    "Asynchronous Concurrent Execution"); host_smooth 1 is their sum, 20 their max."""
    gpu = kernels_busy(p.floor_cycles / clock + (p.item_s + p.item_cycles / clock) * items / sms
                       + p.step_cycles * clocked / clock, parts, p)
    return ridge((p.floor_s + p.step_s * steps) * host, gpu, p.host_smooth)


@cache
def _families() -> dict:
    from ...specs.profiles import read_yaml
    return read_yaml(FIT_FILE).get("families", {}) if FIT_FILE.is_file() else {}


def fitted_families() -> dict:
    """{family: [engines]} of the shipped fits."""
    return {f: sorted(by) for f, by in _families().items()}


def _params(b: dict, prov: str) -> RooflineParams:
    return RooflineParams(float(b["floor_s"]), float(b["compute_eff"]), float(b["memory_eff"]), float(b["smooth"]),
                          float(b["item_s"]), float(b["l2_speedup"]), prov, float(b.get("step_s", 0.0)),
                          float(b.get("step_cycles", 0.0)), float(b.get("host_smooth", 0.0)),
                          floor_cycles=float(b.get("floor_cycles", 0.0)), item_cycles=float(b.get("item_cycles", 0.0)))


@cache
def family_params(family: str, engine: str, arch: str = "") -> RooflineParams:
    """Fitted parameters of one op family for an engine and a GPU architecture: the architecture's own fit
    where a GPU of it was measured, else the fit pooled over every measured GPU (the leave-one-GPU-out
    column of docs/accuracy.md is what to expect then). An engine without its own fit of the family takes
    another engine's (sglang, then trtllm, then vllm); the provenance says which fit was taken and why."""
    families = _families()
    if family not in families:
        raise WhatifError(f"kernel family '{family}' has no fit; valid: {', '.join(sorted(families))}")
    by_engine = families[family]
    chosen, why = engine, ""
    if engine not in by_engine:
        chosen = next(e for e in ("sglang", "trtllm", "vllm") if e in by_engine)
        why = f"; no {engine} fit of {family}: {chosen}'s"
    b = by_engine[chosen]
    own = b.get("by_arch", {}).get(arch)
    if own is not None:
        on = own["fitted_on"]
        return _params(own, f"fitted on {on['rows']} {chosen} rows of {on['gpu']} ({on['table']}, aiconfigurator "
                            f"collector {on['versions']}){why}")
    on = b["fitted_on"]
    pooled = f"; no {arch} GPU measured: pooled over {', '.join(on['gpus'])}" if arch else ""
    return _params(b, f"fitted on {on['rows']} {chosen} rows of {', '.join(on['gpus'])} ({on['table']}, "
                      f"aiconfigurator collector {on['versions']}){why}{pooled}")
