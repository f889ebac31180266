"""The public reference measurements (Vidur's operator timings, validate/vidur.py) as measurement-table rows and
scored measurements, so calibration, the accuracy report and the HTML report treat them like a run of our own.

Vidur's raw files are read from a folder the caller names (validate/vidur.py: vidur_dir); an installed wheel
instead has the committed subset as measurement tables (package data, MEASUREMENTS_DIR/<gpu>/vidur-reference.csv).
The split is the default model's: kernels of TRAIN_MODELS and all-reduces on TRAIN_WORKERS GPUs are 'train',
the rest 'held-out'. A table row is one kernel on one GPU, so collectives (which need a link) appear only as
measurements (`vidur_measurements`) and in benchmarks/accuracy_reference.py.
"""
from __future__ import annotations

from dataclasses import replace

import json
from pathlib import Path

from ..errors import WhatifError
from ..roofline.efficiency import default_efficiency
from ..roofline.timing import time_op
from ..specs.hardware import load_component, load_system
from .accuracy import as_measurements, score
from .regime import regime
from .table import MEASUREMENTS_DIR, Measurement, Row, op_columns, read_tables
from .vidur import GPU_NAMES, SYSTEMS, Sample, load_network_samples, load_samples

TRAIN_MODELS = ("meta-llama/Llama-2-7b-hf", "codellama/CodeLlama-34b-Instruct-hf", "Qwen/Qwen-72B")
TRAIN_WORKERS = (2, 8)   # all-reduce fit on 2- and 8-GPU timings; 4-GPU timings held out
SUBSET_TOKENS = (1, 4, 16, 64, 256, 1024, 4096)   # the token counts of the committed subset
COMMITTED_TABLE = "vidur-reference.csv"
DEVICES = {"a100-sxm-80gb": "A100-SXM4-80GB (Vidur's profiling)", "h100-sxm": "H100 SXM (Vidur's profiling)"}


def reference_gpus() -> tuple[str, ...]:
    return tuple(GPU_NAMES.values())


def is_train(s: Sample) -> bool:
    return s.tp in TRAIN_WORKERS if s.vidur_op == "all_reduce" else s.model in TRAIN_MODELS


def split(s: Sample) -> str:
    return "train" if is_train(s) else "held-out"


def kernel_name(s: Sample) -> str:
    """Vidur's op name first, then the shape: 'mlp_up_proj <model> tokens=16 tp=2', 'all_reduce 8 GPUs 4194304 B'."""
    if s.vidur_op == "all_reduce":
        return f"all_reduce {s.tp} GPUs {s.op.shape.bytes:.0f} B"
    return f"{s.vidur_op} {s.model} tokens={s.tokens} tp={s.tp}"


def vidur_rows(gpu_name: str, tokens: tuple[int, ...] | None = None, directory=None) -> list[Row]:
    """Every Vidur kernel timing of `gpu_name` (or those at `tokens`) in the folder `directory` (validate/vidur.py:
    vidur_dir) as rows, predicted with the default model."""
    if gpu_name not in reference_gpus():
        raise WhatifError(f"--reference: Vidur measured no kernels on '{gpu_name}'; "
                          f"valid: {', '.join(reference_gpus())}")
    gpu = load_component(gpu_name, "gpu")
    eff = default_efficiency(gpu)
    rows = []
    for s in load_samples(directory):
        if s.gpu != gpu_name or (tokens is not None and s.tokens not in tokens):
            continue
        shape = {"model": s.model, "tokens": s.tokens, "tp": s.tp, "op": s.vidur_op}
        rows.append(Row(gpu=gpu_name, device=DEVICES[gpu_name], family=s.op.op_class,
                        kernel=kernel_name(s), dtype="fp16",
                        shape=json.dumps(shape, sort_keys=True), regime=regime(s.op, gpu), split=split(s),
                        status="ok", check_error=float("nan"), measured_s=s.measured_s,
                        predicted_s=time_op(s.op, gpu, eff).time_s,
                        source=f"vidur {s.model} (reference/vidur-profiling)", **op_columns(s.op)))
    return rows


def vidur_measurements(directory=None, kernel_models: bool = True) -> list[Measurement]:
    """Every Vidur timing in `directory` (A100 and H100 kernels, NVSwitch all-reduces) with whatif's
    default-efficiency prediction, rebuilt from the shapes alone; split says whether the per-class fit saw
    it. kernel_models=False: GEMMs and all-reduces by the per-class model fitted on Vidur itself, instead
    of the kernel models fitted on the aiconfigurator corpus (for which all of Vidur is independent data)."""
    samples, network = load_samples(directory), load_network_samples(directory)
    out = []
    for vidur_gpu, gpu_name in GPU_NAMES.items():
        gpu, system = load_component(gpu_name), load_system(SYSTEMS[vidur_gpu])
        eff = default_efficiency(gpu)
        if not kernel_models:
            eff = replace(eff, engine=None)
        mine = [s for s in samples if s.gpu == gpu_name] + [s for s in network if s.gpu == system.name]
        for s in mine:
            link = system.gpu_link
            out.append(Measurement(gpu_name, s.op.op_class, kernel_name(s), regime(s.op, gpu, link), s.measured_s,
                                   time_op(s.op, gpu, eff, link).time_s, split(s), f"vidur {s.model}"))
    return out


def committed_tables(root: Path = MEASUREMENTS_DIR) -> list[Path]:
    """The committed Vidur subset tables (package data), one per reference GPU."""
    return sorted(Path(root).glob(f"*/{COMMITTED_TABLE}"))


def committed_measurements(root: Path = MEASUREMENTS_DIR) -> list[Measurement]:
    """The committed Vidur subset, re-predicted with the default efficiency model of each GPU."""
    tables = committed_tables(root)
    if not tables:
        raise WhatifError(f"no committed reference tables ({COMMITTED_TABLE}) under {root}")
    cache: dict[str, tuple] = {}

    def efficiency_for(gpu_name: str):
        if gpu_name not in cache:
            gpu = load_component(gpu_name, "gpu")
            cache[gpu_name] = (gpu, default_efficiency(gpu))
        return cache[gpu_name]
    return as_measurements(score(read_tables(tables), efficiency_for))


COMMITTED_SOURCE = ("Vidur's public operator timings (the committed subset, whatif/validate/measurements/*/"
                    f"{COMMITTED_TABLE}), default efficiency model")
