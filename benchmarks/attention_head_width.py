"""Attention kernel fits scored by head width: in-sample and leave-one-GPU-out MAPE of one engine's prefill or
decode attention, split into heads of 64-256 and of 512 (Gemma 4's global layers), on the corpus rows the fits
use (validate/kernel_fit.load_tables), every k-th shape up to --rows per GPU x KV dtype.

    PYTHONPATH=$PWD python3 benchmarks/attention_head_width.py prefill_attention vllm --rows 4000 [--dtype bf16]

LOO: fitted on the other GPUs' rows pooled, applied to this GPU's datasheet ceilings (kernel_fit.evaluate's).
Each fit is refitted here. `--shipped`: instead, the shipped fits (time_op, the engine's default efficiency) on the
engine's rows of heads 256 and 512 without a window, every k-th of <= 400, whichever kernel timed them (H100's
head_dim 512 rows are FA4 / Triton, which load_tables leaves out), median ratio predicted / measured.
"""
from __future__ import annotations

import argparse
import time

from whatif.validate import kernel_fit as kf

CORPUS = "/work/shared/reference/aiconfigurator"
WIDTHS = ((64, 256), (512, 512))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("op", choices=("prefill_attention", "decode_attention"))
    ap.add_argument("engine", choices=("vllm", "sglang", "trtllm"))
    ap.add_argument("--rows", type=int, default=4000, help="rows per GPU x KV dtype (every k-th shape)")
    ap.add_argument("--dtype", default=None, help="KV dtype (bf16 | fp8); default: both")
    ap.add_argument("--corpus", default=CORPUS)
    ap.add_argument("--shipped", action="store_true", help="score the shipped fits instead of refitting")
    args = ap.parse_args(argv)
    t0 = time.time()
    if args.shipped:
        return shipped(args)
    rows = kf.load_tables(args.corpus, ops=(args.op,))[args.op]
    rows = rows[rows.framework == args.engine]
    for dtype in sorted(rows.dtype.unique()):
        if args.dtype and dtype != args.dtype:
            continue
        groups = dict(tuple(rows[rows.dtype == dtype].groupby("gpu")))
        by_gpu = {g: kf.subsample(kf.hbm_rows(r), args.rows) for g, r in groups.items()}
        data = {g: kf.design(r, args.op) for g, r in by_gpu.items()}
        for gpu, r in by_gpu.items():
            errors = {"in": kf.ape(args.op, data[gpu], kf.fit(args.op, data[gpu], dtype,
                                                              cap=kf.floor_cap(groups[gpu]))[0])}
            others = [g for g in by_gpu if g != gpu]
            if others:
                pooled = kf.design(kf._concat([by_gpu[g] for g in others]), args.op)
                cap = kf.floor_cap(kf._concat([groups[g] for g in others]))
                errors["LOO"] = kf.ape(args.op, data[gpu], kf.fit(args.op, pooled, dtype, cap=cap)[0])
            hd = r.head_dim.to_numpy()
            for name, e in errors.items():
                parts = "  ".join(f"hd {lo}-{hi}: {e[(hd >= lo) & (hd <= hi)].mean():5.1f}% "
                                  f"(n {((hd >= lo) & (hd <= hi)).sum()})"
                                  for lo, hi in WIDTHS if ((hd >= lo) & (hd <= hi)).any())
                print(f"{args.op} {args.engine} {dtype} {gpu:9s} {name:3s} all {e.mean():5.1f}%  {parts}", flush=True)
    print(f"({time.time() - t0:.0f} s)")


def shipped(args) -> None:
    import numpy as np
    import pandas as pd

    from whatif.roofline.efficiency import default_efficiency
    from whatif.roofline.timing import time_op
    from whatif.validate.corpus import corpus_gpu
    from whatif.validate.corpus_rows import corpus_op
    d = pd.read_parquet(f"{args.corpus}/attention.parquet")
    phase = "prefill" if args.op == "prefill_attention" else "decode"
    d = d[(d.framework == args.engine) & (d.phase == phase) & d.head_dim.isin([256, 512])
          & (d.window_size.fillna(0) == 0) & d.gpu.isin(["b200_sxm", "h100_sxm"])]
    d = d.assign(latency_s=d.latency_ms / 1e3, dtype=d.kv_cache_dtype.map(kf.CORPUS_DTYPES))
    for (gpu, dtype, hd), g in d.groupby(["gpu", "dtype", "head_dim"]):
        if args.dtype and dtype != args.dtype:
            continue
        g = kf.hbm_rows(g) if phase == "decode" else g
        g = g[g.kernel_source == g.kernel_source.value_counts().index[0]]   # the width's own kernel
        g = g.iloc[:: max(1, len(g) // 400)]
        gp = corpus_gpu(gpu)
        eff = default_efficiency(gp, args.engine)
        r = np.array([time_op(corpus_op(args.op, x), gp, eff).time_s for x in g.itertuples(index=False)])
        r = r / g.latency_s.to_numpy()
        print(f"{args.op} {args.engine} {dtype} {gpu:9s} hd {hd}: n {len(g)}  MAPE {np.mean(abs(r - 1)) * 100:5.1f}%  "
              f"median ratio x{np.median(r):.2f}  ({g.kernel_source.iloc[0]})")


if __name__ == "__main__":
    main()
