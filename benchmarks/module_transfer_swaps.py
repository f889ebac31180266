"""Which fitted parameter carries a module fit's leave-one-GPU-out miss, and what the GEMM table says about it.

    python benchmarks/module_transfer_swaps.py [--family dsa_module_decode] [--engine sglang] [--table T ...]

(1) Per leave-one-GPU-out cell of one family x engine: MAPE with the donor's fit, with its own (in-sample) fit, and
with the donor's fit with ONE parameter swapped for the left-out GPU's own (a diagnosis like accuracy_modern.py
--floor-share, never a prediction: the swap reads the left-out GPU's rows). (2) From the GEMM table (gemm.parquet, a
different table from the module's), each engine's small-M (m <= 8) GEMMs per GPU and format: the weight bytes streamed
a second over the datasheet HBM bandwidth, by weight size, and the incremental rate between two sizes (the extra bytes
over the extra time), which a per-kernel fixed latency does not enter. docs/accuracy.md "Session 74 C".
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whatif.validate import modern_fit as mf  # noqa: E402
from whatif.validate import modern_rows as mr  # noqa: E402

SWAPPED = ("floor_s", "compute_eff", "memory_eff", "smooth", "item_s", "l2_speedup", "step_s")
WEIGHT_BYTES = {"bfloat16": 2.0, "fp8": 1.0}   # gemm.parquet's dense formats (nvfp4 has no H100 rows)
SIZE_BINS_MB = (0.0, 2.0, 8.0, 32.0, 128.0, 1e4)
SMALL_M = 8


def swap_table(rows, family: str, engine: str):
    """MAPE % per cell of `family` x `engine`: donor fit (loo), own fit, and the donor's with each SWAPPED parameter
    the left-out GPU's own."""
    import pandas as pd
    out = []
    used = {family, mf.COMPUTE_FROM.get((family, engine))}   # the family and the one it takes compute_eff from
    for fam, _eng, gpu, mine, own, loo in mf.loo_cells(rows[(rows.engine == engine) & rows.family.isin(used)]):
        if fam != family:
            continue
        cell = {"gpu": gpu, "rows": len(mine), "loo": mf.mape(mine, loo), "own": mf.mape(mine, own)}
        cell.update({f"swap_{k}": mf.mape(mine, replace(loo, **{k: getattr(own, k)})) for k in SWAPPED})
        out.append(cell)
    return pd.DataFrame(out).set_index("gpu").round(1) if out else None


def weight_stream(gemm, bandwidth: dict, max_m: int = SMALL_M):
    """Per (framework, format, GPU): median fraction of the datasheet bandwidth (`bandwidth`: gpu -> B/s) the small-M
    GEMMs stream their weights at, by weight size (MB bins), plus `incremental`: (median bytes, median seconds) of the
    8-32 MB and 32-128 MB bins differenced, over the bandwidth."""
    import numpy as np
    import pandas as pd
    g = gemm[(gemm["m"] <= max_m) & gemm["gpu"].isin(list(bandwidth)) & gemm["gemm_dtype"].isin(list(WEIGHT_BYTES))]
    g = g.assign(wbytes=g["n"] * g["k"] * g["gemm_dtype"].map(WEIGHT_BYTES), t=g["latency_ms"] * 1e-3)
    g = g.assign(eff=g["wbytes"] / g["t"] / g["gpu"].map(bandwidth),
                 size=pd.cut(g["wbytes"] / 1e6, list(SIZE_BINS_MB)))
    keys = ["framework", "gemm_dtype", "gpu"]
    table = g.pivot_table(index=keys, columns="size", values="eff", aggfunc="median", observed=True)
    lo, hi = pd.Interval(8.0, 32.0), pd.Interval(32.0, 128.0)
    med = g.groupby(keys + ["size"], observed=True)[["wbytes", "t"]].median()
    inc = {}
    for k, _ in table.iterrows():
        try:
            a, b = med.loc[(*k, lo)], med.loc[(*k, hi)]
        except KeyError:
            inc[k] = np.nan
            continue
        inc[k] = (b["wbytes"] - a["wbytes"]) / (b["t"] - a["t"]) / bandwidth[k[2]]
    table.columns = [f"{c.left:g}-{c.right:g}MB" for c in table.columns]
    table["incremental"] = pd.Series(inc)
    return table.round(3)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", default="dsa_module_decode")
    ap.add_argument("--engine", default="sglang")
    ap.add_argument("--table", action="append", help=f"module tables to load; valid: {', '.join(mr.TABLES)}")
    args = ap.parse_args(argv)
    tables = args.table or ["sparse_attention__dsa_context_module_perf", "sparse_attention__dsa_generation_module_perf"]
    bad = [t for t in tables if t not in mr.TABLES]
    if bad:
        print(f"module_transfer_swaps: --table {bad[0]} is not valid; valid: {', '.join(mr.TABLES)}", file=sys.stderr)
        return 2
    import pandas as pd
    pd.set_option("display.width", 200)
    rows = mr.all_rows(mr.DEFAULT_ROOT, tables)
    table = swap_table(rows, args.family, args.engine)
    if table is None:
        cells = sorted({f"{f}/{e}" for f, e in zip(rows["family"], rows["engine"])})
        print(f"module_transfer_swaps: no leave-one-GPU-out cell for --family {args.family} --engine {args.engine} in "
              f"these tables; valid: {', '.join(cells)}", file=sys.stderr)
        return 2
    print(f"== {args.family} / {args.engine}: MAPE %, donor fit | own | donor fit with one parameter the GPU's own ==")
    print(table.to_string())
    from whatif.validate.corpus import corpus_gpu
    bw = {g: corpus_gpu(g).hbm_bandwidth.value for g in ("b200_sxm", "h100_sxm")}   # datasheet, B/s
    path = mr.DEFAULT_ROOT.parent / "gemm.parquet"
    if not path.is_file():
        print(f"\n(no GEMM table at {path}: the weight-stream table needs ../shared/reference/aiconfigurator)")
        return 0
    gemm = pd.read_parquet(path)
    print(f"\n== gemm.parquet, m <= {SMALL_M}: weight bytes a second / datasheet HBM bandwidth, by weight size ==")
    print(weight_stream(gemm, bw).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
