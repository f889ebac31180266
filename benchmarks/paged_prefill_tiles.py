"""vAttention's prefill claim (J-paged_kv-mean_ttft): whatif's prefill-attention model at the tile shapes of the
paged and the vanilla kernels the paper ran, for the claim's chunked prefill. A diagnosis: nothing here feeds a
prediction (docs/accuracy.md, "Session 64 B").

    python benchmarks/paged_prefill_tiles.py

Tile shapes (query rows x keys per CTA iteration), read at source:
- FlashAttention v2.5.x, paged (flash_attn_with_kvcache with block_table): csrc/flash_attn/flash_api.cpp
  mha_fwd_kvcache runs run_mha_fwd(..., force_split_kernel) for a paged cache, and
  flash_fwd_launch_template.h run_mha_fwd_splitkv_dispatch fixes kBlockM = 64, kBlockN = 128 (head dim 128), 4 warps.
- FlashAttention, vanilla (flash_attn_func): run_mha_fwd_hdim128, causal, sm80 (A100 is not "sm8x"): 128 x 64, 4 warps.
- FlashInfer v0.0.x, paged (BatchPrefillWithPagedKVCacheDispatched): num_frags_x 2 x 4 warps x 16 = 128 rows
  (query x GQA group), `constexpr uint32_t num_frags_z = 2`: 32 keys.
- FlashInfer, vanilla (SinglePrefillWithKVCacheDispatched): 128 rows, num_frags_z = min(smem, register limit) = 4 on
  an A100 without RoPE: 64 keys.
The model prices a (query tile, key tile) pair at max(MMA time, tile_s); it is rebound here to each kernel's tile
(the module's BQ, BK), and, as an upper bound, with the fitted per-pair cost tile_s paid per key-tile iteration on
top of the MMAs (a per-iteration cost no fit separates: the O rescale and Q fragment reload of every iteration).
"""
from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whatif.roofline.kernel_models import prefill_attention as pa   # noqa: E402
from whatif.roofline.kernel_models.params import ceilings, params_for   # noqa: E402
from whatif.specs.hardware import load_component   # noqa: E402

HEADS, KV_HEADS, HEAD_DIM, LAYERS = 16, 4, 128, 32   # Llama-3-8B per GPU at TP-2
CHUNK, PROMPT = 2048, 130048                          # the claim's chunk and prompt
KERNELS = (("FlashAttention vanilla (fwd)", 128, 64), ("FlashAttention paged (splitkv)", 64, 128),
           ("FlashInfer vanilla (single)", 128, 64), ("FlashInfer paged (batch)", 128, 32))


def chunk_seconds(context: int, bq: int, bk: int, per_iteration: bool, gpu, params) -> float:
    """One layer's attention over one chunk after `context` cached tokens, at a (bq, bk) tile."""
    pa.BQ, pa.BK = bq, bk
    c = ceilings(gpu)
    pairs = CHUNK * context + CHUNK * (CHUNK + 1) / 2.0
    length = (math.sqrt(1.0 + 8.0 * pairs) - 1.0) / 2.0   # the equivalent dense causal length (kernel_timing)
    p = replace(params, tile_s=0.0) if per_iteration else params
    t = float(pa.prefill_time_arrays(1, length, HEADS, KV_HEADS, HEAD_DIM, 2, 0, c.peak_flops("bf16"), c, p))
    if per_iteration:
        nq, mean_k, _ = pa.tile_pairs(length, HEADS / KV_HEADS, 0)
        t += KV_HEADS * float(nq * mean_k) * params.tile_s / c.sms
    return t


def prompt_seconds(bq: int, bk: int, per_iteration: bool, gpu, params) -> float:
    return LAYERS * sum(chunk_seconds(start, bq, bk, per_iteration, gpu, params)
                        for start in range(0, PROMPT, CHUNK))


def main() -> int:
    from whatif.claims.claim import all_claims, evaluate
    claim = next(c for c in all_claims() if c.technique == "paged_kv" and c.metric == "mean_ttft")
    ttft = evaluate(claim).baseline
    gpu = load_component("a100-sxm-80gb")
    params = params_for("prefill_attention", gpu.arch, "bf16", "vllm").params
    saved = pa.BQ, pa.BK
    try:
        attn = {(name, reading): prompt_seconds(bq, bk, reading, gpu, params)
                for name, bq, bk in KERNELS for reading in (False, True)}
    finally:
        pa.BQ, pa.BK = saved
    print(f"claim's TTFT (whatif, paged = contiguous): {ttft:.2f} s; A100 prefill fit {params}")
    print("| kernel | tile | attention, model (s) | attention, tile_s per iteration (s) |")
    for name, bq, bk in KERNELS:
        print(f"| {name} | {bq} x {bk} | {attn[name, False]:.2f} | {attn[name, True]:.2f} |")
    for lib in ("FlashAttention", "FlashInfer"):
        paged, vanilla = f"{lib} paged", f"{lib} vanilla"
        for reading, label in ((False, "model"), (True, "tile_s per iteration")):
            p = next(v for k, v in attn.items() if k[0].startswith(paged) and k[1] == reading)
            v = next(v for k, v in attn.items() if k[0].startswith(vanilla) and k[1] == reading)
            print(f"{lib} paged / vanilla, {label}: attention {p / v:.3f}x, TTFT {(ttft + p - v) / ttft:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
