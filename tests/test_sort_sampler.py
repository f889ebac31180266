"""The full-vocabulary sort sampler (whatif/roofline/sort_sampler.py) and where an engine spec turns it on."""
import pytest

from whatif.roofline.engine_kernels import fused_ops
from whatif.roofline.ops import OpClass, OpRole, streaming
from whatif.roofline.sort_sampler import SORT_SAMPLER_BYTES_PER_LOGIT, sorted_vocab_sampling
from whatif.errors import WhatifError
from whatif.scenario import build_scenario
from whatif.roofline.engines import engine_spec

VOCAB = 151_936   # Qwen3's vocabulary


def sampling_op(rows: int):
    """graph.py's sampling op over `rows` logit rows: one softmax pass (two fp32 reads a logit)."""
    return streaming("sampling", OpClass.SAMPLING, rows * VOCAB, reads=2, writes=0, flops_per_element=5.0,
                     elem_bytes=4.0, dtype="fp32", role=OpRole.SAMPLING)


def test_the_sort_path_moves_220_bytes_a_logit_per_sequence():
    """Temperature, a radix sort of values and int64 indices, the masks, softmax, cumsum, scatter and the sample."""
    assert SORT_SAMPLER_BYTES_PER_LOGIT == 220.0
    for rows in (8, 128):
        op = sorted_vocab_sampling(sampling_op(rows))
        assert op.bytes["hbm"] == pytest.approx(rows * VOCAB * 220.0)
        assert op.role == OpRole.SAMPLING and op.shape.elements == rows * VOCAB
    assert sampling_op(128).bytes["hbm"] == pytest.approx(128 * VOCAB * 8.0)   # the default: one softmax pass


def test_only_a_spec_whose_sampler_sorts_rewrites_the_sampling_op():
    spec = engine_spec("vllm")
    other = streaming("final_norm", OpClass.NORM, 128 * 5120, reads=1, writes=1, flops_per_element=4.0,
                      elem_bytes=2.0, dtype="bf16", role=OpRole.FINAL_NORM)
    ops = [other, sampling_op(128)]
    assert not spec.sampler_sorts_vocab
    assert fused_ops(ops, spec)[1].bytes["hbm"] == ops[1].bytes["hbm"]
    sorted_ops = fused_ops(ops, spec.with_sort_sampler(True))
    assert sorted_ops[0] == other
    assert sorted_ops[1].bytes["hbm"] == pytest.approx(128 * VOCAB * 220.0)
    assert spec.with_sort_sampler(None) is spec


def test_a_scenario_rejects_a_non_boolean_topk_topp_sort():
    with pytest.raises(WhatifError, match="topk_topp_sort"):
        build_scenario({"model": "llama-3-8b", "hardware": "h100-sxm", "topk_topp_sort": "sometimes"}, {})
    sc = build_scenario({"model": "llama-3-8b", "hardware": "h100-sxm", "kernel_engine": "vllm",
                         "topk_topp_sort": True}, {})
    assert sc.engine_spec().sampler_sorts_vocab
