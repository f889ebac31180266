"""The public reference measurements (Vidur's operator timings, reference/vidur-profiling) as measurement-table
rows, so calibration and the accuracy report treat them like a run of our own kernels.

Each Vidur kernel is rebuilt by our graph builder from its shape columns (roofline/vidur_reference.py); its split
follows the default model's: the TRAIN models are 'train', the other models 'held-out'. Collectives are left to
benchmarks/accuracy_reference.py: a table row is one kernel on one GPU.
"""
from __future__ import annotations

import json

from ..errors import WhatifError
from ..specs.hardware import load_component
from ..roofline.efficiency import DEFAULT_FILE, default_efficiency
from ..roofline.timing import time_op
from ..roofline.vidur_reference import DEFAULT_DIR, GPU_NAMES, load_samples
from .cases import regime
from .table import Row, op_columns

SUBSET_TOKENS = (1, 4, 16, 64, 256, 1024, 4096)   # the token counts of the committed subset
DEVICES = {"a100-sxm-80gb": "A100-SXM4-80GB (Vidur's profiling)", "h100-sxm": "H100 SXM (Vidur's profiling)"}


def reference_gpus() -> tuple[str, ...]:
    return tuple(GPU_NAMES.values())


def vidur_rows(gpu_name: str, tokens: tuple[int, ...] | None = None, directory=DEFAULT_DIR) -> list[Row]:
    """Every Vidur kernel timing of `gpu_name` (or those at `tokens`) as rows, predicted with the default model."""
    if gpu_name not in reference_gpus():
        raise WhatifError(f"--reference: Vidur measured no kernels on '{gpu_name}'; "
                          f"valid: {', '.join(reference_gpus())}")
    from ..specs.profiles import read_yaml
    train_models = set(read_yaml(DEFAULT_FILE).get("train_models", []))
    gpu = load_component(gpu_name, "gpu")
    eff = default_efficiency(gpu)
    rows = []
    for s in load_samples(directory):
        if s.gpu != gpu_name or (tokens is not None and s.tokens not in tokens):
            continue
        shape = {"model": s.model, "tokens": s.tokens, "tp": s.tp, "op": s.vidur_op}
        rows.append(Row(gpu=gpu_name, device=DEVICES[gpu_name], family=s.op.op_class,
                        kernel=f"{s.vidur_op} {s.model} tokens={s.tokens} tp={s.tp}", dtype="fp16",
                        shape=json.dumps(shape, sort_keys=True), regime=regime(s.op, gpu),
                        split="train" if s.model in train_models else "held-out", status="ok",
                        check_error=float("nan"), measured_s=s.measured_s, predicted_s=time_op(s.op, gpu, eff).time_s,
                        source=f"vidur {s.model} (reference/vidur-profiling)", **op_columns(s.op)))
    return rows
