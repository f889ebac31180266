"""Fit the kernel models (roofline/kernel_models) to measured kernel latencies, numpy only.

Each model's parameters are fitted by minimising the mean absolute log error |log(pred/measured)|
(a relative error, robust to outliers) with a bounded pattern search on log-parameters: every
efficiency stays in (0, 1], every time in a physical range (BOUNDS). A weak prior
(PRIOR_WEIGHT * sum of log(eff / default)^2 over the efficiencies) keeps an efficiency the rows do
not constrain (a compute efficiency of a memory-bound kernel) at its default instead of letting it
drift to a bound; it costs an efficiency the rows do constrain well under 1% of the error. One fit is one op x dtype x
engine on the rows of one or more GPUs; each GPU's rows use that GPU's datasheet ceilings, so a fit
pooled over several GPUs yields parameters that transfer to a GPU by its datasheet alone.

`python -m whatif.validate.kernel_fit --corpus DIR --write` refits data/kernel_fit.yaml: one block
per op x architecture x dtype x engine, fitted on that architecture's corpus GPU.

Rows used (`op_rows`): GEMM bf16, fp8 and nvfp4 (as fp4; the weight-only variants are not modelled);
attention rows of each GPU/phase/KV-dtype's dominant kernel (the engine's default backend; the
odd rows of other backends are dropped); decode rows whose whole KV cache fits in L2
(`l2_resident`) are not fitted: their warm replays measure L2, not the HBM streaming a real model's
per-layer caches see. They bound the floor instead (`floor_cap`): a call of a few short caches read from
L2 takes at least the kernel's fixed cost, so the floor cannot exceed their measured time; fitted on the
HBM rows alone (every cache > L2, so >= ~16 us of streaming on B200), the floor and the bandwidth trade
off and the floor came out 2-4 us above the whole L2-resident call (B200 TensorRT-LLM fp8: 14.3 us fitted
against 11.1 us measured). Bounded on Blackwell only (FLOOR_CAP_ARCHS says why).
MLA (DeepSeek's latent attention, the corpus's mla_context / mla_generation tables) is fitted with
the same prefill and decode forms at DeepSeek-V3's MLA dims (model_profiles/deepseek-v3.yaml), as the
ops `mla_prefill` and `mla_decode`: prefill attends per head with d_qk = nope + rope and d_v (the
forms' head_dim = (d_qk + d_v)/2 makes their FLOPs and Q/K/V/O bytes exact); decode is absorbed:
every head attends over one shared latent of kv_lora + rope elements per token (kernel_models/mla.py).
Long because: one fitter serves five kernel models (rows, design columns, bounded search, LOO
accuracy, the shipped YAML and compact subset, its CLI) over shared row and search helpers.
"""
from __future__ import annotations

import math
from dataclasses import asdict, replace
from functools import cache
from pathlib import Path

import numpy as np

from ..errors import WhatifError
from ..specs import precompiled
from ..roofline.kernel_models.decode_attention import MHA_FALLBACK_MODEL, decode_time_arrays, group_rows
from ..roofline.kernel_models.gemm import gemm_time_arrays
from ..roofline.kernel_models.mla import mla_decode_time_arrays, mla_prefill_head_dim
from ..roofline.kernel_models.params import (DTYPE_BYTES, PARAM_CLASSES, Ceilings, ceilings,
                                             efficiency_fields, nearest_arch)
from ..roofline.kernel_models.prefill_attention import prefill_time_arrays
from .accuracy import abs_error_stats
from .corpus import GPU_PROFILES, corpus_gpu

OPS = ("gemm", "prefill_attention", "decode_attention", "decode_attention_mmha", "mla_prefill", "mla_decode")
FAMILY = {"gemm": "gemm", "prefill_attention": "attention", "decode_attention": "attention",
          "decode_attention_mmha": "attention", "mla_prefill": "mla_context",
          "mla_decode": "mla_generation"}   # op -> corpus table
CORPUS_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "fp8": "fp8", "nvfp4": "fp4"}
QUANTIZED = ("fp8", "fp4")   # GEMM dtypes whose rows include the activation-quantization kernel
EFF = (0.02, 1.0)
BOUNDS = {   # name -> (low, high); searched on a log scale except `smooth`
    "eff_tiny": EFF, "eff_small": EFF, "eff_skinny": EFF, "eff_mid": EFF, "eff_large": EFF, "mem_eff": EFF,
    "compute_eff": EFF,
    "floor_s": (2e-7, 5e-5), "quant_s": (1e-8, 3e-5), "quant_row_s": (1e-11, 1e-7),
    "max_split": (1.0, 64.0), "split_s": (1e-9, 2e-5), "kv_splits": (1.0, 256.0), "tile_s": (1e-10, 1e-5),
    "cta_s": (1e-10, 3e-5), "token_s": (1e-11, 1e-5), "seq_s": (1e-11, 1e-5), "smooth": (1.0, 8.0),
}
# The corpus's MLA timings are of the engine's whole MLA attention call (several kernels; vLLM 0.14's
# collector times impl.forward with CUDA events, absorption BMMs and cache write included): vLLM's
# shortest are 0.1 ms (H100) to 0.3 ms (A100, L40S), TRT-LLM's and SGLang's ~10 us, so the floor may
# reach 1 ms.
OP_BOUNDS = {"mla_prefill": {"floor_s": (2e-7, 1e-3)}, "mla_decode": {"floor_s": (2e-7, 1e-3)}}


def corpus_ceilings(gpu_key: str) -> Ceilings:
    """Datasheet ceilings of a corpus GPU, from its hardware profile."""
    return ceilings(corpus_gpu(gpu_key))


# ---------------------------------------------------------------- rows


def _dominant_kernel(frame, keys):
    counts = frame.groupby(keys + ["kernel_source"]).size().rename("n").reset_index()
    best = counts.sort_values("n", ascending=False).drop_duplicates(keys)
    return frame.merge(best[keys + ["kernel_source"]], on=keys + ["kernel_source"])


def op_rows(frame, op: str):
    """The corpus rows a model covers, with a `dtype` column (the params key): GEMM operand dtype,
    attention KV-cache dtype."""
    if op == "gemm":
        rows = frame[frame["gemm_dtype"].isin(["bfloat16", "fp8", "nvfp4"])].copy()
        rows["dtype"] = rows["gemm_dtype"].map(CORPUS_DTYPES)
        return rows
    if op in ("mla_prefill", "mla_decode"):
        rows = frame[frame["mla_dtype"] == "bfloat16"].copy()
        rows["dtype"] = rows["kv_cache_dtype"].map(CORPUS_DTYPES)
        return _dominant_kernel(rows[rows["dtype"].notna()], ["gpu", "framework", "dtype"])
    phase = "prefill" if op == "prefill_attention" else "decode"
    rows = frame[frame["phase"] == phase].copy()
    rows["dtype"] = rows["kv_cache_dtype"].map(CORPUS_DTYPES)
    rows = rows[rows["dtype"].notna()]
    if phase == "decode":
        rows = rows[decode_kernel_rows(rows, op)]   # (L2-resident rows kept: hbm_rows / floor_cap split them)
    rows = _dominant_kernel(rows, ["gpu", "framework", "dtype"])
    return rows


def _l2_resident(rows):
    if "l2_resident" not in rows.columns:
        return np.zeros(len(rows), bool)
    return (rows["l2_resident"] == True).to_numpy()  # noqa: E712 (object column: True/False/None)


def hbm_rows(rows):
    """The rows a model is fitted and scored on: all but decode rows whose whole cache fits in L2."""
    return rows[~_l2_resident(rows)]


FLOOR_CAP_BATCH, FLOOR_CAP_STEP = 8, 255   # the smallest decode calls: <= 8 sequences of <= 256 cached tokens
# Architectures whose decode floors the cap bounds. Blackwell: it costs its HBM rows <= 1 point in-sample (TRT-LLM
# fp8 6.8 -> 7.8%) and the pooled LOO nothing. Not Hopper, Ampere, Ada: there it cost up to 5 points (H100 TRT-LLM
# bf16 11.3 -> 16.3%, floor 21.8 -> 9.0 us) and, tried in session 53, H100's serving TPOT the wrong way (TRT-LLM
# Llama-3.1-8B 6.7% -> 9.0%): a fixed cost their HBM-resident small caches pay that the L2 rows do not show.
FLOOR_CAP_ARCHS = ("blackwell",)


def floor_cap(rows) -> float | None:
    """Upper bound of a decode-attention floor (seconds): the median measured time of the L2-resident calls of
    <= 8 sequences over <= 256 cached tokens (corpus rows of one GPU x engine x KV dtype), whose streaming is a few
    hundred kB from L2; None where the rows have none (the compact subset) or span GPUs not all of FLOOR_CAP_ARCHS."""
    if len(rows) == 0 or any(corpus_ceilings(g).arch not in FLOOR_CAP_ARCHS for g in rows["gpu"].unique()):
        return None
    l2 = rows[_l2_resident(rows)]
    small = l2[(l2["batch_size"] <= FLOOR_CAP_BATCH) & (l2["step"] <= FLOOR_CAP_STEP)] if len(l2) else l2
    return float(small["latency_s"].median()) if len(small) else None


def decode_kernel_rows(rows, op: str):
    """Which decode rows `op` models. TensorRT-LLM's rows are two kernels: XQA for a group of 2-32 query heads
    per KV head (decode_attention) and the masked MHA kernel for a multi-head model (decode_attention_mmha).
    Its rows of larger groups (MMHA reading the cache once per query head, partly from L2) fit neither form
    and are left out; the other engines run one kernel for every group."""
    from ..roofline.engines import load_engine
    group = rows["num_heads"] / rows["num_key_value_heads"]
    trtllm = rows["framework"] == "trtllm"
    if op == MHA_FALLBACK_MODEL:
        return trtllm & (group == 1)
    return ~trtllm | ((group > 1) & (group <= load_engine("trtllm").gqa_decode_max_group))


def subsample(frame, max_rows: int):
    """Every k-th row (deterministic) after a stable sort on all shape columns."""
    if len(frame) <= max_rows:
        return frame
    cols = [c for c in ("gpu", "framework", "dtype", "m", "n", "k", "batch_size", "isl", "step",
                        "num_heads", "num_key_value_heads", "head_dim") if c in frame.columns]
    ordered = frame.sort_values(cols, kind="stable")
    step = math.ceil(len(ordered) / max_rows)
    return ordered.iloc[::step]


def ceiling_columns(per_row, compute_dtypes):
    """(peak FLOP/s per row, Ceilings whose fields are per-row columns) from each row's Ceilings and the dtype
    its compute runs in (one dtype for all rows, or one per row)."""
    dt = np.broadcast_to(np.asarray(compute_dtypes), (len(per_row),))
    peak = np.array([c.peak_flops(d) for c, d in zip(per_row, dt)])
    col = {f: np.array([getattr(c, f) for c in per_row], dtype=float) for f in ("hbm_bw", "sms", "l2_bytes", "clock")}
    return peak, Ceilings("rows", "mixed", {}, **col)


def _ceiling_columns(rows, compute_dtype):
    """ceiling_columns of corpus rows, by their `gpu` key."""
    table = {g: corpus_ceilings(g) for g in rows["gpu"].unique()}
    return ceiling_columns([table[g] for g in rows["gpu"].to_numpy()], compute_dtype)


@cache
def mla_dims() -> dict:
    """DeepSeek-V3's MLA widths (the model the corpus's MLA tables time): kv_lora_rank,
    qk_rope_head_dim, qk_nope_head_dim, v_head_dim."""
    from ..specs.profiles import read_yaml
    path = Path(__file__).resolve().parent.parent / "model_profiles" / "deepseek-v3.yaml"
    return {k: float(v) for k, v in read_yaml(path)["mla"].items()
            if k in ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")}


def _mla_design(rows, op: str) -> dict:
    m = mla_dims()
    kv = np.array([DTYPE_BYTES[d] for d in rows["dtype"]])
    peak, cols = _ceiling_columns(rows, "bf16")
    batch, heads = rows["batch_size"].to_numpy(float), rows["num_heads"].to_numpy(float)
    y = rows["latency_s"].to_numpy(float)
    if op == "mla_prefill":   # per-head K/V expanded from the latent: d_qk = nope + rope, d_v
        d = mla_prefill_head_dim(m["qk_nope_head_dim"] + m["qk_rope_head_dim"], m["v_head_dim"])
        return {"args": (batch, rows["isl"].to_numpy(float), heads, heads, d, kv, 0.0, peak, cols), "y": y}
    latent = m["kv_lora_rank"] + m["qk_rope_head_dim"]
    return {"args": (batch, rows["step"].to_numpy(float) + 1, heads, latent, m["kv_lora_rank"], kv, peak, cols),
            "y": y, "extra": absorb_gemm_seconds(rows, m)}


def absorb_gemm_seconds(rows, m: dict) -> np.ndarray:
    """Seconds of the two absorption GEMMs an MLA decode row's timing includes (vLLM times the whole MLA
    call): q_absorb (B*H rows, qk_nope -> kv_lora) and v_absorb (B*H rows, kv_lora -> v_head_dim), as
    roofline/graph.py builds them, priced by the shipped GEMM fit of the row's GPU and engine. The MLA
    decode parameters are fitted to what is left: the attention kernel the graph's MLA op stands for."""
    from ..roofline.kernel_models.params import params_for
    out = np.zeros(len(rows))
    for (gpu, engine), idx in rows.groupby(["gpu", "framework"]).indices.items():
        c = corpus_ceilings(gpu)
        p = params_for("gemm", c.arch, "bf16", engine).params
        bh = rows["batch_size"].to_numpy(float)[idx] * rows["num_heads"].to_numpy(float)[idx]
        for n, k in ((m["kv_lora_rank"], m["qk_nope_head_dim"]), (m["v_head_dim"], m["kv_lora_rank"])):
            out[idx] += gemm_time_arrays(bh, n, k, 2.0, c.peak_flops("bf16"), c, p)
    return out


def design(rows, op: str) -> dict:
    """The numpy columns one model needs (shape, ceilings per row, measured seconds)."""
    if op in ("mla_prefill", "mla_decode"):
        return _mla_design(rows, op)
    if op == "gemm":
        dtype = rows["dtype"].to_numpy()
        peak, cols = _ceiling_columns(rows, dtype)
        return {"args": (rows["m"].to_numpy(float), rows["n"].to_numpy(float), rows["k"].to_numpy(float),
                         np.array([DTYPE_BYTES[d] for d in dtype]), peak, cols),
                "y": rows["latency_s"].to_numpy(float)}
    kv = np.array([DTYPE_BYTES[d] for d in rows["dtype"]])
    window = rows["window_size"].fillna(0).to_numpy(float)
    shape = (rows["batch_size"].to_numpy(float),)
    if op == "prefill_attention":
        compute = rows["attn_dtype"].map(CORPUS_DTYPES).fillna("bf16").to_numpy()
        shape += (rows["isl"].to_numpy(float),)
    else:
        compute = "bf16"
        shape += (rows["step"].to_numpy(float) + 1,)
    peak, cols = _ceiling_columns(rows, compute)
    shape += tuple(rows[c].to_numpy(float) for c in ("num_heads", "num_key_value_heads", "head_dim"))
    out = {"args": shape + (kv, window, peak, cols), "y": rows["latency_s"].to_numpy(float)}
    if op == "decode_attention":   # each row's kernel tile (not fitted; MMHA keeps the default)
        out["group_rows"] = np.array([group_rows(e, corpus_ceilings(g).arch, d) for e, g, d in
                                      zip(rows["framework"], rows["gpu"], rows["dtype"])])
    return out


MODELS = {"gemm": gemm_time_arrays, "prefill_attention": prefill_time_arrays,
          "decode_attention": decode_time_arrays, "decode_attention_mmha": decode_time_arrays,
          "mla_prefill": prefill_time_arrays,
          "mla_decode": mla_decode_time_arrays}


def predict(op: str, data: dict, params) -> np.ndarray:
    """The model's seconds per row, plus the fixed `extra` seconds a row's timing holds beyond the
    kernel the model stands for (MLA decode: the absorption GEMMs)."""
    if "group_rows" in data:
        params = replace(params, group_rows=data["group_rows"])
    return MODELS[op](*data["args"], params) + data.get("extra", 0.0)


def log_error(op: str, data: dict, params) -> float:
    pred = predict(op, data, params)
    return float(np.mean(np.abs(np.log(pred / data["y"]))))


PRIOR_WEIGHT = 0.003


def objective(op: str, data: dict, params, tied: bool = False) -> float:
    """What the search minimises: the mean |log error| plus the weak prior on the efficiencies (a tied
    eff_small, which only repeats eff_skinny, counted once)."""
    default = PARAM_CLASSES[op]()
    prior = sum(math.log(getattr(params, n) / getattr(default, n)) ** 2 for n in efficiency_fields(params)
                if not (tied and n == "eff_small"))
    return log_error(op, data, params) + PRIOR_WEIGHT * prior


# ---------------------------------------------------------------- search


def free_fields(op: str, dtype: str) -> list[str]:
    names = list(asdict(PARAM_CLASSES[op]()))
    if op == "gemm" and dtype in QUANTIZED:
        # Tied to eff_skinny: every fp8 (and fp4) row includes the activation quantization, whose fixed cost the fit
        # cannot tell from the GEMM's own floor; a further free bucket moved that split between refits.
        names.remove("eff_small")
    elif op == "gemm":
        for name in ("quant_s", "quant_row_s"):   # bf16 GEMMs have no activation-quantization kernel
            names.remove(name)
    for name in ("group_rows", "min_tile_n"):   # a kernel's tile: from its source, or chosen by `fit`, not searched
        if name in names:
            names.remove(name)
    return names


def _to_unit(name, value):
    return value if name == "smooth" else math.log(value)


def _from_unit(name, u, op=None, bounds=None):
    lo, hi = (bounds or {}).get(name) or OP_BOUNDS.get(op, {}).get(name, BOUNDS[name])
    v = u if name == "smooth" else math.exp(u)
    return min(hi, max(lo, v))


STARTS = 3   # pattern searches from the defaults and from two deterministic spreads of them
GEMM_MIN_TILE_N = (64.0, 128.0, 256.0)   # the narrowest N tile a GEMM library may offer (a discrete choice)


def fit(op: str, data: dict, dtype: str, max_evals: int = 1200, starts: int = STARTS, cap: float | None = None):
    """Parameters minimising `objective` over `data` (from `design`): the best of `starts` bounded
    pattern searches. A GEMM is fitted at each narrowest N tile in turn, and the tile whose fit has the
    lowest mean |log error| is kept (the data decide a kernel's tiles, not the efficiencies' prior; a tie
    goes to the narrower). `cap`: an upper bound of floor_s (floor_cap). Returns (params, mean abs log error)."""
    lo, hi = OP_BOUNDS.get(op, {}).get("floor_s", BOUNDS["floor_s"])
    bounds = {"floor_s": (min(lo, cap), min(hi, cap))} if cap else None
    bases = ([replace(PARAM_CLASSES[op](), min_tile_n=t) for t in GEMM_MIN_TILE_N] if op == "gemm"
             else [PARAM_CLASSES[op]()])
    fits = []
    for base in bases:
        best = None
        for i in range(starts):
            scale = (1.0, 0.5, 2.0)[i]
            start = replace(base, **{n: _from_unit(n, _to_unit(n, getattr(base, n)) + (0 if n == "smooth" else
                                     math.log(scale)), op, bounds) for n in free_fields(op, dtype)})
            result = _search(op, data, dtype, start, max_evals, bounds)
            if best is None or result[1] < best[1]:
                best = result
        fits.append((log_error(op, data, best[0]), best[0]))
    err, params = min(fits, key=lambda f: f[0])   # (min keeps the first, the narrower, of equal errors)
    return params, err


def _search(op: str, data: dict, dtype: str, params, max_evals: int, bounds: dict | None = None):
    """Bounded pattern search: each free parameter in turn moves up or down by its step (growing
    after a gain); a sweep without a gain halves the steps."""
    if op == "gemm" and dtype not in QUANTIZED:
        params = replace(params, quant_s=0.0, quant_row_s=0.0)
    names = free_fields(op, dtype)
    tied = op == "gemm" and "eff_small" not in names   # eff_small follows eff_skinny
    if tied:
        params = replace(params, eff_small=params.eff_skinny)
    u = {n: _to_unit(n, getattr(params, n)) for n in names}
    step = {n: (1.0 if n == "smooth" else math.log(2.0)) for n in names}
    best = objective(op, data, params, tied)
    evals = 1
    while evals < max_evals and max(step.values()) > 0.01:
        improved = False
        for n in names:
            for sign in (1.0, -1.0):
                trial_u = u[n] + sign * step[n]
                trial = replace(params, **{n: _from_unit(n, trial_u, op, bounds)})
                if tied and n == "eff_skinny":
                    trial = replace(trial, eff_small=trial.eff_skinny)
                err = objective(op, data, trial, tied)
                evals += 1
                if err < best - 1e-9:
                    best, params, improved = err, trial, True
                    u[n] = _to_unit(n, getattr(trial, n))
                    step[n] *= 1.5
                    break
        if not improved:
            step = {n: s * 0.5 for n, s in step.items()}
    return params, best


def check_physical(params) -> None:
    """Every efficiency of a fitted parameter set must be a fraction of its ceiling."""
    for name in efficiency_fields(params):
        v = getattr(params, name)
        if not 0.0 < v <= 1.0:
            raise WhatifError(f"fitted {type(params).__name__}.{name} = {v:g} is not in (0, 1]")


# ---------------------------------------------------------------- accuracy


def ape(op: str, data: dict, params) -> np.ndarray:
    """Absolute percentage errors, one per row."""
    return np.abs(predict(op, data, params) / data["y"] - 1.0) * 100.0


def select(data: dict, mask) -> dict:
    def cut(a):
        if isinstance(a, Ceilings):
            return replace(a, **{f: getattr(a, f)[mask] for f in ("hbm_bw", "sms", "l2_bytes", "clock")})
        return a[mask] if np.ndim(a) else a
    out = {"args": tuple(cut(a) for a in data["args"]), "y": data["y"][mask]}
    for key in ("extra", "group_rows"):
        if key in data:
            out[key] = data[key][mask]
    return out


# Size buckets the accuracy table is split by (validate/regime.py's regimes are which ceiling binds;
# these are the shape columns it says to group by separately).
SIZE_BUCKETS = {"gemm": ("m", 128, "m<=128", "m>128"),
           "prefill_attention": ("isl", 1024, "seq<=1K", "seq>1K"),
           "decode_attention": ("context", 1024, "seq<=1K", "seq>1K"),
           "decode_attention_mmha": ("context", 1024, "seq<=1K", "seq>1K"),
           "mla_prefill": ("isl", 1024, "seq<=1K", "seq>1K"),
           "mla_decode": ("context", 1024, "seq<=1K", "seq>1K")}


def size_buckets(rows, op: str) -> np.ndarray:
    col, cut, small, large = SIZE_BUCKETS[op]
    values = rows["step"].to_numpy() + 1 if col == "context" else rows[col].to_numpy()
    return np.where(values <= cut, small, large)


def evaluate(tables: dict, engine: str, max_rows: int, max_evals: int = 1200, baselines=None,
             in_sample: bool = True, starts: int = STARTS) -> list[dict]:
    """In-sample and leave-one-GPU-out accuracy of every model on one engine's rows.

    `tables`: op -> corpus rows (op_rows). For each op x dtype x GPU:
      in-sample: fitted on that GPU's rows;
      LOO: fitted on the other GPUs' rows pooled (the cross-architecture fit), applied to this
           GPU's datasheet ceilings;
      LOO-nearest: the in-sample fit of the nearest other architecture (what params_for falls back
           to for an architecture without a fit); needs in_sample.
    `baselines`: name -> (op, rows) -> seconds, other models scored on the same rows."""
    out = []
    for op, rows in tables.items():
        rows = rows[rows["framework"] == engine]
        for dtype in sorted(rows["dtype"].unique()):
            groups = dict(tuple(rows[rows["dtype"] == dtype].groupby("gpu")))
            by_gpu = {g: subsample(hbm_rows(r), max_rows) for g, r in groups.items()}
            data = {g: design(r, op) for g, r in by_gpu.items()}
            own = ({g: fit(op, d, dtype, max_evals, starts, floor_cap(groups[g]))[0] for g, d in data.items()}
                   if in_sample else {})
            arch = {g: corpus_ceilings(g).arch for g in by_gpu}
            for gpu, r in by_gpu.items():
                errors = {"in-sample": ape(op, data[gpu], own[gpu])} if in_sample else {}
                others = [g for g in by_gpu if g != gpu]
                if others:
                    pooled = design(_concat([by_gpu[g] for g in others]), op)
                    cap = floor_cap(_concat([groups[g] for g in others]))
                    errors["LOO"] = ape(op, data[gpu], fit(op, pooled, dtype, max_evals, starts, cap)[0])
                    if in_sample:
                        near = nearest_arch(arch[gpu], [arch[g] for g in others])
                        donor = next(g for g in others if arch[g] == near)
                        errors["LOO-nearest"] = ape(op, data[gpu], own[donor])
                for name, model in (baselines or {}).items():
                    errors[name] = np.abs(model(op, r) / r["latency_s"].to_numpy() - 1.0) * 100.0
                labels = size_buckets(r, op)
                for regime in sorted(set(labels)) + ["all"]:
                    mask = np.ones(len(r), bool) if regime == "all" else labels == regime
                    out.append({"engine": engine, "gpu": gpu, "op": op, "dtype": dtype, "regime": regime,
                                **{k: abs_error_stats(e[mask]) for k, e in errors.items()}})
    return out


def _concat(frames):
    import pandas as pd
    return pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------- shipped fits and compact subset


def fit_blocks(tables: dict, engines, max_rows: int) -> dict:
    """data/kernel_fit.yaml's `fits`: op -> engine -> one block per (GPU architecture, dtype)."""
    fits = {}
    for op, rows in tables.items():
        for engine in engines:
            blocks = []
            engine_rows_ = rows[rows["framework"] == engine]
            for (gpu, dtype), r in engine_rows_.groupby(["gpu", "dtype"]):
                sample = subsample(hbm_rows(r), max_rows)
                params, err = fit(op, design(sample, op), dtype, cap=floor_cap(r))
                if op == "decode_attention":   # the tile the rows were fitted with, for the pricing path
                    params = replace(params, group_rows=group_rows(engine, corpus_ceilings(gpu).arch, dtype))
                check_physical(params)
                versions = sorted(set(r["version"].astype(str)))
                blocks.append({
                    "arch": corpus_ceilings(gpu).arch, "gpu": GPU_PROFILES[gpu], "dtype": dtype,
                    "engine": engine, "version": ", ".join(versions), "rows": int(len(sample)),
                    "kernel": ", ".join(sorted(set(r["kernel_source"].astype(str)))),
                    "provenance": "fitted",
                    "source": f"aiconfigurator corpus, mean |log error| {err:.3f}",
                    "params": {k: float(f"{v:.4g}") for k, v in asdict(params).items()}})
            if blocks:
                fits.setdefault(op, {})[engine] = blocks
    return fits


COMPACT_ROWS = 200   # per GPU x engine x op x dtype
COMPACT_COLUMNS = {
    "gemm": ["gpu", "framework", "version", "kernel_source", "gemm_dtype", "m", "n", "k", "latency_ms"],
    "attention": ["gpu", "framework", "version", "phase", "kernel_source", "batch_size", "isl", "step",
                  "num_heads", "num_key_value_heads", "head_dim", "attn_dtype", "kv_cache_dtype",
                  "window_size", "l2_resident", "kv_bytes", "latency_ms"],
    **{f: ["gpu", "framework", "version", "kernel_source", "mla_dtype", "kv_cache_dtype", "num_heads",
           "batch_size", "isl", "tp_size", "step", "latency_ms"] for f in ("mla_context", "mla_generation")},
}


def compact_subset(tables: dict, per_group: int = COMPACT_ROWS) -> dict:
    """family -> the rows the models use, every k-th shape of each GPU x engine x op x dtype."""
    out = {}
    for op, rows in tables.items():
        family = FAMILY[op]
        parts = [subsample(hbm_rows(r), per_group) for _, r in rows.groupby(["gpu", "framework", "dtype"])]
        out.setdefault(family, []).extend(parts)
    return {f: _concat(parts)[COMPACT_COLUMNS[f]] for f, parts in out.items()}


def load_tables(root, ops=OPS) -> dict:
    """op -> the corpus rows its model covers, read from the folder `root`."""
    from .corpus import load_family
    families = {}
    tables = {}
    for op in ops:
        family = FAMILY[op]
        if family not in families:
            families[family] = load_family(family, root)
        tables[op] = op_rows(families[family], op)
    return tables


def main(argv=None) -> None:
    import argparse

    import yaml

    from ..roofline.kernel_models.params import FIT_FILE
    from ..roofline.engines import ENGINES
    from .corpus import COMPACT_DIR
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, help="folder with the corpus's gemm/attention tables")
    parser.add_argument("--rows", type=int, default=4000, help="rows per fit (every k-th shape)")
    parser.add_argument("--write", action="store_true", help=f"write {FIT_FILE.name}")
    parser.add_argument("--write-compact", action="store_true", help=f"write the compact subset to {COMPACT_DIR}")
    parser.add_argument("--ops", default=",".join(OPS),
                        help="comma-separated ops to refit (the others' blocks in the YAML are kept)")
    args = parser.parse_args(argv)
    ops = tuple(o.strip() for o in args.ops.split(",") if o.strip())
    bad = [o for o in ops if o not in OPS]
    if bad:
        raise WhatifError(f"--ops: '{bad[0]}' is not valid; valid: {', '.join(OPS)}")
    tables = load_tables(Path(args.corpus), ops)
    if args.write_compact:
        for family, frame in compact_subset(tables).items():
            frame.to_csv(COMPACT_DIR / f"{family}.csv.gz", index=False, float_format="%.6g")
            print(f"wrote {len(frame)} rows to {COMPACT_DIR / (family + '.csv.gz')}")
    if args.write:
        kept = yaml.safe_load(FIT_FILE.read_text()).get("fits", {}) if FIT_FILE.is_file() else {}
        fits = {**{op: b for op, b in kept.items() if op not in ops}, **fit_blocks(tables, ENGINES, args.rows)}
        fits = {op: fits[op] for op in OPS if op in fits}
        header = ("# Kernel-model parameters (roofline/kernel_models), generated by\n"
                  "#   python -m whatif.validate.kernel_fit --corpus ../shared/reference/aiconfigurator --write\n"
                  "# Fitted (mean |log error|, bounded pattern search, numpy) on NVIDIA aiconfigurator's measured\n"
                  "# kernel latencies (Apache-2.0; github.com/ai-dynamo/aiconfigurator, commit 095f58a51c):\n"
                  "# one block per op x engine x GPU architecture x dtype (GEMM: operand dtype; attention: KV-cache\n"
                  "# dtype), each naming the GPU, engine version, kernel and rows it was fitted on. Efficiencies\n"
                  "# are fractions of the datasheet ceilings, in (0, 1]; *_s are seconds.\n")
        FIT_FILE.write_text(header + yaml.safe_dump({"version": 1, "fits": fits}, sort_keys=False, width=110))
        precompiled.refresh(FIT_FILE)
        print(f"wrote {FIT_FILE}")


if __name__ == "__main__":
    main()
