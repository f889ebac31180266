"""benchmarks/prefill_pool_rate.py: a disaggregated row's served rate (Little's law) and its prefill step's packing."""
import pytest

from tests.benchmark_module import load_benchmark

rate = load_benchmark("prefill_pool_rate")


def test_the_served_rate_is_clients_over_the_cycle():
    # 128 clients, TTFT 1 s, 921.6 - 1 outputs at 10 ms: cycle 10.206 s -> 12.54 requests/s
    assert rate.served_per_s(128, 1_000.0, 10.0, 921.6) == pytest.approx(128 / 10.206)
    assert rate.served_per_s(128, 0.0, 10.0, 1.0) == 0.0


def test_sglang_splits_the_worker_limits_over_its_attention_dp_ranks():
    # srt-slurm's fp8 8k recipe: --max-running-requests 8, --chunked-prefill-size 65536 on 8 ranks -> one prompt each
    assert rate.prompts_per_step(8, 8, 65536, 7373, group_limits=True) == 8
    # the NVFP4 1k recipe: 1,024 and 32,768 on 4 ranks -> 8,192 tokens a rank, 8 prompts of 922 tokens each
    assert rate.prompts_per_step(4, 1024, 32768, 922, group_limits=True) == 32


def test_tensorrt_llm_limits_are_each_ranks_own():
    # ctx max_batch_size 1, max_num_tokens 8,320 per rank, 8 ranks -> 8 prompts; the same limits as SGLang's -> 1
    assert rate.prompts_per_step(8, 1, 8320, 7373, group_limits=False) == 8
    assert rate.prompts_per_step(8, 8, 8320, 7373, group_limits=True) == 8
    assert rate.prompts_per_step(1, 8, 8320, 7373, group_limits=True) == 1


def test_a_prompt_longer_than_the_budget_still_takes_one_slot():
    assert rate.prompts_per_step(1, 4, 2048, 8192, group_limits=False) == 1


def test_expert_skew_prices_only_expert_parallel_layouts():
    # whatif rejects --expert-skew without EP, so a MoE-TP prefill pool keeps its uniform price
    assert rate.skew_kwargs(8, 1.0) == {"expert_skew": 1.0}
    assert rate.skew_kwargs(1, 1.0) == {}
    assert rate.skew_kwargs(8, 0.0) == {}


def test_the_waiting_clients_are_those_not_decoding():
    # 512 clients, TTFT 7.8 s, 921.6 - 1 outputs at 24.5 ms: cycle 30.35 s, 16.87 requests/s, 131.6 wait
    assert rate.waiting_clients(512, 7_800.0, 24.5, 921.6) == pytest.approx(512 * 7.8 / (7.8 + 920.6 * 0.0245))
    assert rate.waiting_clients(64, 0.0, 10.0, 100.0) == pytest.approx(0.0)


def test_the_step_factor_a_saturated_pool_needs():
    # 32 prompts a 270 ms step serve 118.5 a second; a pool serving 16.9 needs that step 7.0x as long
    assert rate.step_factor_needed(32, 16.9, 0.270) == pytest.approx(32 / 16.9 / 0.270)
    assert rate.step_factor_needed(1, 2.0, 0.5) == pytest.approx(1.0)   # exactly saturated at whatif's price
    assert rate.step_factor_needed(8, 0.0, 0.9) == float("inf")
