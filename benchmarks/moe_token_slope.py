"""The fused-MoE fit's rise from 8k to 16k tokens against the measured table's, per fit block, GPU and expert shape.

    python benchmarks/moe_token_slope.py [--only ENGINE/DTYPE,...] [--tile-cap N [--cap-above R]] [--shape-out]

Each (GPU, expert shape, moe_tp, moe_ep, routing) the corpus measured at both 8,192 and 16,384 tokens: the slope of
the measured latency (us a 1k tokens) beside the in-sample fit's (validate/moe_fit.insample_and_loo, the shipped form)
and the leave-one-GPU-out fit's, and the fit's ratio to the table at each end. Compute-bound grouped GEMMs scale
linearly in routed rows, so a slope ratio under 1 says the fitted form saturates (session 66 L).
`--tile-cap N` (a sensitivity, not the shipped model): the M tile an expert's rows pad to above R (`--cap-above`,
default N) rows is N, and the fits are refitted (FlashInfer's Fp8BlockScaleLauncher tiles 8-128: at the clamp
computeSelectedTileN offers {64, 128} to its autotuner); `--tile-cap 1 --cap-above 128`: no padding above 128 rows.
MAPE % is printed over all rows / rows over 128 an expert / 4,096 tokens and more.
`--shape-out` adds leave-one-shape-out (moe_fit.leave_one_shape_out; slow) for one-GPU blocks.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whatif.roofline.kernel_models import moe as km  # noqa: E402
from whatif.validate import moe_fit as mf  # noqa: E402
from whatif.validate.corpus import load_family  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "reference" / "aiconfigurator"
LOW, HIGH = 8192, 16384   # tokens: the largest power-of-two pair every fitted table measured
GROUP = ["gpu", "hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size", "moe_ep_size", "distribution"]


def slopes(out, cols=("insample_s", "loo_s")):
    """One row per measured (GPU, shape, split, routing) at both LOW and HIGH tokens: us a 1k tokens and ratios."""
    import pandas as pd
    lines = []
    for key, grp in out[out["num_tokens"].isin([LOW, HIGH])].groupby(GROUP):
        t = grp.groupby("num_tokens")[["latency_s", *cols]].median()
        if len(t) < 2:
            continue
        rise = (t.loc[HIGH] - t.loc[LOW]) * 1e6 / ((HIGH - LOW) / 1000)
        line = dict(zip(GROUP, key), measured_us_per_1k=rise["latency_s"])
        for c in cols:
            line[f"{c}_slope_ratio"] = rise[c] / rise["latency_s"]
            line[f"{c}_at_{LOW}"] = t.loc[LOW, c] / t.loc[LOW, "latency_s"]
            line[f"{c}_at_{HIGH}"] = t.loc[HIGH, c] / t.loc[HIGH, "latency_s"]
        lines.append(line)
    return pd.DataFrame(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--only", default=None, metavar="ENGINE/DTYPE,...")
    ap.add_argument("--tile-cap", type=int, default=0, help="sensitivity: pad rows above N an expert to N-row tiles")
    ap.add_argument("--cap-above", type=int, default=0, help="with --tile-cap: above R rows an expert (default N)")
    ap.add_argument("--shape-out", action="store_true", help="add leave-one-shape-out (slow)")
    args = ap.parse_args(argv)
    keys = [tuple(k.split("/")) for k in args.only.split(",")] if args.only else list(mf.FITS)
    bad = [k for k in keys if k not in mf.FITS]
    if bad:
        print(f"--only: {'/'.join(bad[0])!r} is not a fit; valid: {', '.join('/'.join(k) for k in mf.FITS)}",
              file=sys.stderr)
        return 2
    if args.tile_cap:
        shipped = km.tile_m
        above = args.cap_above or args.tile_cap
        km.tile_m = lambda r: args.tile_cap if r > above else shipped(r)
    import pandas as pd
    pd.set_option("display.width", 200)
    frame = load_family("moe", args.corpus)
    for key in keys:
        rows = mf.fit_rows(frame, *key)
        if rows.empty:
            continue
        three = mf.block_gpus_with_mid_m(rows, *key)
        out = mf.insample_and_loo(rows, three)
        cols = ["insample_s", "loo_s"]
        if args.shape_out:
            out["shape_s"] = mf.leave_one_shape_out(rows, bool(three))
            cols.append("shape_s")
        err = {c: (out[c] / out["latency_s"] - 1).abs() * 100 for c in cols if out[c].notna().any()}
        bands = (out["rows_per_expert"] > km.TILE_M_CAP, out["num_tokens"] >= 4096)
        print(f"== {'/'.join(key)}: MAPE % (all / > 128 rows an expert / >= 4k tokens) " + ", ".join(
            f"{c} {e.mean():.2f} / {e[bands[0]].mean():.2f} / {e[bands[1]].mean():.2f}" for c, e in err.items()))
        s = slopes(out, cols)
        if not s.empty:
            print(s.groupby("gpu")[[c for c in s.columns if c.endswith(("ratio", f"at_{LOW}", f"at_{HIGH}"))]]
                  .median().round(2).assign(n=s.groupby("gpu").size()).to_string() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
