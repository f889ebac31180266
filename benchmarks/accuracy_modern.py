"""Accuracy of the fitted-roofline kernel models of the 2025-26 op families against NVIDIA aiconfigurator's
modern kernel tables (Gated DeltaNet, DSA and whole MLA modules, wide-EP MoE, DeepEP, encoder attention,
MLA batched GEMMs, quantize kernels).

    python benchmarks/accuracy_modern.py [--root DIR] [--table NAME ...] [--write] [--by-gpu] [--vs-kernels]

A GPU's prediction is its datasheet ceilings times one parameter set per family x engine, so parameters
transfer between GPUs: leave-one-GPU-out (fitted on the other GPUs that measured the family, scored on the
one left out), in-sample (each GPU fitted on itself) and pooled (fitted on all: the shipped fit). Absolute
% error: MAPE, median, worst. `--write` writes whatif/roofline/data/modern_fit.yaml (and the precompiled
bundle). `--vs-kernels`: on the MLA generation-module rows (DeepSeek-V3, up to 8 GPUs of TP), the module
fit's leave-one-GPU-out error beside the forward pass's kernels summed (whatif estimate's decode ops of the
module, roofline/module_fits.kernels_only), on the same rows: why the forward pass prices the module by the fit.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whatif.validate import modern_fit as mf  # noqa: E402
from whatif.validate import modern_rows as mr  # noqa: E402


MLA_DECODE = "mla__mla_generation_module_perf"
QUANT = {"bfloat16": None, "fp8_block": "fp8-block", "nvfp4": "nvfp4"}


def kernels_summed(frame):
    """Seconds of each MLA generation-module row as the forward pass's kernels summed (NaN: not expressible)."""
    import numpy as np

    from whatif.api import estimate
    from whatif.roofline.module_fits import MLA_MODULE_ROLES, kernels_only
    from whatif.roofline.ops import graph_role
    from whatif.validate.corpus import GPU_PROFILES
    out = []
    with kernels_only():
        for r in frame.itertuples():
            tp = 128 // int(r.num_heads)   # DeepSeek-V3's 128 heads over TP
            if tp > 8:
                out.append(np.nan)   # more GPUs than one bare GPU profile's node
                continue
            kw = dict(model=r.model, hardware=GPU_PROFILES[r.gpu], kernel_engine=r.engine, tp=tp, gpus=tp,
                      batch=int(r.batch_size), prompt=max(1, int(r.step)), output=2, with_max_batch=False,
                      kv_dtype="fp8" if r.kv_cache_dtype == "fp8" else "bf16", quantization=QUANT[r.gemm_type])
            ops = [t for t in estimate(**kw).decode.op_times if graph_role(t.op) in MLA_MODULE_ROLES]
            layers = max(t.op.count for t in ops)   # one layer's module (the dense and MoE layers run the same)
            out.append(sum(t.time_s for t in ops if t.op.count == layers))
    return np.array(out)


def vs_kernels(root) -> str:
    import numpy as np
    frame = mr.read_table(MLA_DECODE, root)
    frame = frame[frame["latency"] > 0].reset_index(drop=True)
    out = mf.insample_and_loo(mr.all_rows(root, [MLA_DECODE]))
    out["kernels_s"] = kernels_summed(frame)
    out = out[np.isfinite(out["kernels_s"]) & np.isfinite(out["loo_s"])]
    from whatif.validate.accuracy import ape_table
    table = ape_table(out, {"kernels_s": "kernels", "loo_s": "fit_loo", "pooled_s": "fit_pooled"},
                      [out["gpu"], out["engine"]], {"mape": "mean", "med": "median"})
    out = out.assign(rows="all rows")
    total = ape_table(out, {"kernels_s": "kernels", "loo_s": "fit_loo", "pooled_s": "fit_pooled"},
                      [out["rows"]], {"mape": "mean", "med": "median"})
    return f"{table.to_string()}\n{total.to_string(header=False)}   ({len(out)} rows)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(mr.DEFAULT_ROOT), help="the modern/ folder of kernel tables")
    ap.add_argument("--table", action="append", help=f"only these tables; valid: {', '.join(mr.TABLES)}")
    ap.add_argument("--write", action="store_true", help="write whatif/roofline/data/modern_fit.yaml")
    ap.add_argument("--by-gpu", action="store_true", help="also the table per family x engine x GPU")
    ap.add_argument("--vs-kernels", action="store_true",
                    help="MLA decode module: the fit beside the forward pass's kernels summed, same rows")
    args = ap.parse_args(argv)
    bad = [t for t in args.table or [] if t not in mr.TABLES]
    if bad:
        print(f"accuracy_modern: --table {bad[0]} is not valid; valid: {', '.join(mr.TABLES)}", file=sys.stderr)
        return 2
    import pandas as pd
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    if args.vs_kernels:
        print("== MLA generation module: % error, forward-pass kernels summed | module fit (LOGO, pooled) ==")
        print(vs_kernels(args.root))
        return 0
    rows = mr.all_rows(args.root, args.table)
    out = mf.insample_and_loo(rows)
    print("== fitted-roofline families: absolute % error (leave-one-GPU-out | in-sample | pooled) ==")
    print(mf.error_table(out, by=("family", "engine")).to_string())
    if args.by_gpu:
        print("\n== by GPU ==")
        print(mf.error_table(out).to_string())
    for what, why in mr.SKIPPED.items():
        print(f"not fitted: {what}: {why}")
    if args.write:
        mf.write_fit(rows)
        print("\nwrote whatif/roofline/data/modern_fit.yaml")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
