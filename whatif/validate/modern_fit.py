"""Fit the fitted-roofline op families (roofline/kernel_models/fitted_roofline.py) to the modern kernel
tables (../shared/reference/aiconfigurator/modern/), score them leave-one-GPU-out, write the fit table.

Rows come from validate/modern_rows.py: per row its GPU, engine, family, ideal (compute s, memory s) per
kernel part, fixed-cost items, SM count and the measured seconds. One parameter set per family x engine,
pooled over the GPUs that measured it (a GPU enters through its datasheet only), fitted by least squares
on log(predicted / measured) (collective_fit's Levenberg-Marquardt; efficiencies through a logistic, so
never above 1). Leave-one-GPU-out: fitted on the other GPUs, scored on the one left out.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import WhatifError
from ..roofline.kernel_models.fitted_roofline import FIT_FILE, RooflineParams, fitted_seconds, fixed_cost_in_clocks
from ..specs import precompiled
from .collective_fit import _eff, _logit, levenberg_marquardt


def parts_of(rows) -> list:
    n = sum(1 for c in rows.columns if c.startswith("c") and c[1:].isdigit())
    return [(rows[f"c{i}"].to_numpy(), rows[f"m{i}"].to_numpy(), rows[f"l{i}"].to_numpy()) for i in range(n)]


def _steps(rows, col="steps"):
    return rows[col].to_numpy() if col in rows.columns else 0.0


def predict(rows, p: RooflineParams):
    """Seconds of `rows` under `p`, plus any unfitted seconds the mechanism fixes (a `fixed_s` column)."""
    return np.asarray(fitted_seconds(parts_of(rows), rows["items"].to_numpy(), rows["sms"].to_numpy(), p,
                                     _steps(rows), _steps(rows, "clocked"),
                                     rows["clock"].to_numpy() if "clock" in rows.columns else 1.0,
                                     _stream(rows), _host(rows))) + _steps(rows, "fixed_s")


def _host(rows):
    """Each row's host factor on its floor (eager_host.host_x; modern_rows sets it for eagerly timed families)."""
    return rows["host_x"].fillna(1.0).to_numpy() if "host_x" in rows.columns else 1.0


def _stream(rows):
    """(HBM s, L2 s) columns of a stream the rows' kernels run beside (fitted_roofline.under_stream), or None."""
    if "stream_m" not in rows.columns or not (rows[["stream_m", "stream_l"]] > 0).to_numpy().any():
        return None   # (other tables' rows carry NaN there once concatenated)
    return rows["stream_m"].fillna(0.0).to_numpy(), rows["stream_l"].fillna(0.0).to_numpy()


MAX_SMOOTH = 20.0    # beyond it the ridge is the max of the two terms to within 4%
# An eagerly timed op's host launches and GPU time combine as their max (the ridge at MAX_SMOOTH): the launches are
# asynchronous, so the host issues while the GPU runs what is queued (CUDA C++ Programming Guide, "Asynchronous
# Concurrent Execution"). Fixed, not fitted: fitted per GPU it was not identified (session 58: H100 alone took 1, the
# sum, B200 alone 20), and the fit's H100 optimum at 1 was a local one (in-sample 25.4% there, 19.4% at the max).
EAGER_HOST_SMOOTH = MAX_SMOOTH
MAX_L2_SPEEDUP = 10.0   # assumed bound: no GPU of the tables reads its L2 more than 10x faster than its HBM


FIT_CLOCK_HZ = 1.83e9   # the fixed-cost-in-clocks fits' scale: v's floor and item terms are seconds at this clock


def to_params(v, with_items: bool, with_l2: bool, with_steps: bool = False, with_clocked: bool = False,
              with_host: bool = False, in_clocks: bool = False) -> RooflineParams:
    """v: log floor, logit efficiencies, logit smooth, [log item_s], [log step_s], [log step_cycles],
    [logit l2_speedup]; with_host: an eagerly timed op, host_smooth EAGER_HOST_SMOOTH (not fitted); in_clocks: the
    floor and item terms are SM clocks (fitted_roofline.FIXED_COST_IN_CLOCKS; v's are seconds at FIT_CLOCK_HZ)."""
    v = np.clip(v, -30.0, 30.0)   # keeps a wandering trial step finite (efficiencies >= 1e-13, no overflow)
    floor, item = float(np.exp(v[0])), float(np.exp(v[4])) if with_items else 0.0
    p = RooflineParams(floor, float(_eff(v[1])), float(_eff(v[2])),
                       float(1.0 + (MAX_SMOOTH - 1.0) * _eff(v[3])), item,
                       float(1.0 + (MAX_L2_SPEEDUP - 1.0) * _eff(v[-1])) if with_l2 else 1.0,
                       step_s=float(np.exp(v[4 + with_items])) if with_steps else 0.0,
                       step_cycles=float(np.exp(v[4 + with_items + with_steps])) if with_clocked else 0.0,
                       host_smooth=EAGER_HOST_SMOOTH if with_host else 0.0)
    if in_clocks:
        return replace(p, floor_s=0.0, item_s=0.0, floor_cycles=floor * FIT_CLOCK_HZ, item_cycles=item * FIT_CLOCK_HZ)
    return p


FIT_ROWS_PER_GPU = 3000   # a larger table is fitted on an evenly spaced subset of each GPU's rows (scored on all)


def fit_subset(rows):
    """Each GPU's rows, thinned to FIT_ROWS_PER_GPU evenly spaced ones (deterministic), so every GPU weighs
    alike in a pooled fit and a 100k-row table fits in seconds."""
    import pandas as pd
    parts = []
    for _, g in rows.groupby("gpu", sort=True):
        step = max(1, -(-len(g) // FIT_ROWS_PER_GPU))
        parts.append(g.iloc[::step])
    return pd.concat(parts)


def fit(rows, compute_eff=None) -> RooflineParams:
    """One parameter set for `rows` (one family x engine; one GPU or several pooled); compute_eff: fixed, not
    fitted, where the family takes it from another (COMPUTE_FROM)."""
    rows = fit_subset(rows)
    measured = rows["latency_s"].to_numpy()
    with_items = bool((rows["items"] > 0).any())
    l2 = [c for c in rows.columns if c.startswith("l") and c[1:].isdigit()]
    with_l2 = bool((rows[l2] > 0).to_numpy().any() and (rows[[c.replace("l", "m") for c in l2]] > 0).to_numpy().any())
    # a step count the same on every row is the floor's (the fit cannot tell them apart): no step_s then
    with_steps = bool(np.any(_steps(rows) > 0) and np.ptp(_steps(rows)) > 0)
    with_clocked = bool(np.any(_steps(rows, "clocked") > 0))
    # rows timed eagerly (modern_rows marks them): host launches overlap the GPU (fitted_roofline.host_overlap)
    with_host = bool("eager" in rows.columns and (rows["eager"] > 0).all())
    first = rows.iloc[0]
    in_clocks = "family" in rows.columns and fixed_cost_in_clocks(str(first["family"]), str(first.get("engine", "")))

    def params(v):
        p = to_params(v, with_items, with_l2, with_steps, with_clocked, with_host, in_clocks)
        return p if compute_eff is None else replace(p, compute_eff=float(compute_eff))

    def residuals(v):
        p = params(v)
        return np.log(np.maximum(predict(rows, p), 1e-12) / measured)
    best = None
    for floor in (2e-6, 2e-5):   # two starts: launch-bound and bandwidth-bound tables converge differently
        x0 = ([np.log(floor), _logit(0.5), _logit(0.5), _logit(1.0 / (MAX_SMOOTH - 1.0))] + [np.log(1e-7)] * with_items
              + [np.log(1e-6)] * with_steps + [np.log(100.0)] * with_clocked
              + [_logit(1.0 / (MAX_L2_SPEEDUP - 1.0))] * with_l2)
        with np.errstate(all="ignore"):
            x = levenberg_marquardt(residuals, np.array(x0), iters=100)
        r = residuals(x)
        if best is None or r @ r < best[0]:
            best = (float(r @ r), x)
    p = params(best[1])
    c = [col for col in rows.columns if col.startswith("c") and col[1:].isdigit()]
    # a form without compute time leaves compute_eff (and smooth) without effect: say 1 (unused), not a drift
    if (rows[c] > 0).to_numpy().any():
        return p
    # smooth also bends the overlap with a stream the kernels run beside (fitted_roofline.under_stream): kept
    return replace(p, compute_eff=1.0) if _stream(rows) is not None else replace(p, compute_eff=1.0, smooth=1.0)


# A family whose compute efficiency is another family's (same engine, same GPUs), fitted there and fixed here.
# TensorRT-LLM runs the DSA module's sparse MLA through one kernel for prefill and decode on an architecture (Hopper:
# FlashMLA's sparse prefill kernel for both; aiconfigurator collector/trtllm/collect_mla_module.py's SM90 note,
# mla_modules.sparse_all_topk), and H100's own fits agree (compute_eff 0.377 prefill, 0.376 decode), while B200's
# decode rows leave it unidentified (in-sample 12.2-13.0% for any value 0.4-1.0): docs/accuracy.md "Session 68 G".
COMPUTE_FROM = {("dsa_module_decode", "trtllm"): "dsa_module_prefill"}


def donor_compute_eff(rows, family: str, engine: str, gpus):
    """The compute_eff `family` takes from its COMPUTE_FROM donor fitted on the donor's current-release rows of
    `gpus` in `rows` (None where the family has no donor)."""
    donor = COMPUTE_FROM.get((family, engine))
    if donor is None:
        return None
    d = rows[(rows["family"] == donor) & (rows["engine"] == engine)]
    d = current_release(d) if len(d) else d
    d = d[d["gpu"].isin(list(gpus))]
    if d.empty:
        raise WhatifError(f"{family} ({engine}) takes its compute_eff from {donor}, whose rows for "
                          f"{', '.join(sorted(gpus))} are not loaded: add its table")
    return fit(d).compute_eff


def fit_family(rows, family: str, engine: str, subset) -> RooflineParams:
    """fit(subset) of one family x engine of `rows`, its compute_eff its COMPUTE_FROM donor's on the subset's GPUs."""
    return fit(subset, donor_compute_eff(rows, family, engine, sorted(set(subset["gpu"]))))


def current_release(group):
    """The rows of a family x engine measured with its current collector release: the one most GPUs ran (ties:
    the later name). A GPU measured only with another (A100: SGLang 0.5.10, TensorRT-LLM 1.0.0, where the rest
    ran 0.5.14, 1.3.0rc20) ran another kernel build, so it is neither pooled nor left out against the others."""
    by_release = group.groupby("version")["gpu"].nunique()
    newest = max(by_release.index, key=lambda v: (by_release[v], str(v)))
    return group[group["version"] == newest]


def insample_and_loo(rows):
    """rows with `insample_s` (each GPU fitted on itself), `pooled_s` (fitted on every GPU of the current
    release: the shipped fit) and `loo_s` (fitted on the other GPUs of the current release; NaN where only one
    GPU measured it, or for a GPU of another release) per family x engine."""
    out = rows.copy()
    for col in ("insample_s", "pooled_s", "loo_s"):
        out[col] = np.nan
    for (family, engine), group in rows.groupby(["family", "engine"]):
        current = current_release(group)
        gpus = sorted(set(current["gpu"]))
        out.loc[group.index, "pooled_s"] = predict(group, fit_family(rows, family, engine, current))
        for gpu in sorted(set(group["gpu"])):
            mine = group[group["gpu"] == gpu]
            out.loc[mine.index, "insample_s"] = predict(mine, fit_family(rows, family, engine, mine))
            if len(gpus) > 1 and gpu in gpus:
                others = current[current["gpu"] != gpu]
                out.loc[mine.index, "loo_s"] = predict(mine, fit_family(rows, family, engine, others))
    return out


def pair_table(rows):
    """Fit on one calibration GPU, score on another: per family x engine, every ordered pair of the GPUs that
    measured it (fit_on == score_on: in-sample). The tables' only check of a fit made on one GPU alone."""
    import pandas as pd
    out = []
    for (family, engine), group in rows.groupby(["family", "engine"]):
        by_gpu = dict(tuple(group.groupby("gpu", sort=True)))
        for fit_on, mine in by_gpu.items():
            p = fit_family(rows, family, engine, mine)
            for score_on, theirs in by_gpu.items():
                ape = np.abs(predict(theirs, p) / theirs["latency_s"].to_numpy() - 1.0) * 100.0
                out.append((family, engine, fit_on, score_on, len(theirs), ape.mean(), np.median(ape), ape.max()))
    return pd.DataFrame(out, columns=["family", "engine", "fit_on", "score_on", "rows", "mape", "med", "worst"]
                        ).set_index(["family", "engine", "fit_on", "score_on"]).round(1)


def loo_cells(rows):
    """(family, engine, GPU, its rows, its own fit, its leave-one-GPU-out fit) per cell of each family x engine's
    current release that more than one GPU measured."""
    for (family, engine), group in rows.groupby(["family", "engine"]):
        current = current_release(group)
        gpus = sorted(set(current["gpu"]))
        for gpu in gpus if len(gpus) > 1 else []:
            mine, others = current[current["gpu"] == gpu], current[current["gpu"] != gpu]
            yield family, engine, gpu, mine, fit_family(rows, family, engine, mine), \
                fit_family(rows, family, engine, others)


def mape(rows, p: RooflineParams) -> float:
    """Mean absolute % error of `p` on `rows`."""
    return float(np.mean(np.abs(predict(rows, p) / rows["latency_s"].to_numpy() - 1.0)) * 100.0)


def floor_us(p: RooflineParams, clock: float) -> float:
    """A fit's floor in microseconds on a GPU of `clock` Hz (its seconds plus its SM clocks)."""
    return (p.floor_s + p.floor_cycles / clock) * 1e6


def floor_share_table(rows, min_loo=0.0):
    """How much of each (family, engine, GPU) cell's leave-one-GPU-out error is its fixed cost: the cell scored with
    the leave-one-out fit, with that fit's floor_s swapped for the left-out GPU's own (in-sample) floor_s, and with
    floor_s and step_s both swapped, beside in-sample; with both fits' floors (us). A diagnosis, never a prediction
    (the swap reads the left-out GPU's rows). min_loo: only cells whose LOO MAPE is at least this (%)."""
    import pandas as pd
    out = []
    for family, engine, gpu, mine, own, loo in loo_cells(rows):
        floor = dict(floor_s=own.floor_s, floor_cycles=own.floor_cycles)
        fits = (loo, replace(loo, **floor), replace(loo, **floor, step_s=own.step_s), own)
        clock = float(mine["clock"].iloc[0])
        out.append((family, engine, gpu, len(mine), *[mape(mine, p) for p in fits], floor_us(own, clock),
                    floor_us(loo, clock)))
    cols = ["family", "engine", "gpu", "rows", "loo", "loo_own_floor", "loo_own_floor_step", "in", "floor_us_own",
            "floor_us_loo"]
    table = pd.DataFrame(out, columns=cols).set_index(["family", "engine", "gpu"]).round(1)
    return table[table["loo"] >= min_loo]


def error_table(out, by=("family", "engine", "gpu")):
    """MAPE / median / worst absolute % error per group, for in-sample, pooled and leave-one-GPU-out."""
    import pandas as pd

    from .accuracy import ape_table
    errors = ape_table(out, {"loo_s": "loo", "insample_s": "in", "pooled_s": "pooled"}, [out[k] for k in by],
                       {"mape": "mean", "med": "median", "worst": "max"})
    return pd.concat([out.groupby(list(by)).size().rename("rows"), errors], axis=1).round(1)


# ---- the fitted table (whatif/roofline/data/modern_fit.yaml) ----
HEADER = """# Fitted-roofline parameters of the 2025-26 op families (whatif/roofline/kernel_models/fitted_roofline.py),
# one block per family x engine, pooled over the GPUs that measured it, generated by
# `python benchmarks/accuracy_modern.py --write`: fitted by whatif/validate/modern_fit.py (log least squares,
# efficiencies in (0, 1]) on NVIDIA aiconfigurator's modern kernel tables (Apache-2.0; collector releases in
# fitted_on.versions, from each table folder's VERSIONS). Units: floor_s seconds; compute_eff / memory_eff
# fractions of the datasheet ceilings each family names; smooth the exponent p combining compute and memory;
# item_s seconds per fixed-cost work item on one SM; floor_cycles / item_cycles the same two in SM clocks (the
# families of fitted_roofline.FIXED_COST_IN_CLOCKS, whose floor_s / item_s are 0); host_smooth (eagerly timed
# ops only) the exponent p combining the host's launches (floor_s + step_s a launch) with the GPU's time
# (fitted_roofline.host_overlap); the floor_s of a family whose floor is host launches (eager_host.
# EAGER_HOST_FAMILIES) is at the engine's reference host (eager_launch_s), scaled by eager_host.host_x.
# by_arch: a measured architecture's own fit (its GPU's rows alone), used for GPUs of that architecture; the
# pooled block for any other. Errors: benchmarks/accuracy_modern.py.
"""


def _block(p: RooflineParams, group, **on) -> dict:
    serial = {k: float(f"{v:.4g}") for k, v in (("step_s", p.step_s), ("step_cycles", p.step_cycles),
                                                  ("host_smooth", p.host_smooth), ("floor_cycles", p.floor_cycles),
                                                  ("item_cycles", p.item_cycles)) if v}
    return {"floor_s": float(f"{p.floor_s:.4g}"), "compute_eff": float(f"{p.compute_eff:.4g}"),
            "memory_eff": float(f"{p.memory_eff:.4g}"), "smooth": float(f"{p.smooth:.4g}"),
            "item_s": float(f"{p.item_s:.4g}"), **serial, "l2_speedup": float(f"{p.l2_speedup:.4g}"),
            "provenance": "fitted",
            "fitted_on": {**on, "rows": int(len(group)), "table": str(group["table"].iloc[0]),
                          "versions": ", ".join(sorted(set(group["version"].astype(str)))),
                          "kernel_sources": sorted(set(group["kernel_source"].astype(str)))}}


def fit_document(rows) -> dict:
    """Per family x engine: the fit pooled over its GPUs, and each measured architecture's own (`by_arch`)."""
    from .corpus import corpus_gpu
    families: dict = {}
    for (family, engine), group in rows.groupby(["family", "engine"]):
        current = current_release(group)
        block = _block(fit_family(rows, family, engine, current), current, gpus=sorted(set(current["gpu"])))
        block["by_arch"] = {corpus_gpu(gpu).arch: _block(fit_family(rows, family, engine, mine), mine, gpu=gpu)
                            for gpu, mine in group.groupby("gpu")}
        families.setdefault(family, {})[engine] = block
    return {"provenance": "fitted", "families": families}


def write_fit(rows, path=None) -> dict:
    """Refit the families in `rows` (every engine of them) and write the table; families not in `rows` keep
    their written fits, so `accuracy_modern.py --table T --write` refits only T's families."""
    import yaml

    from ..specs.profiles import read_yaml
    doc = fit_document(rows)
    target = path or FIT_FILE
    if target.is_file():
        kept = {f: b for f, b in read_yaml(target).get("families", {}).items() if f not in doc["families"]}
        doc["families"] = {**kept, **doc["families"]}
    target.write_text(HEADER + yaml.safe_dump(doc, sort_keys=True, width=110))
    precompiled.refresh(target)
    return doc
