"""validate/modern_fit.floor_share_table: how much of a leave-one-GPU-out miss is the fit's fixed cost."""
import pytest

from whatif.validate import modern_fit as mf
from whatif.validate import modern_rows as mr


@pytest.fixture(scope="module")
def quantize_cells():
    rows = mr.all_rows(mr.COMPACT_DIR, ["quantize__scale_matrix_perf"])
    return mf.floor_share_table(rows[rows["engine"] == "trtllm"])


def test_trtllm_quantize_scale_h100_miss_is_its_floor(quantize_cells):
    """TensorRT-LLM's static quantizer floors at ~1.4 us a call on H100, ~1.9 on B200 and ~2.7 on L40S (the tables'
    smallest rows): the B200 + L40S fit's floor over-prices every small H100 row; H100's own floor removes the miss."""
    cell = quantize_cells.loc[("quantize_scale", "trtllm", "h100_sxm")]
    assert cell["loo"] > 30.0
    assert cell["loo_own_floor"] < cell["loo"] / 3.0
    assert cell["floor_us_own"] < cell["floor_us_loo"]
    assert cell["in"] < 10.0   # the form fits H100 itself: only the floor does not transfer


def test_min_loo_keeps_only_the_cells_that_miss(quantize_cells):
    rows = mr.all_rows(mr.COMPACT_DIR, ["quantize__scale_matrix_perf"])
    missing = mf.floor_share_table(rows[rows["engine"] == "trtllm"], min_loo=15.0)
    assert set(missing.index) == set(quantize_cells.index[quantize_cells["loo"] >= 15.0])
    assert ("quantize_scale", "trtllm", "b200_sxm") not in missing.index   # B200 transfers (8%)
