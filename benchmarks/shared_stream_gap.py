"""Each serving row's TPOT shortfall beside the time whatif hides under the shared expert's second stream
(roofline/shared_expert_stream.py): measured - predicted TPOT of the committed table, and the row's decode step's op
sum minus its step time (docs/accuracy.md, "Session 62 J"). Nothing here feeds a prediction.

    python benchmarks/shared_stream_gap.py "pandas query on benchmarks/data/serving_reference.csv"
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from step_ops import decode_step, mid_run_context   # noqa: E402


def hidden_ms(step) -> float:
    """Milliseconds of the step's op sum that its overlaps hide (op times summed minus the step's time)."""
    return (sum(t.total_s for t in step.op_times) - step.time_s) * 1e3


def main(argv=None) -> int:
    import pandas as pd

    import serving_reference as sr
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: shared_stream_gap.py QUERY", file=sys.stderr)
        return 2
    table = pd.read_csv(ROOT / "benchmarks" / "data" / "serving_reference.csv")
    picked = table.query(argv[0])
    picked = picked[picked.predicted_tpot_ms.notna()]
    rows = {r["id"]: r for r in sr.load()}
    print("id | gemm | tp/ep/adp | isl/osl | clients | measured - predicted TPOT ms | hidden by overlap ms")
    for _, x in picked.iterrows():
        row = rows[x.id]
        step = decode_step(row, sr.concurrency(row), mid_run_context(row))
        print(f"{x.id} | {x.gemm_quant} | {x.tp}/{x.ep}/{x.attention_dp} | {x.isl}/{x.osl} | {x.concurrency:.0f} | "
              f"{x.measured_tpot_ms - x.predicted_tpot_ms:.2f} | {hidden_ms(step):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
