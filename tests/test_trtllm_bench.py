"""trtllm-bench's dataset-derived limits (whatif/validate/trtllm_bench.py), checked against the rounding rule
worked by hand and against the KV arithmetic of one published setup."""
import pytest

from whatif.specs.hardware import load_system
from whatif.specs.models import load_model
from whatif.validate.trtllm_bench import bench_limits, kv_requests, rounded_limits, unchunked_tokens


@pytest.mark.parametrize("requests, isl, osl, expected", [
    (516.0, 128, 2048, (640, 2048)),     # 516 -> 128s: 640; 516 * (1 + 1/16) = 548 tokens -> at least 2048
    (4388.0, 128, 128, (4096, 8192)),    # capped at 4096 requests; 8192 tokens -> 1024s
    (40.0, 20000, 2000, (64, 2048)),     # at least 64; 440 tokens -> at least 2048
    (186.0, 5000, 500, (192, 2048)),     # 186 -> 32s: 192; 2046 tokens -> 256s: 2048
    (300.0, 2048, 128, (384, 5120)),     # 300 * 17 = 5100 tokens -> 512s: 5120
    (10000.0, 5000, 500, (4096, 32768)),  # both caps
])
def test_rounding_follows_finetune_setting(requests, isl, osl, expected):
    assert rounded_limits(requests, isl, osl) == expected


def test_kv_requests_of_llama_8b_fp8_on_one_h100():
    """80 GiB less 8.03 B one-byte parameters, x 0.95, over 64 KiB of FP8 KV per token (32 layers x 8 KV
    heads x 128 x K and V) x 2176 tokens: ~500 requests."""
    model, system = load_model("llama-3.1-8b"), load_system("h100-sxm")
    free = system.gpu.hbm_capacity.value - model.total_params()
    assert kv_requests(model, system, 1, 1, "fp8", "fp8", 128, 2048) == pytest.approx(
        free * 0.95 / (65536 * 2176))
    assert bench_limits(model, system, 1, 1, "fp8", "fp8", 128, 2048) == (640, 2048)
    # at tp 8 every GPU holds at least one KV head: 8 heads of Llama-3.1-8B stay 8
    assert kv_requests(model, system, 8, 1, "fp8", "fp8", 128, 2048) > 8 * kv_requests(model, system, 1, 1, "fp8",
                                                                                       "fp8", 128, 2048)


def test_without_chunking_a_whole_prompt_fits_beside_a_full_batch():
    """trtllm-bench without --enable_chunked_context raises the budget to max_isl + max_batch_size, else a
    prompt as long as the budget could never join a step that has decodes in it (PR #5625)."""
    assert unchunked_tokens(2048, 2048, 384) == 2432
    assert unchunked_tokens(8192, 128, 4096) == 8192     # the tuned budget already holds it
    model, system = load_model("llama-3.1-8b"), load_system("h100-sxm")
    batch, tokens = bench_limits(model, system, 1, 1, "fp8", "fp8", 20000, 2000)
    assert tokens == 20000 + batch
