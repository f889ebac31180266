"""Does a GPU's fixed cost a call carry from one op family to another? The cross-family test of a per-architecture
floor (session 65 F, issue 38).

Session 64 H (docs/accuracy.md) found that 20 of the 48 leave-one-GPU-out cells over 15% fall under 15% with the
left-out GPU's own fitted floor_s. A per-architecture floor measured on some families and applied to another is a
family fit only if a GPU's floor is a property of the GPU (its launch latency, clock, driver) rather than of the
family's kernels. Tested two ways, both leave-one-FAMILY-out (the family scored never enters its own factor):

- fitted: per cell, the GPU's factor F = median over the OTHER families' cells on that GPU of (own fit's floor_s /
  leave-one-GPU-out fit's floor_s); the cell scored with its LOO fit's floor_s x F, beside plain LOO and beside
  its own floor (session 64 H's oracle, which reads the left-out rows);
- two single-source variants: the factor from one probe family (`PROBE`, the 1-token-row quantizer, same engine),
  and a floor in SM clocks (the LOO floor x the donor GPUs' harmonic-mean clock / the GPU's datasheet clock);
- measured: each cell's smallest kernels (the minimum and 2nd-percentile row, us), and per GPU pair the ratio a
  family's smallest rows run at, predicted by the median ratio of the other families.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .modern_fit import current_release, floor_us, loo_cells, mape

PROBE = "quantize_scale"   # every engine measured it on B200, H100 and L40S at 1-token rows: the smallest kernels
MIN_FLOOR_S = 0.5e-6   # a fitted floor under 0.5 us is the fit's degenerate corner (DeepEP LL: 1e-12 s), no cost


def cell_floors(rows):
    """Per cell: its rows, own and leave-one-GPU-out fits, and log(own floor / LOO floor) (NaN where either floor is
    degenerate)."""
    import pandas as pd
    cells = pd.DataFrame([(f, e, g, mine, own, loo) for f, e, g, mine, own, loo in loo_cells(rows)],
                         columns=["family", "engine", "gpu", "mine", "own", "loo"])
    clock = cells["mine"].map(lambda m: float(m["clock"].iloc[0]))   # a floor in SM clocks (floor_cycles) in seconds
    own_s = pd.Series([floor_us(p, k) * 1e-6 for p, k in zip(cells["own"], clock)], index=cells.index)
    loo_s = pd.Series([floor_us(p, k) * 1e-6 for p, k in zip(cells["loo"], clock)], index=cells.index)
    ok = (own_s > MIN_FLOOR_S) & (loo_s > MIN_FLOOR_S)
    cells["log_ratio"] = np.where(ok, np.log(own_s.where(ok, 1.0) / loo_s.where(ok, 1.0)), np.nan)
    return cells


def gpu_factor(cells, family: str, gpu: str, engine: str | None = None, only: str | None = None) -> float:
    """The GPU's floor factor from OTHER families' cells on it (median own / LOO floor; 1 where none has one);
    engine: only that engine's families; only: only that family (the probe)."""
    other = cells[(cells["gpu"] == gpu) & (cells["family"] != family) & cells["log_ratio"].notna()]
    if engine is not None:
        other = other[other["engine"] == engine]
    if only is not None:
        other = other[other["family"] == only]
    return float(np.exp(other["log_ratio"].median())) if len(other) else 1.0


def clock_factor(cells, c) -> float:
    """A floor in SM clocks: the LOO floor (seconds, fitted on the donor GPUs alike) x the donors' harmonic-mean
    boost clock / this GPU's."""
    donors = cells[(cells["family"] == c.family) & (cells["engine"] == c.engine) & (cells["gpu"] != c.gpu)]
    clocks = np.array([d["clock"].iloc[0] for d in donors["mine"]])
    return float(1.0 / np.mean(1.0 / clocks) / c.mine["clock"].iloc[0])


def floor_transfer_table(rows):
    """Per cell, MAPE %: LOO fit; its floor x the GPU's factor from the other families (all engines; the cell's
    engine only; the probe family, same engine), x the clock ratio; its floor the GPU's own (oracle); in-sample.
    With the floors (us), the own / LOO floor ratio and the factors."""
    import pandas as pd
    cells = cell_floors(rows)
    out = []
    for c in cells.itertuples():
        factors = (gpu_factor(cells, c.family, c.gpu), gpu_factor(cells, c.family, c.gpu, c.engine),
                   gpu_factor(cells, c.family, c.gpu, c.engine, PROBE) if c.family != PROBE else np.nan,
                   clock_factor(cells, c))
        scaled = [mape(c.mine, replace(c.loo, floor_s=c.loo.floor_s * f, floor_cycles=c.loo.floor_cycles * f))
                  if np.isfinite(f) else np.nan for f in factors]
        clock = float(c.mine["clock"].iloc[0])
        out.append((c.family, c.engine, c.gpu, len(c.mine), mape(c.mine, c.loo), *scaled,
                    mape(c.mine, replace(c.loo, floor_s=c.own.floor_s, floor_cycles=c.own.floor_cycles)),
                    mape(c.mine, c.own), floor_us(c.own, clock), floor_us(c.loo, clock), float(np.exp(c.log_ratio)),
                    *factors))
    cols = ["family", "engine", "gpu", "rows", "loo", *[f"loo_x_f_{k}" for k in FACTORS], "loo_own_floor", "in",
            "floor_us_own", "floor_us_loo", "own_over_loo", *[f"f_{k}" for k in FACTORS]]
    return pd.DataFrame(out, columns=cols).set_index(["family", "engine", "gpu"])


FACTORS = ("all", "engine", "probe", "clock")


def transfer_summary(table, threshold=15.0):
    """Per GPU and overall: cells, mean cell MAPE and cells over `threshold` % for each column of the table; and
    how often the factor moves the floor ratio the right way (log-error of the own / LOO ratio, with F and at 1)."""
    import pandas as pd
    cols = ["loo", *[f"loo_x_f_{k}" for k in FACTORS], "loo_own_floor", "in"]
    out = []
    for gpu, t in [*table.groupby(level="gpu"), ("all", table)]:
        r = np.log(t["own_over_loo"]).dropna()
        err_f = (r - np.log(t.loc[r.index, "f_all"])).abs()
        out.append((gpu, len(t), *[t[c].mean() for c in cols], *[int((t[c] > threshold).sum()) for c in cols],
                    float(np.exp(r.abs().median())), float(np.exp(err_f.median())), int((err_f < r.abs()).sum()),
                    len(r)))
    return pd.DataFrame(out, columns=["gpu", "cells", *[f"mean_{c}" for c in cols], *[f"over_{c}" for c in cols],
                                      "ratio_err_at_1_x", "ratio_err_f_x", "f_closer", "with_floor"]).set_index("gpu")


def smallest_rows(rows):
    """Per cell of the current release: rows, the smallest and the 2nd-percentile time (us)."""
    import pandas as pd
    out = []
    for (family, engine), group in rows.groupby(["family", "engine"]):
        for gpu, mine in current_release(group).groupby("gpu"):
            us = mine["latency_s"].to_numpy() * 1e6
            out.append((family, engine, gpu, len(mine), us.min(), np.percentile(us, 2)))
    return pd.DataFrame(out, columns=["family", "engine", "gpu", "rows", "min_us", "p2_us"])


def smallest_ratio_lofo(small, a: str, b: str, col="p2_us"):
    """Per family measured on GPUs a and b: its smallest rows' ratio a / b, and that ratio predicted by the other
    families' median (leave-one-family-out). Returns (table, summary dict)."""
    import pandas as pd
    p = small.pivot_table(index=["family", "engine"], columns="gpu", values=col)
    r = np.log(p[a] / p[b]).dropna()
    pred = pd.Series([r.drop(i).median() for i in r.index], index=r.index)
    t = pd.DataFrame({"ratio": np.exp(r), "predicted": np.exp(pred)})
    err_f, err_1 = (np.exp(r - pred) - 1).abs() * 100, (np.exp(r) - 1).abs() * 100
    return t, {"families": len(r), "median_x": float(np.exp(r.median())), "geo_sd_x": float(np.exp(r.std())),
               "err_pred_pct": float(err_f.mean()), "err_same_seconds_pct": float(err_1.mean()),
               "pred_better": int((err_f < err_1).sum())}
