"""A sensitivity, not a mapping: TensorRT-LLM DeepSeek rows rerun with the MLA decode module priced at the B200
TensorRT-LLM module table's own NVFP4 level for the attention heads one GPU holds (docs/accuracy.md, Session 72 A).

    python benchmarks/adp_module_sensitivity.py ROW_ID [ROW_ID ...]

Why: under attention DP a rank runs all 128 heads (attention TP 1), so NVIDIA's FP4-V2 checkpoint's NVFP4 o_proj is
an n 7,168 x k 16,384 GEMM. whatif prices TensorRT-LLM's NVFP4 GEMMs by vLLM's CuTe-DSL fit (params.STAND_INS: the
TensorRT-LLM table times the autotuner's fallback tactic, serving tunes), and its MLA module fit reads that table's
NVFP4 modules x0.77 at 128 heads against x0.93 at 16 (`table_over_fit`). Which one the served 1.2 release ran is not
established; this prints what each row would read if it ran the table's. The factor is the median table / whatif
ratio of the table's fp8-KV NVFP4 rows at the row's heads (batch 8-64, context 1k-8k), applied to the module fit of
rows whose o_proj is NVFP4; nothing here feeds a prediction.
"""
from __future__ import annotations

import statistics
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# ../shared beside the checkout, as whatif.validate.modern_rows finds it (so the table and the model configs agree)
TABLE = ROOT.parent / "shared/reference/aiconfigurator/modern/b200_sxm/trtllm/mla__mla_generation_module_perf.parquet"


@cache
def table_over_fit(heads: int, table: Path = TABLE) -> float:
    """Median (measured / whatif) of the table's NVFP4, fp8-KV decode modules at `heads` (batch 8-64, context
    1,024-8,192 tokens); 1.0 where the table has no such rows."""
    import pandas as pd

    from whatif.roofline.kernel_models.mla_modules import mla_module_seconds
    from whatif.validate.corpus import corpus_gpu
    from whatif.validate.modern_rows import model_dims
    t = pd.read_parquet(table)
    t = t[(t.kv_cache_dtype == "fp8") & (t.gemm_type == "nvfp4") & (t.num_heads == heads)
          & t.batch_size.between(8, 64) & t.step.between(1024, 8192)]
    if t.empty:
        return 1.0
    gpu, dims = corpus_gpu("b200_sxm"), model_dims("deepseek-ai/DeepSeek-V3")
    return statistics.median(r.latency * 1e-3 / mla_module_seconds("decode", int(r.batch_size), 1, int(r.step), heads,
                                                                     dims, gpu, "trtllm", "nvfp4", "fp8")
                             for r in t.itertuples())


def scaled_module_seconds(seconds, heads: int, out_quantization: str, factor=table_over_fit):
    """The module fit's seconds as the sensitivity takes them: x factor(heads) where o_proj is NVFP4, else as is."""
    if seconds is None or out_quantization != "nvfp4":
        return seconds
    return seconds * factor(heads)


def patch_module_fit() -> None:
    """Route roofline.module_fits.module_seconds through scaled_module_seconds (this process only)."""
    import whatif.roofline.module_fits as mf
    original = mf.module_seconds

    def patched(setup, batch):
        heads = setup.model.num_heads // setup.parallel.attention_tp
        return scaled_module_seconds(original(setup, batch), heads,
                                     setup.precision.module("attention_out").quantization or "")
    mf.module_seconds = patched


def main(argv=None) -> int:
    ids = sys.argv[1:] if argv is None else argv
    if not ids:
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    import serving_reference as sr
    rows = {r["id"]: r for r in sr.load()}
    unknown = [i for i in ids if i not in rows]
    if unknown:
        print(f"unknown row id(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    print("factor at 16 / 32 / 64 / 128 heads: " + " / ".join(f"x{table_over_fit(h):.3f}" for h in (16, 32, 64, 128)))
    base = {i: sr.run_row(rows[i], sr.SIM_ROUNDS) for i in ids}
    patch_module_fit()
    print(f"{'id':<60} {'TPOT meas':>9} {'whatif':>7} {'table':>7}   {'TTFT meas':>9} {'whatif':>8} {'table':>8}")
    for i in ids:
        r, b, s = rows[i], base[i], sr.run_row(rows[i], sr.SIM_ROUNDS)
        print(f"{i[:60]:<60} {float(r['silicon_tpot_ms']):9.2f} {b.tpot_ms:7.2f} {s.tpot_ms:7.2f}   "
              f"{float(r['silicon_ttft_ms']):9.1f} {b.ttft_ms:8.1f} {s.ttft_ms:8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
