"""Fused MoE expert layer (gate+up GEMM, activation, down GEMM over the routed tokens) on one GPU.

    t = floor + item_s * launched_tiles / SMs + expert_s * touched + (t_c^p + t_m^p)^(1/p)
    (t_m /= l2_speedup when the working set fits in L2)
    t_c = padded_tokens * 6 * h * I_l / (peak * compute_eff)          (gated: 2*h*2I_l + 2*I_l*h per row)
    t_m = (touched * 3 * h * I_l * w_bytes + activation bytes) / (hbm * memory_eff)
    activation bytes = (2 T h + T topk (3 I_l + h)) * a_bytes  (every slot, EP-masked ones too)

I_l = inter_size / tp; the GPU holds E / ep experts. `touched` = its experts that receive at least one
token (their weights are read once); padded_tokens = sum over its experts of ceil(tokens_e / tile_m) *
tile_m (the grouped GEMM pads each expert's rows to its M tile: the power of two covering the mean
rows per touched expert, 16 to 128, as tuned fused-MoE configs pick). launched_tiles: the grouped GEMMs' grid is
sized on the host for the worst case of ALL T*topk slots over all E experts (flashinfer/TensorRT-LLM trtllm-gen
runner.h getMaxNumCtasInBatchDim: min(E, T*k) + ceil((T*k - min(E, T*k)) / tile) M tiles; vLLM's Triton fused_moe
likewise grids over the padded sorted slots), times each GEMM's N tiles; the tiles with no local rows exit early,
at a cost per tile that EP does not remove. Token loads follow the routing
the corpus measured: 'balanced' (round-robin over experts) or 'power_law_<alpha>' (expert loads
sampled from a power law, the most loaded EP group on this GPU), computed from the distribution,
never from a measured time. `groups` (n_group, topk_group): the collector's logits then pass through the
model's group-limited top-k (DeepSeek-V3's noaux_tc: 8 groups, top 4), as SGLang's and vLLM's collectors route
them (collect_moe.py's TopK(use_grouped_topk=...)); their logits are a one-hot softmax, so every group scores
alike and the ties fall to the lowest indices: a token's picks move into groups 0-3 and onto experts 0-3
(grouped_selections), which is why that table's DeepSeek rows barely fall from EP 1 to EP 2.
expert_s (0 but where validate/moe_fit.EXPERT_COST_KERNELS fits it, small-M): a cost per touched expert whatever its
slice. Parameters (floor_s, compute_eff, memory_eff in (0, 1], smooth p) are per engine x architecture x dtype, in two
regimes: at most SMALL_M routed rows per touched expert (decode: one minimal M tile each, where the engines'
grouped GEMMs pick other tiles and low-latency kernels), and more; a block may split the second at tile_m's cap
(TILE_M_CAP = 128 rows an expert, `mid_m`, session 63): up to it each expert runs one partly filled M tile (weight
reads dominate), above it several full ones (compute-bound). 128 is the largest M tile of the kernels fitted: Triton
fused_moe's tuned configs (BLOCK_SIZE_M 16-128, vllm/model_executor/layers/fused_moe/configs/*.json), TRTLLM-Gen's
tile_tokens_dim (the power of two over the mean tokens an expert, clamped: vLLM's calculate_tile_tokens_dim 8-64,
FlashInfer's later kernels to 128), the CUTLASS grouped GEMM's 128-row CTA tiles (TileShape 128x128x128).
Long because: the collector's power-law draw and its two count adjustments sit beside the routing stats they feed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import math
from functools import lru_cache, cache
from pathlib import Path

from ...errors import WhatifError
from ..engines import DEFAULT_ENGINE
from ..ridge import ridge
from .fitted_roofline import RooflineParams

if TYPE_CHECKING:
    import numpy as np

SAMPLES = 4     # power-law routings averaged (seeded: the model is deterministic)
SMALL_M = 16    # routed rows per touched expert at or under which the small-M (decode) parameters apply
UNCAPPED = "_uncapped"   # power_law_<alpha>_uncapped: a table the older collector drew (power_law_loads 'legacy')
TILE_M_CAP = 128   # tile_m's largest M tile: above it an expert runs several full tiles (the optional large-M split)


def balanced_selections(tokens: int, topk: int, experts: int) -> np.ndarray:
    """(tokens, topk) experts when token i picks (i + j*stride) % E, stride = ceil(E/topk) (spread evenly
    over the stride when there are fewer tokens than the stride): the collector's balanced_logits."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    stride = math.ceil(experts / topk)
    i = np.arange(tokens)[:, None]
    j = np.arange(topk)[None, :]
    base = i if tokens >= stride else (i * stride / tokens).astype(np.int64)
    return ((base + j * stride) % experts).astype(np.int64)


def balanced_loads(tokens: int, topk: int, experts: int) -> np.ndarray:
    """Tokens per expert of balanced_selections."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    return np.bincount(balanced_selections(tokens, topk, experts).ravel(), minlength=experts)


def assigned_selections(loads: np.ndarray, tokens: int, topk: int) -> np.ndarray:
    """(tokens, topk) experts from per-expert loads as the collector fills them (helper.py
    _assign_experts_from_counts: experts by load, most first, repeated by load, column-major)."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    order = np.argsort(-loads, kind="stable")
    return np.repeat(order, loads[order]).reshape(topk, tokens).T


def grouped_selections(picks: np.ndarray, experts: int, n_group: int, topk_group: int) -> np.ndarray:
    """The experts a group-limited top-k selects when the picked experts score high and the others low, all
    alike (the collector's one-hot softmax logits): groups ranked by their top-2 sum (groups with more picks
    first), topk_group of them kept, then the picks inside them and the lowest-index others; ties to the lowest
    index (the DeepSeek rows' EP scan: 8,192 tokens take the same time at EP 1 and 2, 0.77 / 0.65 / 0.54 of it
    at EP 4 / 8 / 64, where these selections put 1.0, 0.75, 0.62, 0.50 of the rows on rank 0)."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    tokens, topk = picks.shape
    size = experts // n_group
    high = np.zeros((tokens, experts), bool)
    np.put_along_axis(high, picks, True, axis=1)
    score = np.minimum(high.reshape(tokens, n_group, size).sum(axis=2), 2)
    kept = np.argsort(-score * n_group + np.arange(n_group), axis=1, kind="stable")[:, :topk_group]
    allowed = np.zeros((tokens, n_group), bool)
    np.put_along_axis(allowed, kept, True, axis=1)
    allowed = np.repeat(allowed, size, axis=1)
    rank = np.where(allowed, np.where(high, 0, experts) + np.arange(experts), 4 * experts)
    return np.argsort(rank, axis=1, kind="stable")[:, :topk]


def power_law_loads(tokens: int, topk: int, experts: int, ep: int, alpha: float, seed: int,
                    spread: str = "ranks") -> np.ndarray:
    """Expert loads as aiconfigurator's collector draws them (helper.py _generate_power_law_distribution): x^-alpha on
    [1, 0.8 T] (or [0.01, 2] when T*topk <= E) scaled to T*topk and rounded, each expert capped at T (a token picks
    an expert once), the overflow and the rounding's shortfall added one at a time round-robin over the EP ranks,
    each to its least-loaded uncapped expert, a surplus taken from each rank's most loaded; the EP group with the
    largest load placed first (this GPU's). spread='smallest': the EPLB variant's adjustment (helper.py
    _generate_power_law_distribution_with_eplb: units go to the least-loaded experts of the whole layer);
    'legacy': the older collector's (helper.py before the cap: no cap, the shortfall added to the most loaded
    experts first, ties by index, so T*topk <= E puts every assignment on experts 0.. of one rank)."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    rng = np.random.default_rng(seed)
    lo, hi = (1.0, tokens * 0.8) if tokens * topk > experts else (0.01, 2.0)
    u = rng.random(experts)
    a = 1.0 - alpha
    x = ((hi ** a - lo ** a) * u + lo ** a) ** (1.0 / a)
    target = tokens * topk
    loads = np.round(x / x.sum() * target).astype(np.int64)
    overflow = int(np.clip(loads - tokens, 0, None).sum())
    if spread == "legacy":   # the older collector: no cap, the shortfall onto the most loaded experts first
        _legacy_adjust(loads, target)
    elif spread == "ranks":
        loads = np.minimum(loads, tokens)
        groups = loads.reshape(ep, experts // ep)
        _round_robin_over_ranks(groups, overflow, 1, tokens)
        delta = int(target - groups.sum())
        _round_robin_over_ranks(groups, abs(delta), 1 if delta > 0 else -1, tokens)
    else:
        loads = np.minimum(loads, tokens)
        _to_smallest(loads, overflow, tokens, target)
    groups = loads.reshape(ep, experts // ep)
    top = int(np.argmax(groups.sum(axis=1)))
    groups[[0, top]] = groups[[top, 0]]
    return groups.ravel()


def _round_robin_over_ranks(groups: np.ndarray, units: int, step: int, cap: int) -> None:
    """In place: `units` steps of +-1, ranks in turn, each on its least-loaded expert under `cap` (+1) or its most
    loaded non-empty one (-1), first index on ties (helper.py _round_robin_adjust_per_rank, torch.argmin/argmax)."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    while units > 0:
        progressed = False
        for row in groups:
            valid = np.flatnonzero(row < cap) if step > 0 else np.flatnonzero(row > 0)
            if not valid.size:
                continue
            row[valid[np.argmin(row[valid]) if step > 0 else np.argmax(row[valid])]] += step
            units -= 1
            progressed = True
            if units == 0:
                break
        if not progressed:
            return


def _legacy_adjust(loads: np.ndarray, target: int) -> None:
    """In place, the older collector's adjustment: a shortfall added to the most loaded experts first (stable order),
    a surplus taken from the least loaded."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    delta = int(target - loads.sum())
    order = np.argsort(-loads, kind="stable")
    if delta > 0:
        np.add.at(loads, order[np.arange(delta) % len(loads)], 1)
    for k in range(-delta):
        idx = order[-(k % len(loads)) - 1]
        loads[idx if loads[idx] > 0 else int(np.argmax(loads))] -= 1


def _to_smallest(loads: np.ndarray, overflow: int, cap: int, target: int) -> None:
    """In place, the EPLB variant's adjustment: the overflow onto the least-loaded expert still under `cap`, then the
    rounding's shortfall (surplus) cycled over the experts from the least loaded, one each."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    order = np.argsort(-loads, kind="stable")
    for _ in range(overflow):
        under = order[::-1][loads[order[::-1]] < cap]
        if under.size:
            loads[under[0]] += 1
    delta = int(target - loads.sum())
    order = np.argsort(-loads, kind="stable")
    if delta > 0:
        added = 0
        for i in range(delta * len(order)):
            if added >= delta:
                break
            idx = order[-(i % len(order)) - 1]
            if loads[idx] < cap:
                loads[idx] += 1
                added += 1
    for k in range(-delta):
        idx = order[-(k % len(order)) - 1]
        loads[idx if loads[idx] > 0 else int(np.argmax(loads))] -= 1


def tile_m(rows_per_expert: float) -> int:
    """The M tile a tuned grouped GEMM picks: the power of two covering an expert's mean rows,
    16 to 128."""
    return int(min(TILE_M_CAP, max(16, 2 ** math.ceil(math.log2(max(rows_per_expert, 1.0))))))


CONTIGUOUS_BLOCK_M = 128   # DeepGEMM contiguous layout M alignment (get_mk_alignment_for_contiguous_layout)


def unaligned_contiguous_stats(mine) -> tuple[float, float, float]:
    """(experts read, token rows computed, assignments) of DeepGEMM's contiguous grouped GEMM fed per-expert
    counts not padded to its M block: rows packed expert after expert, each 128-row block reads the weights of
    the expert at its first row only (DeepGEMM's scheduler: grouped_layout[m_block_idx * BLOCK_M])."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    rows = int(mine.sum())
    blocks = -(-rows // CONTIGUOUS_BLOCK_M)
    owner = np.searchsorted(np.cumsum(mine), np.arange(blocks) * CONTIGUOUS_BLOCK_M, side="right")
    return float(len(np.unique(owner))), float(blocks * CONTIGUOUS_BLOCK_M), float(rows)


@lru_cache(maxsize=65536)
def routing_stats(tokens: int, topk: int, experts: int, ep: int, distribution: str,
                  groups: tuple[int, int] | None = None, redundant: int = 0,
                  layout: str = "tuned", tile: int = 0) -> tuple[float, float, float]:
    """(touched experts, padded token rows, assignments) on this GPU (its E/ep experts), averaged
    over seeded power-law samples; `groups` (n_group, topk_group): through the collector's grouped top-k.
    'power_law_<alpha>_eplb': the same loads rebalanced by EPLB over E + `redundant` slots, this GPU the busiest
    rank (aiconfigurator's collector helper.py `_generate_power_law_distribution_with_eplb`: replication, greedy
    packing, the slowest rank measured as rank 0). layout: 'tuned' or 'masked' (an M tile by the mean rows, tile_m),
    'contiguous' (DeepGEMM's contiguous layout: each expert padded to 128 rows, as DeepEP's normal dispatch and
    the collector's power-law counts are) or 'unaligned' (counts reach that layout unpadded, as the SGLang wide-EP
    prefill collector's uniform rows pass them: collect_wideep_deepep_moe.py; unaligned_contiguous_stats).
    `tile`: the M tile the kernel runs whatever the rows (triton_moe_tile.py); 0: the layout's."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    if experts % ep:
        raise WhatifError(f"moe_ep_size: {ep} does not divide num_experts {experts}; valid: a divisor")
    local = experts // ep
    if distribution.startswith("power_law_") and distribution.endswith("_eplb") and not groups:
        from ..expert_load import eplb_busiest_slots
        alpha = float(distribution.removeprefix("power_law_").removesuffix("_eplb"))
        return rank_stats([eplb_busiest_slots(power_law_loads(tokens, topk, experts, ep, alpha, s, "smallest")
                                              .astype(float), ep,
                                              redundant) for s in range(SAMPLES)], layout, tile)
    if distribution == "balanced":
        picks = [balanced_selections(tokens, topk, experts)] if groups else []
        samples = [balanced_loads(tokens, topk, experts)]
    elif distribution.startswith("power_law_"):
        spread = "legacy" if distribution.endswith(UNCAPPED) else "ranks"
        alpha = float(distribution.removeprefix("power_law_").removesuffix(UNCAPPED))
        samples = [power_law_loads(tokens, topk, experts, ep, alpha, s, spread) for s in range(SAMPLES)]
        picks = [assigned_selections(loads, tokens, topk) for loads in samples] if groups else []
    else:
        raise WhatifError(f"distribution '{distribution}' is not valid; valid: balanced, power_law_<alpha>")
    if groups:
        samples = [np.bincount(grouped_selections(p, experts, *groups).ravel(), minlength=experts) for p in picks]
    return rank_stats([loads[:local] for loads in samples], layout, tile)


def rank_stats(mines, layout: str, tile: int = 0) -> tuple[float, float, float]:
    """routing_stats' mean (touched experts, padded token rows, assignments) over per-sample local loads `mines`,
    the rows padded as `layout` lays them out."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    stats = []
    for mine in mines:
        if layout == "unaligned":
            stats.append(unaligned_contiguous_stats(mine))
            continue
        tm = tile or (CONTIGUOUS_BLOCK_M if layout == "contiguous" else tile_m(mine.sum() / max((mine > 0).sum(), 1)))
        stats.append(((mine > 0).sum(), (np.ceil(mine / tm) * tm).sum(), mine.sum()))
    return tuple(float(v) for v in np.mean(stats, axis=0))


def moe_ideal_times(tokens, hidden, inter, topk, experts, tp, ep, distribution, peak, hbm,
                    w_bytes=2.0, a_bytes=2.0, l2_bytes=0.0, groups=None, l2_rate=None, tile=0):
    """(compute s, HBM-streamed s, L2-resident s) at efficiency 1 for one fused MoE layer on one GPU: its two
    grouped GEMMs' (moe_gemm_ideal_times) summed. A working set that fits in L2 is read from L2 on back-to-back
    replays (the corpus's warm-L2 timing, and a decode step's reuse across layers does not apply: a larger one
    thrashes it)."""
    gemms = moe_gemm_ideal_times(tokens, hidden, inter, topk, experts, tp, ep, distribution, peak, hbm, w_bytes,
                                 a_bytes, l2_bytes, groups, l2_rate, tile)
    return tuple(sum(g[i] for g in gemms) for i in range(3))


def moe_gemm_ideal_times(tokens, hidden, inter, topk, experts, tp, ep, distribution, peak, hbm,
                         w_bytes=2.0, a_bytes=2.0, l2_bytes=0.0, groups=None, l2_rate=None, tile=0):
    """(compute s, HBM s, L2 s) at efficiency 1 of each grouped GEMM of one fused MoE layer on one GPU, [gate+up,
    down]: the split the serving path prices (roofline/moe.py's experts_gate_up and experts_down ops, each its own
    ridge); the layer's whole working set decides whether both are read from L2, at `l2_rate` bytes/s (None: at the
    HBM rate, the fit's l2_speedup a multiple of it; validate/moe_fit.SM_RATE_L2_FITS pass the SMs' own rate);
    `tile`: the kernel's fixed M tile (triton_moe_tile.py), 0: tile_m's."""
    touched, padded, assigned = routing_stats(int(tokens), int(topk), int(experts), int(ep), distribution, groups,
                                              tile=tile)
    inter_l = inter / tp
    flops = (padded * 4.0 * hidden * inter_l, padded * 2.0 * hidden * inter_l)   # gate+up N = 2 I_l; down K = I_l
    weights = (touched * 2.0 * hidden * inter_l * w_bytes, touched * hidden * inter_l * w_bytes)
    # The activation and top-k sum kernels run over all T*topk slots, EP-masked ones included: gate+up reads the
    # tokens and writes 2 I_l a slot; down reads I_l a slot, writes h a slot, and the sum writes the tokens.
    acts = ((tokens * hidden + tokens * topk * 2 * inter_l) * a_bytes,
            (tokens * hidden + tokens * topk * (inter_l + hidden)) * a_bytes)
    resident = sum(weights) + sum(acts) <= l2_bytes
    out = []
    for f, w, a in zip(flops, weights, acts):
        moved = (w + a) / hbm
        out.append((f / peak, 0.0 if resident else moved, (w + a) / (l2_rate or hbm) if resident else 0.0))
    return out


TILE_N = 128    # N tile of the grouped GEMMs' launch grid (trtllm-gen and Triton fused-MoE configs)


def grid_m_tiles(tokens: float, topk: float, experts: float, tile: int = 0) -> float:
    """M tiles the fused MoE's launch grid covers: getMaxNumCtasInBatchDim over every slot of the TP group's
    tokens (not only this GPU's), at `tile` (the kernel's fixed M tile), else the tile the mean rows per expert pick."""
    slots = tokens * topk
    first = min(experts, slots)   # one slot per expert first (the most tiles), the rest poured into full tiles
    return first + math.ceil((slots - first) / (tile or tile_m(slots / experts)))


def launched_tiles(tokens: float, topk: float, experts: float, hidden: float, inter_l: float,
                   gated: bool = True, tile: int = 0, tile_n: int = TILE_N) -> float:
    """CTA tiles both grouped GEMMs launch (gate+up: N = 2 I_l or I_l; down: N = h) at M tile `tile` (0: tile_m's)
    and N tile `tile_n`."""
    up = (2 * inter_l if gated else inter_l)
    return grid_m_tiles(tokens, topk, experts, tile) * (math.ceil(up / tile_n) + math.ceil(hidden / tile_n))


def fixed_seconds(params: RooflineParams, tiles_per_sm=0.0, touched=0.0):
    """A layer's time beside its GEMMs' ridge: floor + item_s * tiles/SM + expert_s * touched experts."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    return params.floor_s + params.item_s * np.asarray(tiles_per_sm) + params.expert_s * np.asarray(touched)


def moe_time(t_c, t_m, t_l2, params: RooflineParams, tiles_per_sm=0.0, touched=0.0):
    """Seconds from ideal times: floor + item_s * tiles/SM + expert_s * touched experts
    + ((t_c/ce)^p + (t_m/me + t_l2/(me*l2_speedup))^p)^(1/p)."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    c = np.asarray(t_c) / params.compute_eff
    m = (np.asarray(t_m) + np.asarray(t_l2) / params.l2_speedup) / params.memory_eff
    return fixed_seconds(params, tiles_per_sm, touched) + ridge(c, m, params.smooth)


# Fits whose kernel writes gemm2's output per routed slot in bf16 and reads it back in a separate finalize kernel:
# FlashInfer's TRTLLM-Gen MoE (csrc/trtllm_fused_moe_kernel_launcher.cu: `gemm2_output = alloc_tensor(
# {max_num_padded_tokens_gemm2, hidden_size}, dl_bfloat16)`; the runner's PermuteGemm1, Gemm2, finalize), the kernel of
# SGLang's flashinfer_trtllm and vLLM's FlashInferTrtllmNvFp4Experts: (fit engine, whatif dtype). Session 62 N: the fits
# without it read x1.2 at moe_tp 1 and x0.3 at moe_tp 32 (> 1k tokens). These fits are in the serving form: each
# grouped GEMM its own ridge (split_moe_time), so fit and serving price the layer alike (session 63 F).
FINALIZE_FITS = frozenset({("sglang", "fp4"), ("vllm", "fp4")})
FINALIZE_BYTES = 2.0 * 2.0   # bf16 written by gemm2 and read by finalize, a routed slot x hidden element


def finalize_seconds(slots: float, hidden: float, hbm: float, engine: str, dtype: str) -> float:
    """Ideal HBM seconds of the per-slot bf16 gemm2 output's round trip (0 for fits whose kernel has none)."""
    return slots * hidden * FINALIZE_BYTES / hbm if (engine, dtype) in FINALIZE_FITS else 0.0


def fused_gemm_time(t_c, t_m, t_finalize, params: RooflineParams):
    """One grouped GEMM of a FINALIZE_FITS layer from efficiency-scaled compute / memory seconds and its ideal
    finalize seconds (the down GEMM's; 0 for gate+up): ridge(t_c, t_m) + t_finalize / memory_eff. The one form
    both validate/moe_fit (split_moe_time) and kernel_timing.expert_gemm_seconds price."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    return ridge(t_c, t_m, params.smooth) + np.asarray(t_finalize) / params.memory_eff


def split_moe_time(gemms, params: RooflineParams, tiles_per_sm=0.0, t_finalize=0.0, touched=0.0):
    """Seconds of a layer priced per grouped GEMM (`gemms`: [(t_c, t_m, t_l2)] ideal, moe_gemm_ideal_times): floor +
    item_s * tiles/SM + sum of fused_gemm_time, the finalize on the down GEMM."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    total = fixed_seconds(params, tiles_per_sm, touched)
    for i, (t_c, t_m, t_l2) in enumerate(gemms):
        c = np.asarray(t_c) / params.compute_eff
        m = (np.asarray(t_m) + np.asarray(t_l2) / params.l2_speedup) / params.memory_eff
        total = total + fused_gemm_time(c, m, t_finalize if i == len(gemms) - 1 else 0.0, params)
    return total


# ---- fitted parameters (whatif/roofline/data/moe_fit.yaml, written by validate/moe_fit.py) ----
FIT_FILE = Path(__file__).resolve().parents[1] / "data" / "moe_fit.yaml"
DEFAULT_ARCH = "hopper"
QUANTIZED = ("fp8", "fp4")   # low-precision tensor-core MoEs: one engine's fit of one stands in for the other


@cache
def _blocks() -> dict:
    from ...specs.profiles import read_yaml
    return read_yaml(FIT_FILE).get("blocks", {})


def has_moe_fit(dtype: str, arch: str | None = None, engine: str = DEFAULT_ENGINE) -> bool:
    """Whether `engine`'s experts of this dtype on `arch` (None: on some architecture) are priced by a fused-MoE
    fit (moe_params' rules), else by the per-class model."""
    if arch is None:
        return any(k.split("/")[2] == dtype for k in _blocks())
    try:
        moe_params(arch, dtype, engine)
    except WhatifError:
        return False
    return True


def _block_key(arch: str, dtype: str, engine: str) -> tuple[str, str]:
    """(block key, provenance note) by the selection rule: the engine's own fit of this architecture x dtype;
    a quantized dtype it has no rows of: its own fit of the other quantized dtype on this architecture, at this
    dtype's peak and bytes (the efficiencies are dimensionless); bf16 it has no rows of: vLLM's (the model all
    engines had before the per-engine fits), said; an architecture no engine was fitted on: the same rules on
    Hopper's. Never another engine's quantized kernel: without one of its own, the per-class model prices it."""
    blocks = _blocks()
    for a in (arch,) if arch in {k.split("/")[1] for k in blocks} else (DEFAULT_ARCH,):
        moved = "" if a == arch else f"; {arch}/{dtype} has no fit: {a}'s"
        if f"{engine}/{a}/{dtype}" in blocks:
            return f"{engine}/{a}/{dtype}", moved
        other = [f"{engine}/{a}/{d}" for d in QUANTIZED if d != dtype and dtype in QUANTIZED]
        if other and other[0] in blocks:
            return other[0], (f"; {engine} has no {dtype} MoE rows on {a}: its {other[0].split('/')[2]} fit at "
                              f"{dtype}'s peak and bytes{moved}")
        if dtype == "bf16" and f"{DEFAULT_ENGINE}/{a}/{dtype}" in blocks:
            return f"{DEFAULT_ENGINE}/{a}/{dtype}", (f"; {engine} has no bf16 MoE rows on {a}: "
                                                     f"{DEFAULT_ENGINE}'s fused MoE stands in{moved}")
    if not any(k.split("/")[2] == dtype for k in blocks):
        valid = ", ".join(sorted({k.split("/")[2] for k in blocks}))
        raise WhatifError(f"moe dtype '{dtype}' is not valid; valid: {valid}")
    raise WhatifError(f"no fused-MoE fit of {engine}'s {dtype} experts on {arch}: the per-class model prices them")


def moe_fit_source(arch: str, dtype: str, engine: str = DEFAULT_ENGINE) -> str:
    """The collector's kernel_source of the rows the fit moe_params picks was fitted on ('' where none applies)."""
    from . import cdna
    try:
        key, _ = _block_key(cdna.stand_in(arch) if cdna.is_cdna(arch) else arch, dtype, engine)
    except WhatifError:
        return ""
    return str(_blocks()[key]["fitted_on"].get("kernel_source", ""))


def moe_regime(rows_per_expert: float) -> str:
    """The fit regime of a grouped expert GEMM by its routed rows per touched expert: 'small' (<= SMALL_M: decode's
    one minimal tile), 'mid' (<= TILE_M_CAP: one partly filled M tile), 'large' (several full 128-row tiles)."""
    return "small" if rows_per_expert <= SMALL_M else "mid" if rows_per_expert <= TILE_M_CAP else "large"


def _regime_values(block: dict, regime: str) -> tuple[dict, str]:
    """(parameter values, rows-per-expert range) of `regime` in a block: `small_m` / `mid_m` where the block has
    them, else its top-level set (which covers everything over SMALL_M in a block without `mid_m`)."""
    if regime == "small" and "small_m" in block:
        return block["small_m"], f"<= {SMALL_M}"
    if regime == "mid" and "mid_m" in block:
        return block["mid_m"], f"{SMALL_M}-{TILE_M_CAP}"
    return block, f"> {TILE_M_CAP}" if "mid_m" in block else f"> {SMALL_M}"


@cache
def moe_params(arch: str, dtype: str = "bf16", engine: str = DEFAULT_ENGINE, regime: str = "large") -> RooflineParams:
    """Fitted parameters of an engine's fused MoE on an architecture x dtype in a regime (moe_regime: 'small',
    'mid', 'large'), chosen by _block_key's rules (the provenance says which); WhatifError where none applies (the
    per-class model prices those experts)."""
    from . import cdna
    if cdna.is_cdna(arch):   # the CDNA family entry: the stand-in's fit, rescaled (data/cdna_family.yaml)
        from dataclasses import replace
        base = moe_params(cdna.stand_in(arch), dtype, engine, regime)
        return replace(cdna.rescaled(base, arch, dtype),
                       provenance=f"{cdna.provenance(arch)}; stand-in {base.provenance}")
    key, why = _block_key(arch, dtype, engine)
    b = _blocks()[key]
    on = b["fitted_on"]
    v, rows = _regime_values(b, regime)
    return RooflineParams(float(v["floor_s"]), float(v["compute_eff"]), float(v["memory_eff"]), float(v["smooth"]),
                          item_s=float(v.get("item_s", 0.0)), l2_speedup=float(v["l2_speedup"]),
                          expert_s=float(v.get("expert_s", 0.0)),
                          provenance=f"fitted on {on['gpu']} {on['engine']} {on['moe_dtype']} rows ({key}, {rows} "
                          f"rows per expert){why}")
