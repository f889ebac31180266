"""benchmarks/prefill_family_need.py: the factor an op family would need to absorb a row's TTFT miss."""
from pathlib import Path

import pytest

from tests.benchmark_module import load_benchmark

pfn = load_benchmark("prefill_family_need")
AIC = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator"
tables = pytest.mark.skipif(not AIC.is_dir(), reason="shared kernel tables not present")


def test_the_need_factor_is_the_family_plus_the_miss_over_the_family():
    assert pfn.need_factor(50.0, 100.0) == pytest.approx(3.0)
    assert pfn.need_factor(50.0, -25.0) == pytest.approx(0.5)   # an over-priced row needs the family cheaper
    assert pfn.need_factor(0.0, 10.0) is None                    # nothing priced: no factor


def test_tp_attention_scatters_a_prompt_and_dp_attention_keeps_it():
    assert pfn.tokens_a_rank({"tp": 8}, 8192) == 1024
    assert pfn.tokens_a_rank({"tp": 8, "attention_dp": 8}, 8192) == 8192


def test_the_committed_miss_is_measured_less_predicted():
    miss = pfn.committed_miss_ms("dsr1_b200_sglang_fp8_agg_8192x1024_c4_cfg199")
    assert miss == pytest.approx(686.385 - 252.835, abs=0.5)   # the committed row since session 73 (254.401 before)
    assert pfn.committed_miss_ms("no such row") is None


@tables
def test_deepep_normal_at_8k_deepseek_tokens_is_priced_by_its_table():
    # 8,192 tokens a rank, hidden 7168, top-8 of 256, 24 SMs: dispatch + combine 2.23 ms measured (0.83 + 1.40)
    measured, fit = pfn.deepep_normal_ms(AIC, 8192, 7168, 8, 256)
    assert 2.0 < measured < 2.5
    assert 0.85 < fit / measured < 1.2   # the shipped fit reads x1.13 here (session 69 L)
    assert pfn.deepep_normal_ms(AIC, 8191, 7168, 8, 256) is None   # off the table's grid
