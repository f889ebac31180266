"""vAttention's prefill claims (J-paged_kv-mean_ttft, FlashInfer 1.45x; J-paged_kv-mean_ttft-2, FlashAttention
3.92x): how much slower a paged prefill KERNEL can make the claims' TTFT, bounded by the paged kernel measured in
/work/shared. A diagnosis: nothing here feeds a prediction (docs/accuracy.md, "Session 74 B").

    PYTHONPATH=. python3 benchmarks/paged_prefill_ceiling.py

What the table measures (read at source):
- aiconfigurator's A100 vLLM 0.14.0 prefill rows (`vllm_flash_attn`) run vLLM's FlashAttention backend over a paged
  cache (ai-dynamo/aiconfigurator collector/vllm/collect_attn.py: block_size 64, randomize_blocks=True, impl.forward =
  KV write + flash_attn_varlen_func with a block table). On sm80 that is vllm-project/flash-attention's FA2, whose
  mha_varlen_fwd calls `run_mha_fwd(params, stream, paged_KV)` (csrc/flash_attn/flash_api.cpp @04325b67): a block
  table forces the split-KV kernel, as FA 2.5.6's flash_attn_with_kvcache does for FA_Paged (session 64 B), at the
  same tile (src/flash_fwd_launch_template.h @039af716 run_mha_fwd_splitkv_dispatch: kBlockM 64, kBlockN 128 at head
  dim 128, 4 warps). So these rows are FA_Paged's kernel on the paper's GPU, with a finer page (64 tokens, not 256).
- The A100 SGLang 0.5.10 rows (`flash_attention`, sgl_kernel's FlashAttention over a 64-token page table) are a second
  paged kernel on the same shapes; the L40S SGLang 0.5.14 `flashinfer` rows are FlashInfer's ragged (contiguous)
  prefill (an extend without prefix takes `use_ragged`, flashinfer_backend.py) beside vLLM's FA2 paged rows.
- No table holds a contiguous FlashAttention 2.5.6 or any FlashInfer 0.0.3 kernel, nor any row past 16,384 tokens.
Ceilings for the contiguous side: FlashAttention-2's own "50-73% of the theoretical maximum FLOPs/s on A100"
(arXiv 2307.08691, abstract), and the dense bf16 peak itself (312 TFLOP/s, datasheet).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ATTENTION_TABLE = Path("/work/shared/reference/aiconfigurator/attention.parquet")
FA2_PAPER_MAX_FRACTION = 0.73   # FlashAttention-2's abstract: "50-73% of the theoretical maximum FLOPs/s on A100"
HEAD_DIM = 128


def ttft_ratio(ttft_s: float, attention_s: float, attention_factor: float) -> float:
    """Paged TTFT / contiguous TTFT when the contiguous side's attention is `attention_factor` times faster and
    everything else is the same; `attention_s` is the paged side's attention inside `ttft_s`."""
    if not 0.0 <= attention_s <= ttft_s or attention_factor <= 0.0:
        raise ValueError("attention_s must lie in [0, ttft_s] and attention_factor be positive")
    return ttft_s / (ttft_s - attention_s + attention_s / attention_factor)


def attention_factor_needed(ttft_s: float, attention_s: float, ratio: float) -> float:
    """The attention speedup factor that gives a TTFT ratio of `ratio` (inverse of ttft_ratio); inf when even a
    free contiguous attention cannot reach it."""
    if not 0.0 < attention_s <= ttft_s or ratio < 1.0:
        raise ValueError("attention_s must lie in (0, ttft_s] and ratio be >= 1")
    left = ttft_s / ratio - (ttft_s - attention_s)   # the contiguous side's attention seconds
    return attention_s / left if left > 0.0 else math.inf


def causal_flops(tokens: float, heads: int, head_dim: int = HEAD_DIM) -> float:
    """QK^T and PV multiply-adds of one causal prefill over `tokens` (the diagonal included), all query heads."""
    return 4.0 * heads * head_dim * tokens * (tokens + 1) / 2.0


def peak_fraction(tokens: float, heads: int, seconds: float, peak_flops: float) -> float:
    return causal_flops(tokens, heads) / seconds / peak_flops


def claim_attention(claim) -> tuple[float, float, float, int, int]:
    """whatif's side of a paged_kv prefill claim: (TTFT s, the prompt's attention s inside it, the attention's
    fraction of the bf16 peak, query heads and KV heads a GPU)."""
    from whatif.claims.claim import evaluate
    from whatif.roofline.kernel_models import prefill_attention as pa
    from whatif.roofline.kernel_models.params import ceilings, params_for
    from whatif.specs.hardware import load_component
    from whatif.specs.models import load_model

    setup = claim.setup
    gpu = load_component(setup["hardware"])
    gpu = getattr(gpu, "gpu", gpu)   # a system (the DGX) names its GPU
    model, tp = load_model(setup["model"]), setup["parallel"]["tp"]
    heads, kv_heads = model.num_heads // tp, max(1, model.num_kv_heads // tp)
    prompt = setup["sim"]["traffic"]["prompt"]
    fit = params_for("prefill_attention", gpu.arch, "bf16", "vllm")
    layer = pa.prefill_attention_time(1, prompt, heads, kv_heads, HEAD_DIM, "bf16", "bf16", gpu, fit.params)
    fraction = peak_fraction(prompt, heads, layer, ceilings(gpu).peak_flops("bf16"))
    return evaluate(claim).baseline, model.num_layers * layer, fraction, heads, kv_heads


def prefill_claims() -> list:
    from whatif.claims.claim import all_claims
    return [c for c in all_claims() if c.technique == "paged_kv" and c.metric == "mean_ttft"]


def _rows(table, gpu: str, kernel: str, heads: int, kv_heads: int):
    r = table[(table.gpu == gpu) & (table.phase == "prefill") & (table.kernel_source == kernel)
              & (table.batch_size == 1) & (table.num_heads == heads) & (table.num_key_value_heads == kv_heads)
              & (table.head_dim == HEAD_DIM) & (table.attn_dtype == "bfloat16") & (table.kv_cache_dtype == "bfloat16")]
    r = r[r.window_size.isna() | (r.window_size == 0)]
    return r.set_index("isl").latency_ms.sort_index()


def main() -> int:
    import pandas as pd

    from whatif.claims.claim import evaluate
    from whatif.roofline.kernel_models.params import ceilings, params_for
    from whatif.specs.hardware import load_component

    if not ATTENTION_TABLE.exists():
        print(f"{ATTENTION_TABLE} is missing: nothing to read")
        return 1
    table = pd.read_parquet(ATTENTION_TABLE)
    gpu = load_component("a100-sxm-80gb")
    peak = ceilings(gpu).peak_flops("bf16")
    print(f"A100 bf16 dense peak {peak / 1e12:.0f} TFLOP/s; whatif's prefill fit: "
          f"{params_for('prefill_attention', gpu.arch, 'bf16', 'vllm').provenance}")
    for claim in prefill_claims():
        setup = claim.setup
        ttft, attention, modeled, heads, kv_heads = claim_attention(claim)
        prompt = setup["sim"]["traffic"]["prompt"]
        print(f"\n## {claim.paper[:60]}... claimed {claim.claimed}x; whatif {evaluate(claim).gain:.4f}x")
        print(f"{setup['model']} TP{setup['parallel']['tp']}: {heads} query / {kv_heads} KV heads a GPU, {prompt:,} "
              f"prompt tokens; whatif TTFT {ttft:.2f} s, of which attention {attention:.2f} s "
              f"({attention / ttft:.0%}), priced at {modeled:.1%} of peak")
        fa2 = _rows(table, "a100_sxm", "vllm_flash_attn", heads, kv_heads)
        other = _rows(table, "a100_sxm", "flash_attention", heads, kv_heads)
        print("| tokens | FA2 split-KV paged (vLLM 0.14), ms | % of peak | SGLang 0.5.10 paged, ms | % of peak |")
        for isl in [i for i in fa2.index if i >= 2048]:
            o = other.get(isl, float("nan"))
            print(f"| {isl} | {fa2[isl]:.3f} | {peak_fraction(isl, heads, fa2[isl] / 1e3, peak):.1%} | {o:.3f} | "
                  f"{peak_fraction(isl, heads, o / 1e3, peak):.1%} |")
        top = fa2.index.max()
        measured = peak_fraction(top, heads, fa2[top] / 1e3, peak)
        best_other = fa2[top] / other[top]
        l40s = _rows(table, "l40s", "vllm_flash_attn_fa2", heads, kv_heads)
        ragged = _rows(table, "l40s", "flashinfer", heads, kv_heads)
        l40s_ratio = l40s[top] / ragged[top] if top in l40s.index and top in ragged.index else float("nan")
        lo = claim.claimed / 1.3   # the symmetric band's low end
        print(f"paged kernel at {top} tokens: {measured:.1%} of peak (whatif at {prompt:,}: {modeled:.1%})")
        for label, factor in (
                (f"SGLang's paged kernel on the same A100 shape at {top} ({best_other:.3f}x faster)", best_other),
                (f"L40S FlashInfer ragged vs FA2 paged at {top} ({l40s_ratio:.3f}x)", l40s_ratio),
                (f"contiguous at FlashAttention-2's best {FA2_PAPER_MAX_FRACTION:.0%} of peak",
                 FA2_PAPER_MAX_FRACTION / modeled),
                ("contiguous at 100% of peak (free of every overhead)", 1.0 / modeled)):
            print(f"- {label}: TTFT ratio {ttft_ratio(ttft, attention, factor):.3f}x")
        for target, name in ((lo, "band's low end"), (claim.claimed, "claimed figure")):
            need = attention_factor_needed(ttft, attention, target)
            implied = modeled / need if math.isfinite(need) else 0.0
            print(f"- {name} {target:.2f}x needs the attention {need:.2f}x faster on the contiguous side: a paged "
                  f"kernel at {implied:.1%} of peak against whatif's {modeled:.1%}, or a contiguous kernel at "
                  f"{modeled * need:.0%} of peak")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
