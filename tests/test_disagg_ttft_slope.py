"""benchmarks/disagg_ttft_slope.py: one deployment's TTFT against its clients as a line, measured and predicted."""
import csv

import pytest

from tests.benchmark_module import load_benchmark

slope = load_benchmark("disagg_ttft_slope")


def _row(n, meas, pred, cfg="cfg1", isl=1024, mode="disagg", scored="1"):
    return {"id": f"dsr1_b200_trtllm_fp4_disagg_{isl}x1024_c{n}_{cfg}", "concurrency": str(n), "mode": mode,
            "scored": scored, "measured_ttft_ms": str(meas), "predicted_ttft_ms": str(pred)}


def test_the_group_is_the_id_less_its_client_count():
    assert slope.group_key("dsr1_b200_sglang_fp8_disagg_8192x1024_c64_cfg455") == \
        "dsr1_b200_sglang_fp8_disagg_8192x1024_cfg455"
    assert slope.group_key("qwen3_disagg_15000x500_c480_tp_epnone_1") == "qwen3_disagg_15000x500_tp_epnone_1"
    assert slope.group_key("a_c1024x8_c4") == "a_c1024x8"   # (only a `_c<digits>` field, not a longer word)


def test_a_line_through_exact_points_and_the_miss_split_into_intercept_and_slope():
    assert slope.fit_line([1, 2, 3], [5, 7, 9]) == pytest.approx((3.0, 2.0))
    with pytest.raises(ValueError, match="two distinct client counts"):
        slope.fit_line([4, 4], [1, 2])
    # measured 100 + 2N, predicted 50 + N: at N 40 the 90 ms miss is 50 of intercept and 40 of slope
    pts = slope.groups([_row(10, 120, 60), _row(40, 180, 90), _row(40, 180, 90), _row(20, 140, 70)])
    (key, points), = pts.items()
    assert [p[0] for p in points] == [10.0, 20.0, 40.0]
    t = slope.slope_terms(points)
    assert (t["a_meas"], t["b_meas"], t["a_pred"], t["b_pred"]) == pytest.approx((100, 2, 50, 1))
    assert (t["excess_intercept"], t["excess_slope"]) == pytest.approx((50, 40))


def test_groups_keep_the_light_rows_and_need_two_client_counts():
    rows = [_row(10, 120, 60), _row(40, 180, 90), _row(500, 900, 400), _row(4, 1, 1, cfg="cfg2")]
    assert [p[0] for p in slope.groups(rows, max_clients=100)["dsr1_b200_trtllm_fp4_disagg_1024x1024_cfg1"]] == \
        [10.0, 40.0]
    assert "dsr1_b200_trtllm_fp4_disagg_1024x1024_cfg2" not in slope.groups(rows)
    assert slope.groups(rows, max_clients=10) == {}


def test_only_scored_disaggregated_rows_are_read(tmp_path):
    rows = [_row(10, 120, 60), _row(40, 180, 90, mode="agg"), _row(20, 1, 1, scored="0")]
    path = tmp_path / "t.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert [r["concurrency"] for r in slope.scored_disagg(path)] == ["10"]


def test_the_committed_table_reads_and_bad_flags_are_one_line(capsys, tmp_path):
    assert slope.main(["--max-clients", "100"]) == 0
    assert "dsr1_b200_trtllm_fp4_disagg_1024x1024_cfg320" in capsys.readouterr().out
    assert slope.main(["--table", str(tmp_path / "none.csv")]) == 2
    assert slope.main(["--min-points", "1"]) == 2
    err = capsys.readouterr().err
    assert "--table: no file" in err and "--min-points: at least 2" in err
