"""Wide expert-parallel MoE: the routed experts' grouped GEMMs on one GPU of a large EP group (SGLang's
DeepEP MoE, TensorRT-LLM's wide-EP CUTLASS MoE), block-scaled fp8 or NVFP4 weights.

The work is the fused-MoE model's routing (kernel_models/moe.py: experts this GPU holds that receive tokens
read once, padded token rows x 6 h I FLOPs) at the weight format's bytes and tensor-core peak, but only the
token rows dispatched to this GPU are read and written (assignments x (3 I + 2 h) bf16): unlike a fused MoE
under TP, no GPU sees the masked slots of the others. `tokens` are the whole EP group's, routed uniformly
('balanced'), or by the tables' power law ('power_law_<alpha>'); EPLB-rebalanced rows ('..._eplb'): the same
power-law loads repacked by EPLB over the slots (redundant ones included), this GPU the busiest rank, as the
collector draws them (moe.routing_stats); taken as balanced they read every local expert, where EPLB's busiest
rank holds a few hot experts and idle ones (H100 left out x2.2-3.4 at 16-256 tokens, EP 32-64).
Parameters: data/modern_fit.yaml, families wideep_moe_prefill and wideep_moe_decode (SGLang: DeepEP normal
and low-latency kernels) and wideep_moe (TensorRT-LLM: one kernel for both).
"""
from __future__ import annotations

from .fitted_roofline import family_params, fitted_seconds, memory_times
from .moe import routing_stats
from .params import ceilings

# weight bytes per element (block scales included) and the tensor-core peak each format runs at
FORMATS = {"fp8_block": (1.0 + 4.0 / (128 * 128), "fp8"), "fp8": (1.0, "fp8"), "nvfp4": (0.5625, "fp4"),
           "bf16": (2.0, "bf16")}


def routing(distribution: str) -> str:
    return "balanced" if distribution == "uniform" else distribution


def wideep_moe_work(tokens, hidden, inter, topk, experts, ep, moe_format, distribution, c, tp=1, slots=None,
                    layout="tuned"):
    """slots: EPLB's expert slots (E + redundant; None: E); layout: the grouped GEMM's rows (moe.routing_stats)."""
    w_bytes, peak = FORMATS[moe_format]
    touched, padded, assigned = routing_stats(int(tokens), int(topk), int(experts), int(ep), routing(distribution),
                                              redundant=int(slots or experts) - int(experts), layout=layout)
    inter_l = inter / tp
    moved = touched * 3.0 * hidden * inter_l * w_bytes + assigned * (3.0 * inter_l + 2.0 * hidden) * 2.0
    # DeepGEMM's contiguous path scatters and gathers its input rows (ep_scatter / ep_gather: a program per row);
    # the collector's input is the whole group's tokens on one rank (collect_wideep_deepep_moe.py)
    items = float(tokens) if layout in ("contiguous", "unaligned") else 0.0
    return [(padded * 6.0 * hidden * inter_l / c.peak_flops(peak), *memory_times(moved, c.hbm_bw, c.l2_bytes))], items


def grouped_gemm_layout(engine: str, phase: str) -> str:
    """The grouped GEMM's row layout (moe.routing_stats): SGLang's prefill runs DeepGEMM's contiguous layout,
    DeepEP's normal dispatch padding each expert to 128 rows; its decode the masked layout (DeepEP low-latency);
    other engines a tuned tile."""
    if engine != "sglang":
        return "tuned"
    return "contiguous" if phase == "prefill" else "masked"


def masked_scheduler_steps(experts: int, ep: int, layout: str) -> float:
    """Serial steps of DeepGEMM's masked grouped GEMMs (SGLang's DeepEP low-latency MoE, layout 'masked'): each
    persistent CTA walks every local expert, one dependent masked_m load a group (scheduler.cuh get_next_block),
    exposed where few experts have rows; two GEMMs (gate-up, down)."""
    return 2.0 * experts / ep if layout == "masked" else 0.0


def wideep_family(engine: str, phase: str) -> str:
    return "wideep_moe" if engine == "trtllm" else f"wideep_moe_{phase}"


def wideep_moe_seconds(tokens: int, hidden: int, inter: int, topk: int, experts: int, ep: int, gpu,
                       moe_format: str = "fp8_block", phase: str = "prefill", engine: str = "sglang",
                       distribution: str = "balanced", moe_tp: int = 1, slots: int | None = None) -> float:
    """Seconds of one wide-EP MoE layer's expert compute on one GPU (no all-to-all: deepep.py prices it).

    tokens: the EP group's tokens this layer (all ranks); hidden, inter: the model's hidden and expert
    intermediate sizes; topk of experts experts split over ep GPUs (moe_tp each); moe_format: fp8_block |
    fp8 | nvfp4 | bf16; phase: prefill | decode (SGLang's DeepEP normal or low-latency MoE);
    distribution: balanced | power_law_<alpha> | power_law_<alpha>_eplb (slots: EPLB's, redundant included);
    gpu: a GPU profile or Ceilings."""
    c = ceilings(gpu)
    layout = grouped_gemm_layout(engine, phase)
    parts, items = wideep_moe_work(tokens, hidden, inter, topk, experts, ep, moe_format, distribution, c, moe_tp, slots,
                                   layout)
    return float(fitted_seconds(parts, items, c.sms, family_params(wideep_family(engine, phase), engine, c.arch),
                                masked_scheduler_steps(experts, ep, layout)))
