"""Accuracy of the collective model against NVIDIA aiconfigurator's measured collectives.

    python benchmarks/accuracy_collectives.py [--corpus PATH] [--write]

Design (see whatif/validate/collective_fit.py): a link's prediction is its datasheet bandwidth and
latency times dimensionless protocol parameters, so parameters fitted on other link generations
transfer. Reported, by GPU x op x message size (< 1 MB / >= 1 MB), as MAPE / median / p90 of
|predicted - measured| / measured, for nccl-tests and each engine's CUDA-graph all-reduce:
  - in-sample: each link generation fitted on its own GPU's rows;
  - leave-one-GPU-out (LOO): the GPU's generation predicted from parameters fitted on the other GPUs
    (NVLink from the other NVLink generations; PCIe Gen4, the only PCIe, from all NVLink ones);
  - current: today's whatif.roofline.timing.time_op on a comm Op with the default efficiency
    (no reduce-scatter there: n/a).
Target (issue 17): all-reduce <= 8% MAPE leave-one-GPU-out. `--write` refits on the whole corpus and
writes whatif/roofline/data/collective_fit.yaml.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whatif.validate import collective_fit as cf  # noqa: E402
from whatif.validate.corpus import corpus_gpu, load_family  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "reference" / "aiconfigurator"
CURRENT_NAMES = {"all_reduce": "all_reduce", "all_gather": "all_gather", "alltoall": "all_to_all"}


def current_predictions(rows):
    """Today's model: time_op on comm ops over the GPU profile's interconnect (host link if none)."""
    from whatif.roofline.comm import comm_op
    from whatif.roofline.efficiency import load_efficiency
    from whatif.roofline.timing import time_op
    out = np.full(len(rows), np.nan)
    cache = {}
    for i, (gpu, op, nbytes, n) in enumerate(zip(rows["gpu"], rows["op"], rows["bytes"], rows["num_gpus"])):
        if op not in CURRENT_NAMES:
            continue
        if gpu not in cache:
            g = corpus_gpu(gpu)
            cache[gpu] = (g, load_efficiency("default", g), g.interconnect or g.host_link)
        g, eff, link = cache[gpu]
        out[i] = time_op(comm_op("c", CURRENT_NAMES[op], float(nbytes), int(n), 1), g, eff, link).time_s
    return out


def ape_table(frame, column: str):
    """MAPE / median / p90 (%) by dataset x GPU x op x size bucket."""
    d = frame.assign(ape=(frame[column] / frame["measured_s"] - 1).abs() * 100,
                     size=np.where(frame["bytes"] < 2 ** 20, "<1MB", ">=1MB"))
    g = d.groupby(["dataset", "gpu", "op", "size"])["ape"]
    return g.agg(mape="mean", median="median", p90=lambda s: s.quantile(0.9), rows="size")


def summary(frame, column: str):
    """MAPE (%) by dataset x GPU over all sizes and over each bucket."""
    d = frame.assign(ape=(frame[column] / frame["measured_s"] - 1).abs() * 100,
                     size=np.where(frame["bytes"] < 2 ** 20, "<1MB", ">=1MB"))
    return d.groupby(["dataset", "op", "gpu", "size"])["ape"].mean().unstack("size").round(1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="folder with comm.parquet or comm.csv.gz")
    ap.add_argument("--write", action="store_true", help="write whatif/roofline/data/collective_fit.yaml")
    args = ap.parse_args(argv)
    frame = load_family("comm", args.corpus)
    insample, loo = cf.insample_and_loo(frame)
    both = insample.rename(columns={"predicted_s": "insample_s"})
    assert np.array_equal(loo["measured_s"].to_numpy(), both["measured_s"].to_numpy())
    both["loo_s"] = loo["predicted_s"].to_numpy()
    both["current_s"] = current_predictions(both)
    import pandas as pd
    pd.set_option("display.width", 200)
    for title, column in (("in-sample", "insample_s"), ("leave-one-GPU-out", "loo_s"), ("current model", "current_s")):
        print(f"\n== {title}: MAPE % by op x GPU x message size ==")
        print(summary(both.dropna(subset=[column]), column).unstack("gpu").to_string())
    print("\n== detail: MAPE / median / p90 % (in-sample | LOO) ==")
    loo = ape_table(both, "loo_s").drop(columns="rows").add_suffix("_loo")
    print(ape_table(both, "insample_s").join(loo).round(1).to_string())
    if args.write:
        cf.write_fit(frame)
        print(f"\nwrote {cf.FIT_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
