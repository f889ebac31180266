"""benchmarks/first_wave_tail.py: the statistics benchmark_serving.py reports (mean, median, numpy's population std,
p99) and the first wave's share of the mean, read from a list of per-request TTFTs; the public runs quoted are the
published ones (docs/accuracy.md, "Session 73 A")."""
import re

import numpy as np
import pytest

from tests.benchmark_module import load_benchmark

fwt = load_benchmark("first_wave_tail")


def test_a_slow_first_wave_lifts_the_mean_over_the_median_by_its_share():
    ttft = [250.0] * 8 + [70.0] * 72          # 10 rounds of 8 clients, the opening burst slow
    s = fwt.ttft_stats(ttft, 8)
    assert s["median"] == 70.0 and s["mean"] == pytest.approx(88.0)
    assert s["first_wave"] == 250.0 and s["rest"] == 70.0
    assert s["first_wave_share"] == pytest.approx((250 - 70) * 8 / 80 / 88.0)
    assert s["std"] == pytest.approx(float(np.std(ttft))) and s["p99"] == pytest.approx(250.0)


def test_a_flat_run_has_no_first_wave_share_and_bad_client_counts_are_refused():
    assert fwt.ttft_stats([60.0] * 40, 4)["first_wave_share"] == 0.0
    with pytest.raises(ValueError, match="clients"):
        fwt.ttft_stats([60.0] * 4, 4)


def test_the_quoted_public_runs_are_ordered_and_name_a_row_of_their_recipe():
    for run in fwt.PUBLIC_RUNS:
        assert run.median <= run.mean <= run.p99 and run.std > 0
        clients = re.search(r"_c(\d+)_", run.row_id)[1]
        assert run.row_id.startswith("dsr1_b200_trtllm_") and f" c{clients}," in run.note
