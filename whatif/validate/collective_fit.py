"""Fit the collective model (roofline/kernel_models/collectives.py) to the corpus's comm table, and
load the fitted parameters back.

Design for transfer: a link's prediction is ITS datasheet bandwidth (B/s per direction) and latency
times parameters that are dimensionless (efficiencies in (0, 1], step latencies in units of the
link's latency) or fixed costs in seconds. So parameters fitted on other link generations apply to a
generation never measured: leave-one-GPU-out (each corpus GPU is its own link generation) fits one
pooled parameter set on the other generations and predicts the one left out.

Fitted per link generation (NVLink 3 / 4 / 5, PCIe Gen4): NCCL's three protocols (+ NVLS where the
generation's NVSwitch reduces in the switch: a datasheet fact, not fitted) on the nccl-tests rows;
then each engine's custom all-reduce on its CUDA-graph rows (the engine's size threshold chosen from a
grid of powers of two). Least squares on log(predicted / measured) with a numpy Levenberg-Marquardt;
no scipy. Reading: a row's bytes are `message_size` (ELEMENTS) x its dtype's size. The corpus's
`bytes` column is message_size x 2 for every row, which is right for half / bfloat16 but twice the
real size for the nccl-tests int8 rows (read as bytes they imply bus bandwidths above the datasheet
link, e.g. 619 GB/s on a 450 GB/s H100 link). Left out: the engines' eager rows (they time the host
launch path, 20-90 us floors, not the kernel).
Measured times are never looked up at prediction time.
Long because the fitter, its leave-one-out protocol and the YAML writer share the row reading and
the parameter vectors; split them only together.
"""
from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np

from ..errors import WhatifError
from ..specs import precompiled
from ..roofline.kernel_models.collectives import (PROTOCOLS, EngineParams, NcclParams, ProtocolParams,
                                                  collective_time, nccl_time)

FIT_FILE = Path(__file__).resolve().parents[1] / "roofline" / "data" / "collective_fit.yaml"
ENGINE_BACKENDS = {"vllm": "vllm_graph", "sglang": "sglang_graph", "trtllm": None}
# Corpus GPU -> link generation (a link profile name; whether it is an NVSwitch fabric is the profile's
# `nvswitch`). The A100/H100/B200 rows come from 8-GPU HGX boards; the L40S server talks over PCIe.
CORPUS_LINKS = {"a100_sxm": "nvlink-3", "h100_sxm": "nvlink-4", "b200_sxm": "nvlink-5", "l40s": "pcie-gen4-x16"}
# NVLink SHARP (in-switch reduction) arrived with third-generation NVSwitch (NVLink 4, Hopper HGX).
NVLS_GENERATIONS = ("nvlink-4", "nvlink-5")
NVLS_SOURCE = "datasheet: NVLink SHARP in third-generation NVSwitch (NVIDIA Hopper architecture whitepaper)"
DTYPE_BYTES = {"half": 2, "bfloat16": 2, "float16": 2, "int8": 1, "float": 4, "float32": 4}
CUSTOM_GRID = tuple(2.0 ** k for k in range(19, 27))   # 512 KiB .. 64 MiB
MIB, KIB = 2 ** 20, 2 ** 10
# Engine data: vLLM's all-reduce dispatch, from its source (vllm/distributed/device_communicators:
# custom_all_reduce.py max_size 8 MiB, capped per SM architecture and GPU count by all_reduce_utils.py
# CUSTOM_ALL_REDUCE_MAX_SIZES when symmetric memory is available; csrc/custom_all_reduce.cuh one-shot
# always on 2 GPUs, below 512 KiB on <= 4, 256 KiB on <= 8; SYMM_MEM_ALL_REDUCE_MAX_SIZES for the
# multicast kernel on Hopper / Blackwell). SGLang's and TensorRT-LLM's thresholds are fitted instead.
VLLM_SOURCE = "engine source: vLLM all_reduce_utils.py / custom_all_reduce.py / custom_all_reduce.cuh"
_VLLM_ONESHOT = {2: 2.0 ** 40, 3: 512 * KIB, 5: 256 * KIB, 8: 256 * KIB}
ENGINE_THRESHOLDS = {"vllm": {
    "nvlink-3": {"custom_max": {2: 8 * MIB, 8: 8 * MIB}, "oneshot_max": _VLLM_ONESHOT},
    "nvlink-4": {"custom_max": {2: 8 * MIB, 4: 8 * MIB, 6: 512 * KIB, 8: 256 * KIB}, "oneshot_max": _VLLM_ONESHOT,
                 "symm_max": {2: 64 * MIB, 4: 32 * MIB, 6: 64 * MIB, 8: 64 * MIB}},
    "nvlink-5": {"custom_max": {2: 2 * MIB, 4: 2 * MIB, 6: MIB, 8: MIB}, "oneshot_max": _VLLM_ONESHOT,
                 "symm_max": {2: 8 * MIB, 4: 32 * MIB, 6: 128 * MIB, 8: 128 * MIB}},
    "pcie-gen4-x16": {"custom_max": {2: 8 * MIB, 8: 8 * MIB}, "oneshot_max": _VLLM_ONESHOT},
}}

_NCCL_INIT = {"LL": (6e-6, 0.3, 0.3), "LL128": (8e-6, 0.6, 0.6), "Simple": (12e-6, 1.5, 0.75)}


@cache
def link_figures(generation: str) -> tuple[float, float, bool]:
    """(bandwidth B/s per direction, latency s, NVSwitch fabric) of a link profile, from the hardware YAMLs."""
    from ..specs.hardware import load_component
    link = load_component(generation, "link")
    return link.bandwidth.value, link.latency.value, link.nvswitch


# ---- parameter vectors: efficiencies through a logistic (always in (0, 1)), the rest through log ----
# Protocol ceilings: LL sends 4 data bytes with every 4-byte flag (1/2 of the wire), LL128 120 of every
# 128 bytes (NCCL's protocol design); Simple and the custom kernels move raw data (1).
PROTOCOL_CEILING = {"LL": 0.5, "LL128": 120 / 128, "Simple": 1.0}


def _eff(x, cap=1.0):
    return cap / (1.0 + np.exp(-x))


def _logit(e, cap=1.0):
    e = min(max(e / cap, 1e-4), 1 - 1e-4)
    return float(np.log(e / (1 - e)))


def nccl_to_vector(p: NcclParams) -> np.ndarray:
    v = []
    for name in PROTOCOLS:
        q = p.protocols[name]
        v += [np.log(q.base_s), np.log(q.step_lat), _logit(q.bw_eff, PROTOCOL_CEILING[name])]
    return np.array(v + [np.log(p.nvls_base_s), _logit(p.nvls_bw_eff), np.log(max(p.contention, 1e-3))])


def nccl_from_vector(v, nvls: bool, provenance: str = "") -> NcclParams:
    protos = {name: ProtocolParams(float(np.exp(v[3 * i])), float(np.exp(v[3 * i + 1])),
                                   float(_eff(v[3 * i + 2], PROTOCOL_CEILING[name])))
              for i, name in enumerate(PROTOCOLS)}
    return NcclParams(protos, float(np.exp(v[9])), float(_eff(v[10])), float(np.exp(v[11])), nvls, provenance)


def initial_nccl(nvls: bool) -> NcclParams:
    protos = {k: ProtocolParams(*v) for k, v in _NCCL_INIT.items()}
    return NcclParams(protos, 12e-6, 0.6, 1.0, nvls)


def engine_to_vector(e: EngineParams) -> np.ndarray:
    return np.array([np.log(e.oneshot_base_s), _logit(e.oneshot_bw_eff), np.log(e.twoshot_base_s),
                     _logit(e.twoshot_bw_eff), _logit(e.nccl_bw_factor), np.log(e.symm_base_s),
                     _logit(e.symm_bw_eff)])


def engine_from_vector(v, name: str, thresholds: dict, provenance: str = "") -> EngineParams:
    return EngineParams(name, float(np.exp(v[0])), float(_eff(v[1])), float(np.exp(v[2])), float(_eff(v[3])),
                        thresholds["custom_max"], float(_eff(v[4])), float(np.exp(v[5])), float(_eff(v[6])),
                        thresholds.get("oneshot_max"), thresholds.get("symm_max"), 2,
                        thresholds.get("source", "fitted"), provenance)


def initial_engine(name: str) -> EngineParams:
    return EngineParams(name, 5e-6, 0.3, 8e-6, 0.5, 8 * MIB, 0.8, 8e-6, 0.5)


def levenberg_marquardt(residuals, x0: np.ndarray, iters: int = 60) -> np.ndarray:
    """Minimise |residuals(x)|^2 (forward-difference Jacobian, adaptive damping)."""
    x = np.array(x0, dtype=float)
    r = residuals(x)
    cost, lam = float(r @ r), 1e-2
    for _ in range(iters):
        jac = np.empty((r.size, x.size))
        for j in range(x.size):
            dx = np.zeros_like(x)
            dx[j] = 1e-5
            jac[:, j] = (residuals(x + dx) - r) / 1e-5
        a, g = jac.T @ jac, jac.T @ r
        improved = False
        while lam < 1e9:
            step = -np.linalg.solve(a + lam * (np.diag(np.diag(a)) + 1e-9 * np.eye(x.size)), g)
            r2 = residuals(x + step)
            c2 = float(r2 @ r2)
            if np.isfinite(c2) and c2 < cost:
                improved = cost - c2 > 1e-10 * max(cost, 1e-30)
                x, r, cost, lam = x + step, r2, c2, max(lam / 3, 1e-9)
                break
            lam *= 4
        if not improved:
            break
    return x


# ---- rows ----
def with_true_bytes(frame):
    """The rows with `bytes` = message_size (elements) x the element size of the row's dtype."""
    dtype = frame["nccl_dtype"].fillna(frame["allreduce_dtype"])
    unknown = sorted(set(dtype.dropna()) - set(DTYPE_BYTES))
    if unknown or dtype.isna().any():
        raise WhatifError(f"comm table: dtype {unknown or 'missing'} is not valid; valid: {', '.join(DTYPE_BYTES)}")
    out = frame.copy()
    out["bytes"] = out["message_size"] * dtype.map(DTYPE_BYTES)
    return out


def nccl_rows(frame):
    """nccl-tests rows of the corpus GPUs, bytes read by dtype."""
    rows = frame[(frame["framework"] == "nccl") & frame["gpu"].isin(list(CORPUS_LINKS))]
    return with_true_bytes(rows)


def engine_graph_rows(frame, engine: str):
    """One engine's CUDA-graph all-reduce rows (TensorRT-LLM's rows are graph-captured)."""
    rows = frame[(frame["framework"] == engine) & (frame["op_name"] == "all_reduce")]
    backend = ENGINE_BACKENDS[engine]
    if backend is not None:
        rows = rows[rows["backend"] == backend]
    return with_true_bytes(rows[rows["gpu"].isin(list(CORPUS_LINKS))])


def _groups(rows):
    """(generation, op, bytes, gpus, measured_s, row index) groups for vectorised evaluation."""
    out = []
    for (gpu, op), g in rows.groupby(["gpu", "op_name"], sort=True):
        out.append((gpu, op, g["bytes"].to_numpy(float), g["num_gpus"].to_numpy(float),
                    g["latency_s"].to_numpy(float), g.index.to_numpy()))
    return out


def predict_nccl(groups, params_by_gpu) -> list[np.ndarray]:
    out = []
    for gpu, op, nbytes, n, _, _ in groups:
        bw, lat, nvswitch = link_figures(CORPUS_LINKS[gpu])
        out.append(nccl_time(op, nbytes, n, bw, lat, nvswitch, params_by_gpu[gpu]))
    return out


def predict_engine(groups, nccl_by_gpu, engine_by_gpu) -> list[np.ndarray]:
    out = []
    for gpu, op, nbytes, n, _, _ in groups:
        bw, lat, nvswitch = link_figures(CORPUS_LINKS[gpu])
        out.append(collective_time(op, nbytes, n, bw, lat, nvswitch, nccl_by_gpu[gpu], engine_by_gpu[gpu]))
    return out


def _log_residuals(groups, predictions) -> np.ndarray:
    return np.concatenate([np.log(p / g[4]) for p, g in zip(predictions, groups)])


# ---- fits ----
def fit_nccl(rows, gpus) -> NcclParams:
    """One NCCL parameter set shared by the link generations of `gpus` (one GPU: its own fit)."""
    groups = _groups(rows[rows["gpu"].isin(gpus)])
    nvls_by_gpu = {g: CORPUS_LINKS[g] in NVLS_GENERATIONS for g in gpus}

    def residuals(v):
        return _log_residuals(groups, predict_nccl(groups, {g: nccl_from_vector(v, nvls_by_gpu[g]) for g in gpus}))

    x = levenberg_marquardt(residuals, nccl_to_vector(initial_nccl(True)))
    return nccl_from_vector(x, any(nvls_by_gpu.values()))


def source_thresholds(engine: str, gpu: str) -> dict | None:
    """The engine's size thresholds on this GPU's link generation from its source code, if known."""
    table = ENGINE_THRESHOLDS.get(engine, {}).get(CORPUS_LINKS[gpu])
    return None if table is None else dict(table, source=VLLM_SOURCE)


def fit_engine(rows, engine: str, nccl_by_gpu: dict, gpus) -> dict:
    """One engine's kernel parameters shared by `gpus`: {gpu: EngineParams}. Thresholds from the
    engine's source where known (per generation), else one custom_max picked from a grid."""
    groups = _groups(rows[rows["gpu"].isin(gpus)])
    known = {g: source_thresholds(engine, g) for g in gpus}
    grid = [None] if all(known.values()) else CUSTOM_GRID
    best, best_cost, x = None, np.inf, engine_to_vector(initial_engine(engine))
    for custom_max in grid:
        def thresholds(g, cm=custom_max):
            return known[g] if cm is None else {"custom_max": cm, "source": "fitted (grid of powers of two)"}

        def residuals(v):
            by_gpu = {g: engine_from_vector(v, engine, thresholds(g)) for g in gpus}
            return _log_residuals(groups, predict_engine(groups, nccl_by_gpu, by_gpu))
        xc = levenberg_marquardt(residuals, x, iters=40)
        r = residuals(xc)
        if float(r @ r) < best_cost:
            best_cost = float(r @ r)
            best = {g: engine_from_vector(xc, engine, thresholds(g)) for g in gpus}
    return best


def transfer_engine(fitted: dict, engine: str, gpu: str) -> EngineParams:
    """Pooled engine parameters applied to another generation: its own source thresholds if known,
    else the pooled fit's (fitted thresholds are the same for every pooled GPU)."""
    params = next(iter(fitted.values()))
    known = source_thresholds(engine, gpu)
    if known is None:
        return params
    return replace(params, custom_max=known["custom_max"], oneshot_max=known.get("oneshot_max"),
                   symm_max=known.get("symm_max"), thresholds_source=known["source"])


def with_link_nvls(p: NcclParams, gpu: str) -> NcclParams:
    """The pooled parameters, applied to one generation: NVLS as its datasheet says."""
    return replace(p, nvls=CORPUS_LINKS[gpu] in NVLS_GENERATIONS)


def fit_all(frame, engines=tuple(ENGINE_BACKENDS)) -> dict:
    """In-sample fit: {gpu: {"nccl": NcclParams, engine: EngineParams, ...}} (one link generation each)."""
    rows = nccl_rows(frame)
    out = {}
    for gpu in sorted(set(rows["gpu"])):
        out[gpu] = {"nccl": with_link_nvls(fit_nccl(rows, [gpu]), gpu)}
        for engine in engines:
            er = engine_graph_rows(frame, engine)
            if (er["gpu"] == gpu).any():
                out[gpu][engine] = fit_engine(er, engine, {gpu: out[gpu]["nccl"]}, [gpu])[gpu]
    return out


def transfer_sources(held_out: str, others: list[str]) -> list[str]:
    """The GPUs whose link generations a held-out one borrows from: those of its own link type
    (NVLink from NVLink), or all of them when none shares its type (PCIe Gen4 is the only PCIe)."""
    kind = CORPUS_LINKS[held_out].split("-")[0]
    same = [g for g in others if CORPUS_LINKS[g].split("-")[0] == kind]
    return same or others


def fit_leave_one_out(frame, held_out: str, engines=tuple(ENGINE_BACKENDS)) -> dict:
    """Parameters for `held_out` fitted only on the other GPUs (other link generations), pooled."""
    rows = nccl_rows(frame)
    others = transfer_sources(held_out, sorted(set(rows["gpu"]) - {held_out}))
    pooled = fit_nccl(rows, others)
    nccl_by_gpu = {g: with_link_nvls(pooled, g) for g in others}
    out = {"nccl": with_link_nvls(pooled, held_out)}
    for engine in engines:
        er = engine_graph_rows(frame, engine)
        present = [g for g in others if (er["gpu"] == g).any()]
        if present:
            out[engine] = transfer_engine(fit_engine(er, engine, nccl_by_gpu, present), engine, held_out)
    return out


# ---- predictions for accuracy reports ----
def _predicted_rows(rows, dataset: str, predictions, groups):
    import pandas as pd
    parts = []
    for pred, (gpu, op, nbytes, n, measured, _) in zip(predictions, groups):
        parts.append(pd.DataFrame({"dataset": dataset, "gpu": gpu, "op": op, "num_gpus": n.astype(int),
                                   "bytes": nbytes, "measured_s": measured, "predicted_s": pred}))
    return pd.concat(parts, ignore_index=True)


def evaluate(frame, params_for, gpus=None, engines=tuple(ENGINE_BACKENDS)):
    """Rows with `predicted_s` beside `measured_s` for nccl-tests and each engine's graph all-reduce;
    `params_for(gpu)` gives that GPU's {"nccl": NcclParams, engine: EngineParams} (in-sample or LOO)."""
    import pandas as pd
    out = []
    rows = nccl_rows(frame)
    gpus = sorted(set(rows["gpu"])) if gpus is None else gpus
    params = {g: params_for(g) for g in gpus}
    for gpu in gpus:
        groups = _groups(rows[rows["gpu"] == gpu])
        out.append(_predicted_rows(rows, "nccl", predict_nccl(groups, {gpu: params[gpu]["nccl"]}), groups))
        for engine in engines:
            er = engine_graph_rows(frame, engine)
            er = er[er["gpu"] == gpu]
            if len(er) and engine in params[gpu]:
                groups = _groups(er)
                pred = predict_engine(groups, {gpu: params[gpu]["nccl"]}, {gpu: params[gpu][engine]})
                out.append(_predicted_rows(er, engine, pred, groups))
    return pd.concat(out, ignore_index=True)


def insample_and_loo(frame, engines=tuple(ENGINE_BACKENDS)):
    """(in-sample rows, leave-one-GPU-out rows), each from `evaluate`."""
    fitted = fit_all(frame, engines)
    insample = evaluate(frame, fitted.__getitem__, engines=engines)
    loo = evaluate(frame, lambda g: fit_leave_one_out(frame, g, engines), engines=engines)
    return insample, loo


# ---- the fitted table (whatif/roofline/data/collective_fit.yaml) ----
def _r(x: float) -> float:
    return float(f"{x:.4g}")


def _nccl_block(p: NcclParams, nvswitch: bool) -> dict:
    """Only the parameters the generation's rows constrain: NVLS where it exists, contention off NVSwitch."""
    out = {name: {"base_s": _r(q.base_s), "step_lat": _r(q.step_lat) if q.step_lat > 1e-6 else 0.0,
                  "bw_eff": _r(q.bw_eff)} for name, q in p.protocols.items()}
    if p.nvls:
        out.update(nvls_base_s=_r(p.nvls_base_s), nvls_bw_eff=_r(p.nvls_bw_eff))
    if not nvswitch:
        out.update(contention=_r(p.contention))
    return out


def _bytes_table(value):
    if value is None or not isinstance(value, dict):
        return None if value is None else int(value)
    return {int(k): int(v) for k, v in value.items()}


def _engine_block(e: EngineParams, rows, nvls: bool) -> dict:
    out = {"oneshot_base_s": _r(e.oneshot_base_s), "oneshot_bw_eff": _r(e.oneshot_bw_eff),
           "twoshot_base_s": _r(e.twoshot_base_s), "twoshot_bw_eff": _r(e.twoshot_bw_eff),
           "nccl_bw_factor": _r(e.nccl_bw_factor)}
    if nvls and e.symm_max is not None:
        out.update(symm_base_s=_r(e.symm_base_s), symm_bw_eff=_r(e.symm_bw_eff))
    out.update(custom_max_bytes=_bytes_table(e.custom_max))
    if e.oneshot_max is not None:
        out.update(oneshot_max_bytes=_bytes_table(e.oneshot_max))
    if nvls and e.symm_max is not None:
        out.update(symm_max_bytes=_bytes_table(e.symm_max))
    out.update(pcie_max_gpus=e.pcie_max_gpus, thresholds_source=e.thresholds_source, provenance="fitted",
               fitted_on={"version": str(rows["version"].iloc[0]), "rows": int(len(rows)),
                          "kernel_source": str(rows["kernel_source"].iloc[0])})
    return out


def fit_document(frame, fitted: dict) -> dict:
    """The YAML document: one block per link generation, saying what each part was fitted on."""
    links = {}
    nccl = nccl_rows(frame)
    for gpu, params in sorted(fitted.items()):
        gen = CORPUS_LINKS[gpu]
        nvswitch = link_figures(gen)[2]
        rows = nccl[nccl["gpu"] == gpu]
        engines = {}
        for engine, e in params.items():
            if engine != "nccl":
                er = engine_graph_rows(frame, engine)
                engines[engine] = _engine_block(e, er[er["gpu"] == gpu], gen in NVLS_GENERATIONS)
        fitted_on = {"gpu": gpu, "rows": int(len(rows)), "nccl_version": str(rows["version"].iloc[0]),
                     "ops": sorted(set(rows["op_name"])), "num_gpus": sorted(int(n) for n in set(rows["num_gpus"]))}
        links[gen] = {"provenance": "fitted", "fitted_on": fitted_on,
                      "nvls": gen in NVLS_GENERATIONS, "nvls_source": NVLS_SOURCE,
                      "nccl": _nccl_block(params["nccl"], nvswitch), "engines": engines}
    return {"provenance": "fitted", "links": links}


HEADER = """# Collective model parameters (whatif/roofline/kernel_models/collectives.py), one block per link
# generation, generated by `python benchmarks/accuracy_collectives.py --write`: fitted by
# whatif/validate/collective_fit.py (log least squares, every efficiency in (0, 1]) on NVIDIA
# aiconfigurator's comm table (Apache-2.0, commit 095f58a51c): nccl-tests rows for `nccl`, each
# engine's CUDA-graph custom all-reduce rows for `engines`. Units: *_s seconds; step_lat in units of
# the link profile's latency; *_eff and nccl_bw_factor fractions of the link's per-direction
# datasheet bandwidth; *_max_bytes bytes ({gpus: bytes} tables from the engine's source, or one value
# chosen from a grid of powers of two: thresholds_source says which); contention the
# exponent of (2/n) on fabrics without NVSwitch. `nvls` is a datasheet fact, not fitted.
"""


def write_fit(frame, path: Path = FIT_FILE, fitted: dict | None = None) -> dict:
    import yaml
    fitted = fit_all(frame) if fitted is None else fitted
    doc = fit_document(frame, fitted)
    Path(path).write_text(HEADER + yaml.safe_dump(doc, sort_keys=False, width=110))
    precompiled.refresh(Path(path))
    return doc
