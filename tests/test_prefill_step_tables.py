"""benchmarks/prefill_step_tables.py: a disaggregated row's full prefill step against the B200 kernel tables."""
from pathlib import Path

import pytest

from tests.benchmark_module import load_benchmark

pst = load_benchmark("prefill_step_tables")
AIC = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator"
tables = pytest.mark.skipif(not AIC.is_dir(), reason="shared kernel tables not present")


def test_the_experts_see_every_prompt_of_the_step():
    # eight 7,373-token prompts, one a rank under attention DP, are gathered to every expert rank
    assert pst.step_tokens(8, 7373) == 58984
    assert pst.step_tokens(1, 7373) == 7373


@tables
def test_the_moe_table_at_its_last_row_and_beyond():
    lo, hi = pst.moe_table_ms(AIC, 16384, 8, 1, "fp8_block")
    assert 2.3 < lo <= hi < 2.5   # MoE-TP8, fp8 block scales: the table's 16,384-token rows
    lo2, hi2 = pst.moe_table_ms(AIC, 32768, 8, 1, "fp8_block")
    assert 1.9 < lo2 / lo < 2.1   # compute-bound: twice the tokens, about twice the time


@tables
def test_the_collectives_by_engine_under_attention_dp():
    ag = pst.nccl_ms(AIC, "all_gather", 8, 2 ** 29)
    assert 0.7 < ag < 0.8   # NCCL's 512 MiB all-gather over 8 B200s
    tokens = 58984
    both = pst.nccl_ms(AIC, "all_gather", 8, tokens * pst.HIDDEN * 2) + pst.nccl_ms(
        AIC, "reduce_scatter", 8, tokens * pst.HIDDEN * 2)
    assert pst.comm_table_ms(AIC, "trtllm", 8, 8, tokens) == pytest.approx(both)
    assert pst.comm_table_ms(AIC, "sglang", 8, 8, tokens) == pytest.approx(
        2 * pst.nccl_ms(AIC, "all_reduce", 8, tokens * pst.HIDDEN * 2))
