"""Accuracy of the fused-MoE model (EXPERIMENTAL) against NVIDIA aiconfigurator's measured MoE layers.

    python benchmarks/accuracy_moe.py [--corpus PATH] [--write] [--by-shape ENGINE/DTYPE] [--only ENGINE/DTYPE,...]
                                      [--mid-m] [--same-kernel] [--expert-cost]

Each engine's own fused-MoE rows (the most-measured kernel per GPU) of each fitted dtype (validate/moe_fit.FITS
says which corpus dtype stands for each and why): leave-one-GPU-out only where the engine has rows of it on two
GPUs or more. A GPU's
prediction is its datasheet peak and HBM bandwidth times dimensionless efficiencies plus a floor, so parameters
transfer: in-sample (each GPU fitted on itself) and leave-one-GPU-out (fitted on the other three), MAPE /
median / p90 % by GPU x token count (<= 128 / > 128). `--write` writes whatif/roofline/data/moe_fit.yaml.
`--by-shape trtllm_gen_mxfp8/fp4` (session 62): that fit's in-sample median ratio (predicted / measured) by expert
shape x per-GPU slice (moe_tp) x token count, EP 1: whether one pooled parameter set reads every shape alike.
`--only` (session 63): those fits alone, and `--write` then replaces their blocks only (the others byte for byte).
`--mid-m`: per block, two regimes against three (moe_fit.fit_regimes' mid-M split at 128 rows an expert), MAPE %
in-sample and out of sample, and whether moe_fit.MID_M_MARGIN is met (MID_M_BLOCKS lists the blocks that met it).
`--same-kernel` (session 64): leave-one-GPU-out against donors of the held-out GPU's own kernel family
(validate/moe_kernel_loo: B200's bf16 block runs TRTLLM-Gen, the other GPUs' Triton; a GPU whose kernel no other GPU
runs is scored on its rows of the donors' kernel where the corpus has them, else has no leave-one-out figure).
`--expert-cost` (session 70): per block, its small-M rows fitted without and with a cost per touched expert, MAPE %
in-sample and out of sample (moe_fit.expert_cost_scores; EXPERT_COST_KERNELS lists the kernels fitted with it).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whatif.validate import moe_fit as mf  # noqa: E402
from whatif.validate.accuracy import ape_table  # noqa: E402
from whatif.validate.corpus import load_family  # noqa: E402
from whatif.validate.moe_kernel_loo import same_kernel_loo  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "reference" / "aiconfigurator"


def table(out):
    regime = np.where(out["num_tokens"] <= 128, "<=128", ">128")
    keys = [out["gpu"]] + ([out["scored_kernel"]] if "scored_kernel" in out else []) + [regime]
    return ape_table(out, {"insample_s": "insample", "loo_s": "loo"}, keys,
                     {"mape": "mean", "median": "median", "p90": lambda s: s.quantile(0.9)}, label="{stat}_{name}")


TOKEN_BANDS = [0, 2, 8, 32, 128, 1024, 1 << 20]   # 1-2 / 3-8 / 9-32 / 33-128 / 129-1k / > 1k tokens


def by_shape(out):
    """In-sample median ratio by (hidden, experts, moe_tp) x token band over the EP-1 rows (`out`: insample_and_loo)."""
    import pandas as pd
    one = out[out["moe_ep_size"] == 1]
    band = pd.cut(one["num_tokens"], TOKEN_BANDS)
    return (one["insample_s"] / one["latency_s"]).groupby(
        [one["hidden_size"], one["num_experts"], one["moe_tp_size"], band], observed=True).median().unstack().round(2)


def mid_m_table(rows_by_fit: dict):
    """moe_fit.mid_m_scores of every fit's blocks, one line a block (MAPE %, two regimes -> three)."""
    import pandas as pd
    lines = []
    for (engine, dtype), rows in rows_by_fit.items():
        for score in (mf.mid_m_scores(rows) if not rows.empty else []):
            lines.append({"block": f"{engine}/{mf.corpus_gpu(score.pop('gpu')).arch}/{dtype}", **score})
    return pd.DataFrame(lines).round(2)


def expert_cost_table(rows_by_fit: dict):
    """moe_fit.expert_cost_scores of every fit's blocks, one line a block (small-M MAPE %, without -> with)."""
    import pandas as pd
    lines = []
    for (engine, dtype), rows in rows_by_fit.items():
        for score in (mf.expert_cost_scores(rows) if not rows.empty else []):
            lines.append({"block": f"{engine}/{mf.corpus_gpu(score.pop('gpu')).arch}/{dtype}", **score})
    return pd.DataFrame(lines).round(2)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="folder with moe.parquet or moe.csv.gz")
    ap.add_argument("--write", action="store_true", help="write whatif/roofline/data/moe_fit.yaml")
    ap.add_argument("--by-shape", default=None, metavar="ENGINE/DTYPE",
                    help="one fit's in-sample median ratio by shape x moe_tp x token count (e.g. trtllm_gen_mxfp8/fp4)")
    ap.add_argument("--only", default=None, metavar="ENGINE/DTYPE,...", help="these fits only (e.g. sglang/fp8)")
    ap.add_argument("--mid-m", action="store_true", help="two regimes against three, per block (MAPE %%)")
    ap.add_argument("--same-kernel", action="store_true",
                    help="leave-one-GPU-out against donors of the held-out GPU's own kernel family")
    ap.add_argument("--expert-cost", action="store_true",
                    help="small-M rows fitted without and with a cost per touched expert, per block (MAPE %%)")
    args = ap.parse_args(argv)
    shape_fit = tuple(args.by_shape.split("/")) if args.by_shape else None
    only = [tuple(k.split("/")) for k in args.only.split(",")] if args.only else list(mf.FITS)
    for flag, keys in (("--by-shape", [shape_fit] if shape_fit else []), ("--only", only)):
        bad = [k for k in keys if k not in mf.FITS]
        if bad:
            print(f"{flag}: {'/'.join(bad[0])!r} is not a fit; valid: {', '.join('/'.join(k) for k in mf.FITS)}",
                  file=sys.stderr)
            return 2
    import pandas as pd
    pd.set_option("display.width", 200)
    frame = load_family("moe", args.corpus)
    if args.by_shape:
        rows = mf.fit_rows(frame, *shape_fit)
        print(by_shape(mf.insample_and_loo(rows, mf.block_gpus_with_mid_m(rows, *shape_fit))).to_string())
        return 0
    rows = {key: mf.fit_rows(frame, *key) for key in only}
    if args.mid_m:
        print(mid_m_table(rows).to_string(index=False))
        return 0
    if args.expert_cost:
        print(expert_cost_table(rows).to_string(index=False))
        return 0
    for (engine, dtype), r in rows.items():
        if r.empty:
            continue
        out = (same_kernel_loo(frame, engine, dtype) if args.same_kernel   # (each block's own form)
               else mf.insample_and_loo(r, mf.block_gpus_with_mid_m(r, engine, dtype)))
        kinds = ", ".join(f"{g} {d}" for g, d in out.groupby("gpu")["moe_dtype"].first().items())
        print(f"== fused MoE, {engine} {dtype} ({kinds}): % error by GPU x {'scored kernel x ' * args.same_kernel}"
              f"token count (in-sample | leave-one-GPU-out{' against the same kernel' * args.same_kernel}) ==")
        print(table(out).to_string() + "\n")
    if args.write:
        mf.write_fit({key: r for key, r in rows.items() if not r.empty}, merge=args.only is not None)
        print("\nwrote whatif/roofline/data/moe_fit.yaml")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
