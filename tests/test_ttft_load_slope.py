"""benchmarks/ttft_load_slope.py: the per-deployment line, the 1k/1k-1k/8k pairing and the copies kept once read what
made-up rows carry (docs/accuracy.md, "Session 71 G")."""
import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

tls = load_benchmark("ttft_load_slope")


def _row(n, meas, pred, osl=1024, tpot=10.0, model="x/M", **kw):
    base = dict(engine="sglang", system="b200_sxm", model=model, version="0.5.9", tp=8, ep=1, attention_dp=1,
                gemm_quant="fp8", moe_quant="fp8", isl=1024, osl=osl, concurrency=n, mode="agg", scored=1,
                measured_ttft_ms=meas, predicted_ttft_ms=pred, measured_tpot_ms=tpot, predicted_tpot_ms=tpot)
    return {**base, **kw}


def test_line_recovers_intercept_and_slope():
    a, b = tls.line([16, 32, 64], [116.0, 132.0, 164.0])
    assert a == pytest.approx(100.0) and b == pytest.approx(1.0)


def test_slopes_reads_a_slope_miss_and_its_share_of_the_top_gap():
    # measured 200 + 4 N, predicted 100 + 2 N: slope x0.5, intercept x0.5; at N = 64 the gap is 100 + 128,
    # of which the slope makes 128
    table = pd.DataFrame([_row(n, 200 + 4 * n, 100 + 2 * n) for n in (16, 32, 64)])
    fits = tls.slopes(tls.measurements(table, "engine=='sglang'"), 16, 64)
    assert len(fits) == 1
    f = fits.iloc[0]
    assert f.slope_x == pytest.approx(0.5) and f.intercept_x == pytest.approx(0.5)
    assert f.slope_share == pytest.approx(128 / 228)


def test_slopes_needs_three_client_counts_inside_the_range():
    table = pd.DataFrame([_row(n, 200 + 4 * n, 100 + 2 * n) for n in (8, 16, 64)])
    assert tls.slopes(tls.measurements(table, "engine=='sglang'"), 16, 64).empty


def test_a_measurement_copied_under_another_model_name_counts_once():
    rows = [_row(16, 300.0, 200.0), _row(16, 300.0, 200.0, model="x/M-copy")]
    assert len(tls.measurements(pd.DataFrame(rows), "engine=='sglang'")) == 1


def test_pairs_joins_1k1k_with_1k8k_at_the_same_n_and_reads_the_gap_in_decode_steps():
    rows = [_row(16, 300.0, 200.0, tpot=10.0), _row(16, 320.0, 200.0, osl=8192, tpot=12.0),
            _row(32, 400.0, 300.0)]   # no 1k/8k partner at 32: left out
    both = tls.pairs(tls.measurements(pd.DataFrame(rows), "engine=='sglang'"))
    assert list(both.concurrency) == [16]
    assert both.gap_1k1k.iloc[0] == pytest.approx(100.0) and both.gap_1k8k.iloc[0] == pytest.approx(120.0)
    assert both.gap_steps_1k1k.iloc[0] == pytest.approx(10.0)
    assert both.rate_1k1k.iloc[0] > 5 * both.rate_1k8k.iloc[0]   # the closed loop's rate follows the output length


def test_main_refuses_a_bad_range_and_an_empty_selection(tmp_path, capsys):
    table = tmp_path / "t.csv"
    pd.DataFrame([_row(n, 200 + 4 * n, 100 + 2 * n) for n in (16, 32, 64)]).to_csv(table, index=False)
    with pytest.raises(SystemExit):
        tls.main(["--table", str(table), "--min-clients", "64", "--max-clients", "16"])
    assert tls.main(["--table", str(table), "--query", "engine=='vllm'"]) == 1
    assert "no scored rows" in capsys.readouterr().out
    assert tls.main(["--table", str(table), "--rows"]) == 0
