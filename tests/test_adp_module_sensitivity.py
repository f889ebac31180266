"""benchmarks/adp_module_sensitivity.py: the factor reaches only NVFP4 o_proj modules, by their heads."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import adp_module_sensitivity as ams  # noqa: E402


def test_only_an_nvfp4_o_proj_module_is_scaled_by_its_heads_factor():
    factor = {16: 1.1, 128: 1.3}.get
    assert ams.scaled_module_seconds(1e-4, 128, "nvfp4", factor) == pytest.approx(1.3e-4)
    assert ams.scaled_module_seconds(1e-4, 16, "nvfp4", factor) == pytest.approx(1.1e-4)
    assert ams.scaled_module_seconds(1e-4, 128, "fp8-block", factor) == 1e-4
    assert ams.scaled_module_seconds(1e-4, 128, "", factor) == 1e-4
    assert ams.scaled_module_seconds(None, 128, "nvfp4", factor) is None


@pytest.mark.skipif(not ams.TABLE.exists(), reason="needs the shared B200 TensorRT-LLM MLA module table")
def test_the_table_factor_is_one_where_the_table_has_no_rows_and_grows_to_128_heads():
    assert ams.table_over_fit(3) == 1.0
    assert ams.table_over_fit(128) > ams.table_over_fit(16) > 1.0
