"""benchmarks/minimax_vllm_families.py: vLLM MiniMax-M2.5 NVFP4 prefill families against the B200 vLLM tables."""
from pathlib import Path

import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

mvf = load_benchmark("minimax_vllm_families")
AIC = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator"


def test_families_by_op_name():
    assert mvf.family("qkv_proj") == "qkv"
    assert mvf.family("kv_cache_write") == "attention"
    assert mvf.family("experts_down") == "moe"
    assert mvf.family("mlp_allreduce") == "all-reduce"
    assert mvf.family("qk_norm_allreduce") == "rest"   # whatif's price: no table times a [T, 2] fp32 all-reduce
    assert mvf.family("router") == "rest"


def _synthetic_tables(ms: float) -> dict:
    """One row per family at every shape the TP-2, 1,024-token lookup reads, each `ms` long."""
    gemm = pd.DataFrame({"n": [4096, 3072], "k": [3072, 3072], "m": [1024, 1024], "latency_ms": [ms, ms]})
    att = pd.DataFrame({"num_heads": [24], "num_key_value_heads": [4], "isl": [1024], "latency_ms": [ms]})
    moe = pd.DataFrame({"moe_tp_size": [2, 2], "distribution": ["power_law_1.01", "balanced"],
                        "num_tokens": [1024, 1024], "latency_ms": [ms, ms]})
    comm = pd.DataFrame({"kernel_source": ["vLLM_custom_graph", "TRTLLM"], "num_gpus": [2, 2],
                         "bytes": [1024 * 3072 * 2.0] * 2, "latency_ms": [ms, ms]})
    return {"gemm": gemm, "attention": att, "moe": moe, "comm": comm}


def test_table_families_scale_by_layers_and_count_two_allreduces():
    t = mvf.table_families(_synthetic_tables(0.01), 1024, 2)
    assert t["qkv"] == pytest.approx(62 * 0.01)
    assert t["moe balanced"] == pytest.approx(62 * 0.01)
    assert t["all-reduce vllm graph"] == pytest.approx(2 * 62 * 0.01)   # attention's and the MoE's, a layer
    assert mvf.table_families(_synthetic_tables(0.01) | {"attention": pd.DataFrame(
        {"num_heads": [48], "num_key_value_heads": [8], "isl": [1024], "latency_ms": [0.01]}),
        "moe": pd.DataFrame({"moe_tp_size": [1, 1], "distribution": ["power_law_1.01", "balanced"],
                             "num_tokens": [1024, 1024], "latency_ms": [0.01, 0.01]}),
        "gemm": pd.DataFrame({"n": [8192, 3072], "k": [3072, 6144], "m": [1024, 1024],
                              "latency_ms": [0.01, 0.01]})}, 1024, 1)["all-reduce trtllm"] == 0.0


def test_interp_log_between_points():
    assert mvf._interp(2.0, [1.0, 4.0], [1.0, 4.0], log=True) == pytest.approx(2.0)
    assert mvf._interp(10.0, [1.0, 4.0], [1.0, 4.0]) == pytest.approx(4.0)   # held flat outside the points


@pytest.mark.skipif(not AIC.is_dir(), reason="shared kernel tables not present")
def test_tables_read_minimax_shapes():
    # the finding's inputs: at TP2 / 1,024 tokens every tabled family is found at MiniMax's own shape
    t = mvf.table_families(mvf.load_tables(AIC), 1024, 2)
    assert all(v > 0 for v in t.values())
    assert t["moe power-law 1.01"] > t["moe balanced"]   # the collector's skewed routing costs more
