"""NVIDIA aiconfigurator's measured kernel latencies (Apache-2.0): the project's real-GPU corpus.

The corpus is one Parquet file per op family (gemm, attention, comm, moe, mla_context,
mla_generation) with `gpu, framework, version, phase, kernel_source` first and `latency_ms`
(milliseconds) last; see ../shared/reference/README.md for what each table holds and how it was
reduced. It is read from a folder the caller names: the full set lives outside the package (a
checkout's ../shared/reference/aiconfigurator), a compact subset ships as package data
(`COMPACT_DIR`) so tests and an installed wheel can use it. Nothing here is read at prediction time.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import WhatifError

FAMILIES = ("gemm", "attention", "comm", "moe", "mla_context", "mla_generation")
COMPACT_DIR = Path(__file__).resolve().parent / "measurements" / "aiconfigurator"

# The corpus names GPUs by its own keys; these are the hardware profiles they correspond to.
GPU_PROFILES = {"a100_sxm": "a100-sxm-80gb", "h100_sxm": "h100-sxm", "b200_sxm": "b200", "l40s": "l40s"}


def corpus_gpu(gpu_key: str):
    """The hardware profile of a corpus GPU (its key in the tables' `gpu` column)."""
    from ..specs.hardware import load_component
    name = GPU_PROFILES.get(gpu_key)
    if name is None:
        raise WhatifError(f"corpus GPU '{gpu_key}' is not valid; valid: {', '.join(GPU_PROFILES)}")
    return load_component(name, "gpu")


def load_family(family: str, root: str | Path) -> pd.DataFrame:  # noqa: F821 (pandas imported lazily)
    """One op family's table from the folder `root` (a .parquet file, or a compact .csv.gz), with a
    `latency_s` column (seconds) added beside the corpus's `latency_ms`."""
    import pandas as pd
    if family not in FAMILIES:
        raise WhatifError(f"corpus family '{family}' is not valid; valid: {', '.join(FAMILIES)}")
    root = Path(root)
    for name, reader in ((f"{family}.parquet", pd.read_parquet), (f"{family}.csv.gz", pd.read_csv)):
        path = root / name
        if path.is_file():
            frame = reader(path)
            frame["latency_s"] = frame["latency_ms"] * 1e-3
            return frame
    raise WhatifError(f"corpus: no {family}.parquet or {family}.csv.gz in {root}")

