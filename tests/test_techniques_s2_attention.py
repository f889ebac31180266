"""S2-Attention (family D, a trained strided-sparse pattern): what a head stores, reads and computes."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline.attention import causal_pairs
from whatif.roofline.techniques.registry import parse_technique, technique_set
from whatif.scenario import build_scenario


def run(techniques, prompt=65536, output=16):
    return build_scenario({"model": "llama-3.1-8b", "hardware": "a100-sxm-80gb", "techniques": techniques},
                          {"workload": {"batch": 1, "prompt": prompt, "output": output}}).run()


def test_a_sparse_head_keeps_its_local_window_and_one_older_block_in_the_stride():
    s2 = parse_technique("s2_attention:dense_every=0")
    assert s2.stored_tokens(1000) == 1000                       # inside the 16 x 64 local window
    assert s2.stored_tokens(1024 + 8000) == pytest.approx(1024 + 1000)
    hybrid = parse_technique("s2_attention")                    # every 2nd layer dense
    assert hybrid.stored_tokens(9024) == pytest.approx((9024 + 2024) / 2)
    for n in (10, 5000, 130000):
        assert hybrid.original(hybrid.stored_tokens(n)) == pytest.approx(n)


def test_prefill_pairs_fall_by_about_the_stride_and_a_stride_of_one_is_dense():
    s2 = parse_technique("s2_attention:dense_every=0")
    q = 131072
    # 1/8 of the pairs beyond the window, plus the 1024-token window's band at full density
    assert s2.pair_fraction(q, 0) == pytest.approx(1 / 8 + 2 * 1024 * (1 - 1 / 8) / q, rel=0.01)
    assert parse_technique("s2_attention:dense_every=0,vert_stride=1").pair_fraction(q, 0) == pytest.approx(1.0)
    # a later chunk: the cached count is the stored average, and the pairs are those of the true context
    c = 65536
    chunk = s2.pair_fraction(8192, s2.stored_tokens(c)) * causal_pairs(8192, s2.stored_tokens(c))
    assert chunk == pytest.approx(s2._shard_pairs(c + 8192) - s2._shard_pairs(c))


def test_cache_decode_and_prefill_all_shrink():
    base, s2 = run([]), run(["s2_attention:dense_every=0"])
    assert base.memory.kv_cache_bytes / s2.memory.kv_cache_bytes == pytest.approx(65552 / s2_tokens(65552), rel=0.01)
    assert s2.tpot_s < base.tpot_s and s2.ttft_s < base.ttft_s


def s2_tokens(n):
    return parse_technique("s2_attention:dense_every=0").stored_tokens(n)


def test_s2_attention_sets_the_kv_budget_and_checks_its_parameters():
    with pytest.raises(WhatifError, match="cannot be combined with"):
        technique_set(["s2_attention", "h2o"])
    with pytest.raises(WhatifError, match="s2_attention:vert_stride=0"):
        parse_technique("s2_attention:vert_stride=0")
