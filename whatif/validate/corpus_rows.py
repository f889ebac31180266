"""The aiconfigurator corpus as measurement-table rows: the same schema (validate/table.py) a user's own
`whatif validate run` writes, so the corpus is read, fitted and scored by the same code as any other table.

`whatif validate reference --corpus DIR --gpu h100-sxm [--engine vllm]` writes one GPU x engine of it as a
table; `whatif validate report` scores it; `whatif validate calibrate` fits it (per-class efficiencies and,
with enough GEMM and attention rows, the kernel models: validate/kernel_fit.py `fit_rows`).
A corpus row becomes the roofline op that whatif builds for the same kernel (`corpus_op`): a GEMM of its
(m, n, k) and dtype; a causal prefill of `isl` tokens or a decode step over `step + 1` cached tokens per
sequence. Rows with a sliding window are left out (whatif's attention op has no window), and so is MLA
(the corpus times the whole MLA call, absorption GEMMs included, which the graph holds as separate ops).
The split is every third shape held out, after the deterministic subsample of kernel_fit.subsample.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import WhatifError
from ..roofline.attention import attention_op
from ..roofline.efficiency import default_efficiency
from ..roofline.engines import DEFAULT_ENGINE, check_engine
from ..roofline.ops import Op, gemm
from ..roofline.timing import time_op
from .corpus import GPU_PROFILES, corpus_gpu
from .regime import regime
from .table import Row, op_columns

TABLE_OPS = ("gemm", "prefill_attention", "decode_attention")   # the kernel models a row maps onto
HELD_OUT_EVERY = 3
SHAPE_COLUMNS = {"gemm": ("m", "n", "k"),
                 "prefill_attention": ("batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim"),
                 "decode_attention": ("batch_size", "step", "num_heads", "num_key_value_heads", "head_dim")}


def corpus_op(op: str, r) -> Op:
    """The roofline op of one corpus row (`r`: a namedtuple of op_rows' columns, `dtype` the fit key)."""
    if op == "gemm":
        b = 1.0 if r.dtype == "fp8" else 2.0
        return gemm("gemm", r.m, r.n, r.k, b, b, r.dtype, out_bytes=2.0)
    if op not in ("prefill_attention", "decode_attention"):
        raise WhatifError(f"corpus op '{op}' has no table form; valid: {', '.join(TABLE_OPS)}")
    if getattr(r, "window_size", 0) and r.window_size > 0:
        raise WhatifError("a sliding-window attention row has no whatif op (no window)")
    kv_b = 1.0 if r.dtype == "fp8" else 2.0
    kvh, d, b = int(r.num_key_value_heads), int(r.head_dim), int(r.batch_size)
    groups = [(int(r.isl), 0, b)] if op == "prefill_attention" else [(1, int(r.step), b)]
    return attention_op(groups, int(r.num_heads), kvh, d, d, 2.0, kv_b, 2.0 * kvh * d, 1, "bf16")


def _gpu_key(gpu_name: str) -> str:
    keys = {v: k for k, v in GPU_PROFILES.items()}
    if gpu_name not in keys:
        raise WhatifError(f"--gpu: the corpus measured no '{gpu_name}'; valid: {', '.join(keys)}")
    return keys[gpu_name]


def corpus_rows(root: str | Path, gpu_name: str, engine: str = DEFAULT_ENGINE, ops=TABLE_OPS,
                max_rows: int = 1000, predict: bool = True) -> list[Row]:
    """One GPU x engine of the corpus in the folder `root` as table rows: at most `max_rows` shapes per
    op x dtype (every k-th), each predicted with the default efficiency of that engine (predict=False
    leaves predicted_s NaN, for a fitter that does not need it)."""
    from .kernel_fit import hbm_rows, load_tables, subsample
    check_engine(engine)
    key = _gpu_key(gpu_name)
    gpu = corpus_gpu(key)
    eff = default_efficiency(gpu, engine) if predict else None
    rows = []
    for op, frame in load_tables(Path(root), ops).items():
        mine = hbm_rows(frame[(frame["gpu"] == key) & (frame["framework"] == engine)])
        if "window_size" in mine.columns:
            mine = mine[mine["window_size"].fillna(0) <= 0]
        for dtype, part in mine.groupby("dtype"):
            for i, r in enumerate(subsample(part, max_rows).itertuples(index=False)):
                o = corpus_op(op, r)
                shape = {c: float(getattr(r, c)) for c in SHAPE_COLUMNS[op]}
                rows.append(Row(
                    gpu=gpu_name, device=f"{key} (aiconfigurator)", family=str(o.op_class),
                    kernel=f"{op} {dtype} " + " ".join(f"{c}={v:g}" for c, v in shape.items()),
                    dtype=str(dtype), shape=json.dumps(shape, sort_keys=True), regime=regime(o, gpu),
                    split="held-out" if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 else "train", status="ok",
                    check_error=float("nan"), measured_s=float(r.latency_s),
                    predicted_s=time_op(o, gpu, eff).time_s if predict else float("nan"),
                    source=f"aiconfigurator {engine} {r.version} ({r.kernel_source})", **op_columns(o)))
    if not rows:
        raise WhatifError(f"--corpus: no {engine} rows of {gpu_name} in {root}")
    return rows
