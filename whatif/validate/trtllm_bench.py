"""The scheduler limits `trtllm-bench throughput` (TensorRT-LLM's offline benchmark) picks for a dataset.

NVIDIA's published throughput tables (docs/source/performance/perf-overview.md) run `trtllm-bench throughput`
without --max_batch_size / --max_num_tokens, so the harness derives both from the model, the GPUs and the
dataset's mean input and output lengths (tensorrt_llm/bench/build/tuning.py `calc_engine_setting` and
`finetune_setting`; bench/benchmark/utils: PytMaxThroughputScenario passes them to the LLM API with CUDA-graph
padding). Its estimate of how many requests the KV cache holds is deliberately optimistic (weights only
subtracted, a 0.95 fraction of the rest); the runtime's own KV sizing still decides how many run at once.
A row measured this way is predicted with these limits, as the engine ran with them.
"""
from __future__ import annotations

import math

from ..specs.dtypes import dtype_bytes
from ..specs.hardware import System
from ..specs.models import ModelSpec

GIB = 2 ** 30
HEURISTIC_KV_FRACTION = 0.95   # get_benchmark_engine_settings(kv_cache_gpu_mem_fraction=0.95), not the CLI's 0.90
MAX_REQUESTS = 4096            # "Cap total batch size to avoid decoder buffer size becoming too large"
MAX_TOKENS = 32768             # "Cap num tokens to avoid TRT activation buffer becoming too large"


# perf-overview.md (TensorRT-LLM 1.0): "$num_requests" of each ISL/OSL dataset, all queued at once by
# `trtllm-bench throughput`; more requests for short ones "to guarantee that the system hit a steady state".
DATASET_REQUESTS = {(128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (1000, 2000): 1500, (2048, 128): 3000,
                    (2048, 2048): 1500, (5000, 500): 1500, (1000, 1000): 3000, (500, 2000): 3000,
                    (20000, 2000): 1000}


def kv_requests(model: ModelSpec, system: System, tp: int, pp: int, weight_dtype: str, kv_dtype: str,
                isl: int, osl: int) -> float:
    """Requests of isl + osl tokens the harness expects the KV cache to hold: GPU memory (NVML total) minus
    the parameters at the weight dtype's size (its tuning.py BYTES_PER_ELEM: 2, 1 for FP8, 0.5 for NVFP4, whose
    block scales it does not count, as dtype_bytes does not), times 0.95, over the KV bytes per request (each GPU
    of the TP group holds at least one KV head)."""
    kv_heads = max(tp, model.num_kv_heads)
    bytes_per_token = 2 * model.num_layers * kv_heads * model.head_dim * dtype_bytes(kv_dtype)
    weights = model.total_params() * dtype_bytes(weight_dtype)
    free = system.gpu.hbm_capacity.value * tp * pp - weights
    return free * HEURISTIC_KV_FRACTION / (bytes_per_token * (isl + osl))


def rounded_limits(requests: float, isl: int, osl: int, pp: int = 1) -> tuple[int, int]:
    """(max_batch_size, max_num_tokens) from the expected requests, rounded up as finetune_setting does:
    the batch to 32s (at least 64) below 256, to 128s below 1024, to 256s above; the tokens, a batch's worth
    of prompt and one decode step per request (1 + isl / osl per request), to 256s (at least 2048) below 4096,
    to 512s below 8192, to 1024s above."""
    raw_bs = min(requests, MAX_REQUESTS) / pp
    raw_tokens = min(raw_bs * (1 + isl / osl), MAX_TOKENS)
    return (round_up(raw_bs, ((256, 32), (1024, 128), (math.inf, 256)), 64),
            round_up(raw_tokens, ((4096, 256), (8192, 512), (math.inf, 1024)), 2048))


def round_up(value: float, tiers: tuple, least: int) -> int:
    """`value` rounded up to the step of the first (below, step) tier it is below, and at least `least`."""
    step = next(step for below, step in tiers if value < below)
    return max(least, step * math.ceil(value / step))


def bench_limits(model: ModelSpec, system: System, tp: int, pp: int, weight_dtype: str, kv_dtype: str,
                 isl: int, osl: int) -> tuple[int, int]:
    """(max_batch_size, max_num_tokens) trtllm-bench throughput runs a dataset of these lengths with (every
    request isl in, osl out, as perf-overview.md's datasets)."""
    batch, tokens = rounded_limits(kv_requests(model, system, tp, pp, weight_dtype, kv_dtype, isl, osl), isl, osl, pp)
    return batch, unchunked_tokens(tokens, isl, batch)


def unchunked_tokens(tokens: int, max_isl: int, batch: int) -> int:
    """The token budget without chunked prefill (trtllm-bench's default: --enable_chunked_context off): at least
    the longest prompt beside a full batch of decodes, so a whole prompt can join a step (bench/benchmark/utils/
    general.py get_settings: max_num_tokens = max(max_num_tokens, max_isl + max_batch_size); TensorRT-LLM
    PR #5625, June 2025, before 1.0)."""
    return max(tokens, max_isl + batch)
