"""A serving row's decode step or prefill pass as `estimate` prices it, and a pass's op times summed under a label.

The one copy the op-by-op diagnostics share (decode_step_ops.py, prefill_vs_kernels.py, qwen35_decode_ops.py, and
moe_step_implied.py through decode_step_ops). Nothing here feeds a prediction.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class OpSum:
    """The ops under one label: their instances, their total seconds and the last one seen (for its shape)."""
    count: int = 0
    total_s: float = 0.0
    op: object = None


def summed(op_times, label=lambda name: name) -> dict[str, OpSum]:
    """{label(op name): OpSum} over a pass's priced ops, in first-seen order (each layer group's ops of a name join)."""
    out: dict[str, OpSum] = {}
    for t in op_times:
        s = out.setdefault(label(t.op.name), OpSum())
        s.count += t.op.count
        s.total_s += t.total_s
        s.op = t.op
    return out


def find_row(row_id: str) -> dict | None:
    """The serving file's row `row_id` (benchmarks/serving_reference.py's load), or None."""
    import serving_reference as sr
    return next((r for r in sr.load() if r["id"] == row_id), None)


def trtllm_row_problem(row_id: str, row: dict | None) -> str:
    """'' for a TensorRT-LLM row of the file, else the one-line error the op-by-op scripts print."""
    if row is None:
        return f"id: unknown row {row_id!r}"
    if row.get("backend") != "trtllm":
        return f"id: {row_id!r} is not a TensorRT-LLM row (backend {row.get('backend')!r})"
    return ""


def mid_run_context(row: dict) -> int:
    """Cached tokens of a mid-run decode step of the row: its input plus half its output."""
    return int(float(row["isl"])) + int(float(row["osl"])) // 2


def row_estimate(row: dict, **override):
    """`estimate` of the row as benchmarks/serving_reference.py's mapping gives it (`override` replacing arguments)."""
    import serving_reference as sr
    from whatif.api import estimate
    return estimate(with_max_batch=False, **{**sr.estimate_kwargs(row), **override}).estimate


def decode_step(row: dict, batch: int, context: int):
    """The row's decode step of `batch` sequences at `context` cached tokens."""
    return row_estimate(row, batch=batch, prompt=context, output=2).decode


def prefill_pass(row: dict):
    """The row's prefill pass of one prompt of its input length."""
    return row_estimate(row, batch=1).prefill[0][0]
