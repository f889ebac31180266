"""Accuracy of the fitted-roofline kernel models of the 2025-26 op families against NVIDIA aiconfigurator's
modern kernel tables (Gated DeltaNet, DSA and whole MLA modules, wide-EP MoE, DeepEP, encoder attention,
MLA batched GEMMs, quantize kernels).

    python benchmarks/accuracy_modern.py [--root DIR] [--table NAME ...] [--write] [--by-gpu]

A GPU's prediction is its datasheet ceilings times one parameter set per family x engine, so parameters
transfer between GPUs: leave-one-GPU-out (fitted on the other GPUs that measured the family, scored on the
one left out), in-sample (each GPU fitted on itself) and pooled (fitted on all: the shipped fit). Absolute
% error: MAPE, median, worst. `--write` writes whatif/roofline/data/modern_fit.yaml (and the precompiled
bundle).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whatif.validate import modern_fit as mf  # noqa: E402
from whatif.validate import modern_rows as mr  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(mr.DEFAULT_ROOT), help="the modern/ folder of kernel tables")
    ap.add_argument("--table", action="append", help=f"only these tables; valid: {', '.join(mr.TABLES)}")
    ap.add_argument("--write", action="store_true", help="write whatif/roofline/data/modern_fit.yaml")
    ap.add_argument("--by-gpu", action="store_true", help="also the table per family x engine x GPU")
    args = ap.parse_args(argv)
    bad = [t for t in args.table or [] if t not in mr.TABLES]
    if bad:
        print(f"accuracy_modern: --table {bad[0]} is not valid; valid: {', '.join(mr.TABLES)}", file=sys.stderr)
        return 2
    import pandas as pd
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
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
