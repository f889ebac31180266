"""vLLM's weight-only (Marlin) MoE fit against the measured MXFP4 Marlin rows it is not fitted on (session 65).

    python benchmarks/marlin_mxfp4_check.py [--corpus PATH]

Each GPU's weight-only fit (validate/moe_fit.FITS vllm/w4a16: its INT4 rows, Kimi-K2.5's shape) prices that GPU's
MXFP4 Marlin rows of aiconfigurator's moe table (kernel_source *marlin*, moe_dtype w4a16_mxfp4: L40S gpt-oss 2880 x
2880, H100 / B200 3584 x 3072) at the rows' own shape and at the shape vLLM lays MXFP4 out in for Marlin (hidden to
256, per-GPU intermediate to 128: expert_fits.MARLIN_MXFP4_ALIGNMENT). Prints MAPE and median predicted / measured,
all rows and <= 128 tokens, then the padded median ratio by moe_tp x token band (EP 1). Nothing here feeds a
prediction.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whatif.roofline.expert_fits import MARLIN_MXFP4_ALIGNMENT  # noqa: E402
from whatif.validate import moe_fit as mf  # noqa: E402
from whatif.validate.corpus import load_family  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "reference" / "aiconfigurator"
BANDS = [0, 2, 8, 32, 128, 1024, 1 << 20]


def padded(rows):
    """The rows at the shape Marlin runs MXFP4 experts in (MARLIN_MXFP4_ALIGNMENT)."""
    hidden, inter = MARLIN_MXFP4_ALIGNMENT
    out = rows.copy()
    out["inter_size"] = [math.ceil(i / t / inter) * inter * t for i, t in zip(out.inter_size, out.moe_tp_size)]
    out["hidden_size"] = [math.ceil(h / hidden) * hidden for h in out.hidden_size]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="folder with moe.parquet or moe.csv.gz")
    args = ap.parse_args(argv)
    import pandas as pd
    pd.set_option("display.width", 200)
    frame = load_family("moe", args.corpus)
    int4 = mf.fit_rows(frame, "vllm", "w4a16")
    fits = {g: mf.fit_regimes(int4[int4.gpu == g]) for g in sorted(set(int4.gpu))}
    mx = frame[(frame.framework == "vllm") & frame.kernel_source.str.contains("marlin")
               & (frame.moe_dtype == "w4a16_mxfp4") & frame.gpu.isin(list(fits))]
    for (gpu, source), rows in mx.groupby(["gpu", "kernel_source"]):
        for name, shaped in (("as the op", rows), ("padded", padded(rows))):
            r = mf.moe_rows(shaped, "w4a16_mxfp4", "vllm", (gpu,))
            r["ratio"] = mf.predict(r, fits[gpu]) / r["latency_s"]
            small = r[r["num_tokens"] <= 128]
            print(f"{gpu} {source} ({name}): {len(r)} rows, MAPE {100 * (r.ratio - 1).abs().mean():.1f}% "
                  f"x{r.ratio.median():.3f}; <= 128 tokens {100 * (small.ratio - 1).abs().mean():.1f}% "
                  f"x{small.ratio.median():.3f}")
        one = r[r["moe_ep_size"] == 1]
        print(one.groupby(["moe_tp_size", pd.cut(one["num_tokens"], BANDS)], observed=True)["ratio"].median()
              .unstack().round(2).to_string() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
