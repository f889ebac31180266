"""A MoE TensorRT-LLM serving row's decode step op by op against aiconfigurator's H100/B200 TensorRT-LLM kernel tables,
the experts against moe.parquet's fused MoE at the model's shape (docs/accuracy.md, Session 73 G).

    python benchmarks/moe_step_vs_kernels.py ROW_ID [--batch N ...] [--context C] [--prefill] [--root PATH]

dense_step_vs_kernels.py's comparison (attention, all-reduce, 16-bit / per-tensor fp8 GEMMs at their tables) plus:
- experts: whatif's ops of the fused MoE call (router top-k, the per-token-group quantizes, gate/up, activation, down:
  what TensorRT-LLM's `moe.forward(hidden_states, logits, do_finalize=True)` times, roofline/moe_kernels.py
  FUSED_LAYER_ROLES) summed, against moe.parquet's TensorRT-LLM rows of the row's expert format (fp8_block: the
  CUTLASS fused MoE, kernel_source moe_torch_flow_cutlass), hidden / intermediate / experts / top-k of the model,
  the row's moe_tp / moe_ep, num_tokens = the step's tokens (the table's count is the whole batch before dispatch),
  each routing distribution (balanced, power_law_1.01, power_law_1.2), linear in num_tokens (a prefill pass: the
  prompt's tokens);
- 128x128 block-scaled dense GEMMs (no table: gemm.parquet dropped them, timed eagerly) against the per-tensor fp8 rows
  at the same shape, marked "pt": a stand-in, not the kernel (those rows include the dynamic per-tensor quantize).
Nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from dense_step_vs_kernels import GPU_NAME, REFERENCE, gemm_us, interp, measured_us, tables   # noqa: E402
from step_ops import decode_step, find_row, mid_run_context, prefill_pass, summed, trtllm_row_problem   # noqa: E402

DISTRIBUTIONS = ("balanced", "power_law_1.01", "power_law_1.2")
# whatif's expert format -> moe.parquet's moe_dtype (TensorRT-LLM's H100 rows: bfloat16, fp8, fp8_block)
MOE_DTYPE = {"fp8-block": "fp8_block", "fp8": "fp8", None: "bfloat16"}


def fused_moe_role(op) -> bool:
    """Whether whatif's op is inside the fused MoE call the table times (its group quantizes ride `part_of`)."""
    from whatif.roofline.moe_kernels import FUSED_LAYER_ROLES
    from whatif.specs.op_kinds import OpRole
    inside = FUSED_LAYER_ROLES | {OpRole.EXPERT_UP, OpRole.EXPERT_DOWN}
    return op.role in inside or op.part_of in inside


def moe_rows(root: Path, gpu: str, dtype: str, m, layout: dict):
    """moe.parquet's TensorRT-LLM rows of the model's expert shape and the row's expert layout."""
    import pandas as pd
    d = pd.read_parquet(root / "moe.parquet")
    return d[(d.gpu == gpu) & (d.framework == "trtllm") & (d.moe_dtype == dtype)
             & (d.hidden_size == m.hidden_size) & (d.inter_size == m.moe.expert_intermediate_size)
             & (d.num_experts == m.moe.num_experts) & (d.topk == m.moe.experts_per_token)
             & (d.moe_tp_size == layout["moe_tp"]) & (d.moe_ep_size == layout["moe_ep"])]


def moe_table_us(rows, tokens: int) -> dict[str, float | None]:
    """{distribution: the table's fused-MoE microseconds at `tokens`}."""
    out = {}
    for dist in DISTRIBUTIONS:
        s = rows[rows.distribution == dist].groupby("num_tokens").latency_ms.median()
        out[dist] = interp(list(zip(s.index, s.values * 1e3)), tokens)
    return out


def block_gemm_standin_us(op, t) -> float | None:
    """The per-tensor fp8 GEMM table at a block-scaled dense GEMM's shape (a stand-in: no block table)."""
    s = op.shape
    if op.op_class.name != "GEMM" or getattr(s, "groups", 1.0) != 1.0 or not op.block_scaled:
        return None
    g = t[0]
    return gemm_us(g[g.gemm_dtype == "fp8"], s.m, int(s.n), int(s.k))


def compare(row: dict, batch: int, context: int, root: Path, phase: str = "decode") -> str:
    import serving_reference as sr
    from whatif.specs.models import load_model
    kw = sr.estimate_kwargs(row)
    m = load_model(kw["model"])
    if m.moe is None:
        raise SystemExit(f"id: {row['id']!r} is not a MoE model; use dense_step_vs_kernels.py")
    tp, ep = int(kw.get("tp", 1)), int(kw.get("ep", 1) or 1)
    layout = {"moe_ep": ep, "moe_tp": max(1, tp // ep)}
    row = {**row, "_kv_dtype": kw.get("kv_dtype"), "_heads": m.num_heads, "_kv_heads": m.num_kv_heads,
           "_head_dim": m.head_dim, "_hidden": m.hidden_size}
    gpu = GPU_NAME[kw["hardware"]]
    t = tables(root, gpu)
    mrows = moe_rows(root, gpu, MOE_DTYPE.get(kw.get("quantization")), m, layout)
    if phase == "decode":
        step, tokens = decode_step(row, batch, context), batch
        head = f"decode: {batch} sequences at {context} cached tokens"
    else:
        step, tokens = prefill_pass(row), int(float(row["isl"]))
        head = f"prefill: one prompt of {tokens} tokens"
    out = [f"{head}; whatif {step.time_s * 1e3:.2f} ms (TP {tp}, moe_tp {layout['moe_tp']}, moe_ep {ep}, "
           f"{len(mrows)} table rows of the experts)"]
    w_sum = m_sum = moe_w = 0.0
    moe_n = 0
    for name, s in summed(step.op_times).items():
        each = s.total_s / s.count * 1e6
        w_sum += s.total_s * 1e3
        if fused_moe_role(s.op):
            moe_w += s.total_s * 1e6
            moe_n = max(moe_n, s.count)
            continue
        meas, tag = measured_us(s.op, phase, t, row, batch, context), ""
        if meas is None:
            meas, tag = block_gemm_standin_us(s.op, t), "pt"
        m_sum += (meas * s.count / 1e3) if meas is not None else s.total_s * 1e3
        mtxt = f"{meas:9.2f}" if meas is not None else "        -"
        ratio = f"x{each / meas:.3f} {tag}" if meas else "-"
        out.append(f"  {name:<28} x{s.count:<4} whatif {each:9.2f} us  table {mtxt} us  {ratio}")
    per_layer = moe_w / moe_n
    tab = moe_table_us(mrows, tokens)
    cells = "  ".join(f"{d} {v:.1f}" if v is not None else f"{d} -" for d, v in tab.items())
    out.append(f"  {'experts (fused call)':<28} x{moe_n:<4} whatif {per_layer:9.2f} us  table {cells} us")
    low = min((v for v in tab.values() if v is not None), default=None)
    m_sum += (low if low is not None else per_layer) * moe_n / 1e3
    out.append(f"  sum over ops: whatif {w_sum:.2f} ms, tables (experts at the lowest routing; whatif where none) "
               f"{m_sum:.2f} ms, x{w_sum / m_sum:.3f}; pass - ops {step.time_s * 1e3 - w_sum:.2f} ms "
               f"(launch gaps; eager host where it binds)")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("id")
    ap.add_argument("--batch", type=int, nargs="+", default=None)
    ap.add_argument("--context", type=int, default=None)
    ap.add_argument("--root", type=Path, default=REFERENCE)
    ap.add_argument("--prefill", action="store_true", help="also one prefill pass of the row's input length")
    args = ap.parse_args(argv)
    import serving_reference as sr
    row = find_row(args.id)
    if problem := trtllm_row_problem(args.id, row):
        print(problem, file=sys.stderr)
        return 2
    context = args.context or mid_run_context(row)
    ttft, tpot = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
    print(f"{args.id}: measured TTFT {ttft:.1f} ms, TPOT {tpot:.2f} ms")
    for batch in args.batch or [sr.concurrency(row)]:
        print(compare(row, batch, context, args.root))
    if args.prefill:
        print(compare(row, 1, context, args.root, phase="prefill"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
