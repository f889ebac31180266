"""benchmarks/ttft_residual.py: a closed loop's TTFT as the residual of its cycle (made-up rows and the committed
table)."""
import pytest

from tests.benchmark_module import load_benchmark

tr = load_benchmark("ttft_residual")


def _row(ttft: float, tpot: float, pttft: float, ptpot: float, osl: int = 513, n: int = 128, **over) -> dict:
    row = {"engine": "trtllm", "version": "1.0.0rc3", "system": "h100_sxm", "mode": "agg", "model": "org/m",
           "osl": str(osl), "concurrency": str(n), "measured_ttft_ms": str(ttft), "measured_tpot_ms": str(tpot),
           "predicted_ttft_ms": str(pttft), "predicted_tpot_ms": str(ptpot)}
    row.update(over)
    return row


def test_a_small_share_turns_a_few_percent_of_rate_into_a_multiple_of_ttft():
    # cycle 1,000 + 4,000 ms: TTFT is 20% of it; predicted cycle 12% shorter, TPOT 9% longer
    row = _row(1000.0, 4000.0 / 512, 0.0, 4000.0 * 1.09 / 512)
    cycle = 5000.0 / 1.12
    row["predicted_ttft_ms"] = str(cycle - 4000.0 * 1.09)
    parts = tr.residual_parts(row)
    assert parts["share"] == pytest.approx(0.2)
    assert parts["rate_ratio"] == pytest.approx(1.12)
    assert parts["in_service"] == pytest.approx(128 * 0.8)
    assert float(row["predicted_ttft_ms"]) / 1000.0 < 0.11   # ~x10 off from 12% and 9%
    assert tr.off_by(row, 3.0) and not tr.off_by(_row(1000.0, 8.0, 400.0, 8.0), 3.0)


def test_summary_groups_only_the_rows_off_by_the_factor():
    rows = [_row(1000.0, 8.0, 100.0, 8.0), _row(1000.0, 8.0, 900.0, 8.0), _row(900.0, 8.0, 100.0, 8.0, n=8)]
    table = tr.summary(rows, 3.0)
    assert [(g["group"].split()[-1], g["rows"]) for g in table] == [("N<64", 1), ("N>=64", 1)]
    assert table[1]["ttft_x"] == pytest.approx(10.0)


def test_the_committed_tables_off_rows_are_mostly_a_small_share_of_their_cycle():
    rows = tr.scored()
    off = [r for r in rows if tr.off_by(r)]
    assert off, "no row off by 3x: this diagnostic has nothing left to read"
    small = [r for r in off if tr.residual_parts(r)["share"] < 0.3]
    assert len(small) >= 0.6 * len(off)
