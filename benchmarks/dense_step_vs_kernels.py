"""A dense TensorRT-LLM serving row's decode step and prefill pass as whatif prices them, op by op, against
aiconfigurator's H100/B200 TensorRT-LLM kernel tables at the model's exact shapes.

    python benchmarks/dense_step_vs_kernels.py ROW_ID [--batch N] [--context C] [--root PATH]

For a dense (no MoE, no MLA) row of benchmarks/serving_reference.py: whatif's `estimate` of one decode step of `batch`
sequences (default: the row's concurrency) at `context` cached tokens (default ISL + OSL/2), and of one prefill pass of
the row's input length, each op's time over the layers next to the measured kernel at the same shape:
- GEMMs: gemm.parquet's TensorRT-LLM torch_flow rows (its `Linear.forward` on a bf16 input; fp8 includes the dynamic
  per-tensor quantize, which whatif swaps for the static scaling kernel: kernels.static_fp8_input_scale), the row's
  GEMM dtype, interpolated linearly in m between measured m and, where the model's n or k was not measured, linearly
  in that dimension between its measured neighbours;
- attention: attention.parquet's TensorRT-LLM rows, per-rank heads, the row's KV dtype, bf16 query (whatif prices a
  TensorRT-LLM context over an fp8 cache at the fp8 peak: the table's fp8-query rows are ~5-10% faster): decode at
  (batch, step = context - 1) interpolated in step; context at batch 1, isl = ISL;
- all-reduce: comm.parquet's TensorRT-LLM all-reduce at the op's bytes, interpolated in log-bytes;
the rest (norms, activation, residuals, head, sampling) at whatif's price ("-"). Nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from step_ops import decode_step, find_row, mid_run_context, prefill_pass, summed, trtllm_row_problem   # noqa: E402

REFERENCE = ROOT.parent / "shared" / "reference" / "aiconfigurator"
GPU_NAME = {"dgx-h100": "h100_sxm", "dgx-b200": "b200_sxm"}
GEMM_DTYPE = {"fp8": "fp8", "bf16": "bfloat16"}   # whatif's op dtype -> the table's (block-scaled fp8: no table)
KV_DTYPE = {"fp8": "fp8", "bf16": "bfloat16", None: "bfloat16"}


def interp(points: list[tuple[float, float]], x: float, log: bool = False) -> float | None:
    """y at x, linear between the two measured points around it (in log x when `log`); None outside the points."""
    pts = sorted(points)
    if not pts or x < pts[0][0] or x > pts[-1][0]:
        return None
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            if x1 == x0:
                return y0
            f = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0)) if log else (x - x0) / (x1 - x0)
            return y0 + f * (y1 - y0)
    return pts[0][1]


def gemm_us(table, m: float, n: int, k: int) -> float | None:
    """Measured GEMM microseconds at (m, n, k): linear in m, then in the missing one of n / k."""
    def at(n_, k_):
        s = table[(table.n == n_) & (table.k == k_)]
        return interp(list(zip(s.m, s.latency_ms * 1e3)), m)
    if ((table.n == n) & (table.k == k)).any():
        return at(n, k)
    if (table.n == n).any():
        return interp([(kk, at(n, kk)) for kk in sorted(set(table[table.n == n].k)) if at(n, kk) is not None], k)
    if (table.k == k).any():
        return interp([(nn, at(nn, k)) for nn in sorted(set(table[table.k == k].n)) if at(nn, k) is not None], n)
    return None


def tables(root: Path, gpu: str):
    import pandas as pd
    keep = lambda d: d[(d.gpu == gpu) & (d.framework == "trtllm")]   # noqa: E731
    g = keep(pd.read_parquet(root / "gemm.parquet"))
    a = keep(pd.read_parquet(root / "attention.parquet"))
    c = keep(pd.read_parquet(root / "comm.parquet"))
    g = g.groupby(["gemm_dtype", "m", "n", "k"], as_index=False).latency_ms.median()
    return g, a, c[c.op_name == "all_reduce"]


def measured_us(op, phase: str, t, row, batch: int, context: int) -> float | None:
    """The table's microseconds for one instance of whatif's op (None: no table for it)."""
    g, a, c = t
    s = op.shape
    if op.op_class.name == "GEMM" and getattr(s, "groups", 1.0) == 1.0 and not op.block_scaled:
        dt = GEMM_DTYPE.get(op.dtype)
        return gemm_us(g[g.gemm_dtype == dt], s.m, int(s.n), int(s.k)) if dt else None
    if op.name == "attention":
        tp = int(float(row["tp_size"]))
        heads, kv = row["_heads"] // tp, max(1, row["_kv_heads"] // tp)
        kvd = KV_DTYPE[row.get("_kv_dtype")]
        sel = a[(a.num_heads == heads) & (a.num_key_value_heads == kv) & (a.head_dim == row["_head_dim"])
                & (a.attn_dtype == "bfloat16")
                & (a.kv_cache_dtype == kvd)]
        if phase == "decode":   # (the median of a shape's rows: L2-resident and not)
            d = sel[(sel.phase == "decode") & (sel.batch_size == batch)].groupby("step").latency_ms.median()
            return interp(list(zip(d.index, d.values * 1e3)), context - 1)
        p = sel[(sel.phase == "prefill") & (sel.batch_size == 1)].groupby("isl").latency_ms.median()
        return interp(list(zip(p.index, p.values * 1e3)), int(float(row["isl"])))
    if op.name.endswith("allreduce"):   # the hidden state of the pass's tokens, bf16
        r = c[c.num_gpus == int(float(row["tp_size"]))]
        tokens = batch if phase == "decode" else int(float(row["isl"]))
        return interp(list(zip(r.bytes, r.latency_ms * 1e3)), tokens * row["_hidden"] * 2.0, log=True)
    return None


def compare(row: dict, batch: int, context: int, root: Path) -> str:
    import serving_reference as sr
    kw = sr.estimate_kwargs(row)
    from whatif.specs.models import load_model
    m = load_model(kw["model"])
    row = {**row, "_kv_dtype": kw.get("kv_dtype"), "_heads": m.num_heads, "_kv_heads": m.num_kv_heads,
           "_head_dim": m.head_dim, "_hidden": m.hidden_size}
    t = tables(root, GPU_NAME[kw["hardware"]])
    out = []
    for phase, step in (("decode", decode_step(row, batch, context)), ("prefill", prefill_pass(row))):
        head = (f"{phase}: {batch} sequences at {context} cached tokens" if phase == "decode"
                else f"prefill: one prompt of {row['isl']} tokens")
        out.append(f"{head}; whatif {step.time_s * 1e3:.2f} ms")
        w_sum = m_sum = 0.0
        for name, s in summed(step.op_times).items():
            each = s.total_s / s.count * 1e6
            meas = measured_us(s.op, phase, t, row, batch, context)
            w_sum += s.total_s * 1e3
            m_sum += (meas * s.count / 1e3) if meas is not None else s.total_s * 1e3
            ratio = f"x{each / meas:.3f}" if meas else "-"
            mtxt = f"{meas:9.2f}" if meas is not None else "        -"
            out.append(f"  {name:<22} x{s.count:<4} whatif {each:9.2f} us  table {mtxt} us  {ratio}")
        out.append(f"  sum over ops: whatif {w_sum:.2f} ms, tables (whatif where none) {m_sum:.2f} ms, "
                   f"x{w_sum / m_sum:.3f}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("id")
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--context", type=int, default=None)
    ap.add_argument("--root", type=Path, default=REFERENCE)
    args = ap.parse_args(argv)
    import serving_reference as sr
    row = find_row(args.id)
    if problem := trtllm_row_problem(args.id, row):
        print(problem, file=sys.stderr)
        return 2
    batch = args.batch or sr.concurrency(row)
    context = args.context or mid_run_context(row)
    ttft, tpot = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
    print(f"{args.id}: measured TTFT {ttft:.1f} ms, TPOT {tpot:.2f} ms")
    print(compare(row, batch, context, args.root))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
