"""benchmarks/prefill_hold_from_tpot.py: the per-prompt hold read off two output lengths' TPOT shortfall, and the
pairing of one deployment's rows."""
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import prefill_hold_from_tpot as ph  # noqa: E402


def test_hold_inverts_the_tpot_shortfall():
    # a 100 ms hold a prompt at 4 clients: +0.390625 ms TPOT at 1,024 outputs, +0.048828 at 8,192
    short, long = 100 * 4 / 1024, 100 * 4 / 8192
    assert ph.hold_ms(short, long, 4, 1024, 8192) == pytest.approx(100.0)
    assert ph.hold_ms(0.5, 0.5, 4, 1024, 8192) == pytest.approx(0.0)    # the decode step's own shortfall cancels


def _row(osl, d_tpot, d_ttft, n=4, model="m"):
    return {"engine": "sglang", "version": "0.5.9", "model": model, "system": "b200_sxm", "mode": "agg", "tp": 8,
            "pp": 1, "attention_dp": 1, "ep": 1, "gemm_quant": "fp8", "moe_quant": "fp8_block", "concurrency": n,
            "isl": 1024, "osl": osl, "measured_tpot_ms": 10 + d_tpot, "predicted_tpot_ms": 10.0,
            "measured_ttft_ms": 200.0, "predicted_ttft_ms": 200.0 - d_ttft}


def test_pairs_and_summary_read_one_deployment_at_two_lengths():
    hold = 80.0
    table = pd.DataFrame([_row(1024, 0.3 + hold * 4 / 1024, 120), _row(8192, 0.3 + hold * 4 / 8192, 90),
                          _row(1024, 0.2, 10, model="alone")])     # no second length: no pair
    got = ph.pairs(table)
    assert len(got) == 1 and got[0][1].osl == 1024 and got[0][2].osl == 8192
    (band, n, h, gap), = ph.summary(table)
    assert band == "1-8" and n == 1 and h == pytest.approx(hold) and gap == pytest.approx(120)


def test_long_prompt_hold_inverts_the_cross_pair():
    # 8 clients: a 400 ms hold an 8k prompt, 100 ms a 1k prompt, the decode step short by 0.5 ms in both rows
    n, h_long, h_short = 8, 400.0, 100.0
    d_long_prompt = n * h_long / 1024 + 0.5      # 8192/1024 row
    d_short_prompt = n * h_short / 8192 + 0.5    # 1024/8192 row
    assert ph.long_prompt_hold_ms(d_long_prompt, d_short_prompt, n, 1024, 8192, h_short) == pytest.approx(h_long)


def test_by_prompt_pairs_a_long_prompt_with_the_short_prompts_two_lengths():
    n, h_long, h_short, d = 8, 400.0, 100.0, 0.5
    rows = [_row(1024, d + n * h_short / 1024, 0, n=n), _row(8192, d + n * h_short / 8192, 0, n=n),
            {**_row(1024, d + n * h_long / 1024, 0, n=n), "isl": 8192},
            {**_row(1024, 3.0, 0, n=n, model="other"), "isl": 8192}]   # no short-prompt pair: skipped
    (key, got_short, got_long), = ph.by_prompt(pd.DataFrame(rows))
    assert key["isl"] == 8192 and key["model"] == "m"
    assert got_short == pytest.approx(h_short) and got_long == pytest.approx(h_long)
