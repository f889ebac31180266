"""A serving row's decode step as whatif prices it, op by op (the estimate's per-op breakdown), for a comparison
with aiconfigurator's kernel tables (docs/accuracy.md, "Which part of an EP MoE decode step is priced high").

    python benchmarks/decode_step_ops.py ROW_ID [--batch N] [--context C]

The row's layout, precision and engine as benchmarks/serving_reference.py's mapping gives them; one decode step of
`batch` sequences (default: the row's concurrency) over `context` cached tokens (default: ISL + OSL/2, a mid-run
step). Nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# (decode_step: moe_step_implied.py imports it from here)
from step_ops import decode_step, find_row, mid_run_context, summed   # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("id")
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--context", type=int, default=None)
    args = ap.parse_args(argv)
    import serving_reference as sr
    row = find_row(args.id)
    if row is None:
        print(f"unknown row id {args.id!r}", file=sys.stderr)
        return 2
    batch = args.batch or sr.concurrency(row)
    context = args.context or mid_run_context(row)
    step = decode_step(row, batch, context)
    print(f"{args.id}: {batch} sequences at {context} cached tokens; decode step {step.time_s * 1e3:.2f} ms; "
          f"measured TPOT {float(row['silicon_tpot_ms']):.2f} ms")
    for name, s in summed(step.op_times).items():   # one line per op name (dense layers' ops join the MoE layers')
        print(f"  {name:<30} x{s.count:<4} {s.total_s / s.count * 1e6:8.2f} us each {s.total_s * 1e3:8.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
