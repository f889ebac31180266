"""Reader for the Vidur project's public operator timings (MIT; github.com/microsoft/vidur).

The caller names the folder (`vidur_dir`): a checkout ships a copy in reference/vidur-profiling, an
installed wheel does not (it has the committed subset as measurement tables, validate/measurements/).
Each CSV row times one transformer layer's kernels for a token count and TP degree. We rebuild the
same layer with our own graph builder from the shape columns alone, so a comparison tests the
engine, never a lookup.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from ..errors import WhatifError
from ..roofline.comm import comm_op
from ..roofline.config import ForwardBatch, Parallelism, Precision
from ..roofline.graph import forward_ops, layer_ops
from ..roofline.ops import Op
from ..specs.models import ModelSpec

# Where a checkout keeps the data, relative to the working directory (run from the repository root,
# or name the folder): never resolved against the package, which an installed wheel does not hold.
DEFAULT_DIR = Path("reference") / "vidur-profiling"
GPU_NAMES = {"a100": "a100-sxm-80gb", "h100": "h100-sxm"}   # A100-SXM4-80GB and H100 SXM class
SYSTEMS = {"a100": "dgx-a100-80gb", "h100": "dgx-h100"}      # the NVSwitch nodes of network/*_dgx
# Vidur op column -> our op name (the GEMM of the MLP's first matrix depends on gating)
OP_MAP = {"emb": "embedding", "input_layernorm": "input_norm", "attn_pre_proj": "qkv_proj",
          "attn_rope": "rope", "attn_post_proj": "o_proj", "post_attention_layernorm": "post_attn_norm",
          "mlp_up_proj": ("mlp_gate_up", "mlp_up"), "mlp_act": "mlp_act", "mlp_down_proj": "mlp_down",
          "add": "residual_add"}
FP16 = Precision("fp16", "fp16", "fp16")


@dataclass(frozen=True)
class Sample:
    gpu: str            # our profile name
    model: str          # e.g. meta-llama/Llama-2-7b-hf
    vidur_op: str
    tokens: int
    tp: int
    measured_s: float   # median CUDA time
    op: Op


def spec_from_row(row: dict, model: str) -> ModelSpec:
    heads, d = int(row["n_head"]), int(row["n_embd"])
    gated = row["use_gated_mlp"] == "True"
    return ModelSpec(name=model, family="vidur", hidden_size=d, num_layers=1, num_heads=heads,
                     num_kv_heads=int(row["n_kv_head"]), head_dim=d // heads,
                     intermediate_size=int(row["n_expanded_embd"]), vocab_size=int(row["vocab_size"]),
                     max_position_embeddings=4096, mlp="gated" if gated else "plain",
                     norm="rmsnorm" if gated else "layernorm")


def layer_kernels(spec: ModelSpec, tokens: int, tp: int) -> dict[str, Op]:
    batch, par = ForwardBatch.prefill(1, tokens), Parallelism(tp=tp)
    ops = layer_ops(spec, batch, par, FP16, moe_layer=False, count=1)
    ops += [o for o in forward_ops(spec, batch, par, FP16) if o.name == "embedding"]
    return {o.name: o for o in ops}


def vidur_dir(directory: str | Path | None = None) -> Path:
    """The Vidur profiling folder `directory` (default: reference/vidur-profiling under the working
    directory), checked: a missing folder is a one-line error naming it."""
    path = Path(directory) if directory is not None else DEFAULT_DIR
    if not (path / "compute").is_dir() and not (path / "network").is_dir():
        raise WhatifError(f"--vidur: no Vidur profiling folder at '{path}' (it needs compute/ or network/); run from "
                          "a whatif checkout (reference/vidur-profiling) or give --vidur DIR")
    return path


def load_samples(directory: str | Path | None = None) -> list[Sample]:
    """Every kernel timing of the folder's compute/<gpu>/<org>/<model>/mlp.csv files, as rebuilt Ops."""
    samples: list[Sample] = []
    for path in sorted(vidur_dir(directory).glob("compute/*/*/*/mlp.csv")):
        gpu = GPU_NAMES[path.parts[-4]]
        model = f"{path.parts[-3]}/{path.parts[-2]}"
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                spec = spec_from_row(row, model)
                tokens, tp = int(row["num_tokens"]), int(row["num_tensor_parallel_workers"])
                kernels = layer_kernels(spec, tokens, tp)
                for vop, ours in OP_MAP.items():
                    col = f"time_stats.{vop}.median"
                    if not row.get(col):
                        continue
                    names = ours if isinstance(ours, tuple) else (ours,)
                    op = next((kernels[n] for n in names if n in kernels), None)
                    if op is None:
                        continue
                    samples.append(Sample(gpu, model, vop, tokens, tp, float(row[col]) * 1e-3, op))
    return samples


def load_network_samples(directory: str | Path | None = None) -> list[Sample]:
    """All-reduce timings inside one NVSwitch node (all workers on the node), as comm Ops.

    `size` is the message in BYTES: Vidur's profiler writes elements * 2 and its simulator reads the
    column back as bytes (an earlier reading as fp16 elements doubled every message and fitted link
    efficiencies above 1). `tokens` holds the worker count.
    """
    samples = []
    root = vidur_dir(directory)
    for vidur_gpu in GPU_NAMES:
        path = root / "network" / f"{vidur_gpu}_dgx" / "all_reduce.csv"
        if not path.is_file():
            continue
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                workers = int(row["num_workers"])
                if workers < 2 or int(row["devices_per_node"]) != workers:
                    continue
                nbytes = float(row["size"])
                samples.append(Sample(SYSTEMS[vidur_gpu], "nccl", "all_reduce", workers, workers,
                                      float(row["time_stats.all_reduce.median"]) * 1e-3,
                                      comm_op("all_reduce", "all_reduce", nbytes, workers, 1)))
    return samples
