"""Per-layer model vocabulary (specs/model_layers.py): mixer and feed-forward kinds, windowed pair counts, what
each layer kind holds per token and per sequence, and the schema's refusals."""
import pytest

from whatif.errors import WhatifError
from whatif.specs.model_layers import chunked_pairs, windowed_pairs
from whatif.specs.models import spec_from_dict

BASE = dict(name="t", family="t", hidden_size=256, num_layers=8, num_heads=4, num_kv_heads=2, head_dim=64,
            intermediate_size=512, vocab_size=1000, max_position_embeddings=4096)


def brute_pairs(q, c, see):
    return sum(see(c + j) for j in range(q))


@pytest.mark.parametrize("q,c,w", [(1, 0, 4), (1, 10, 4), (7, 0, 4), (7, 2, 4), (3, 100, 128), (300, 50, 128)])
def test_windowed_pairs_count_each_query_seeing_at_most_the_window(q, c, w):
    assert windowed_pairs(q, c, w) == brute_pairs(q, c, lambda p: min(p + 1, w))


@pytest.mark.parametrize("q,c,chunk", [(1, 0, 4), (1, 9, 4), (9, 0, 4), (5, 6, 4), (40, 13, 8)])
def test_chunked_pairs_count_each_query_seeing_its_own_chunk(q, c, chunk):
    assert chunked_pairs(q, c, chunk) == brute_pairs(q, c, lambda p: p % chunk + 1)


def test_sliding_layers_hold_at_most_their_window_and_recurrent_layers_a_constant_state():
    m = spec_from_dict({**BASE, "layer_types": ["sliding", "full"], "sliding_window": 128}, "t")
    per_layer = 2 * 2 * 64 * 2   # K and V, 2 KV heads of 64, bf16
    assert m.sequence_cache_bytes(100, 2) == 8 * 100 * per_layer
    assert m.sequence_cache_bytes(10_000, 2) == 4 * (128 + 10_000) * per_layer
    lin = {"key_heads": 2, "value_heads": 4, "key_head_dim": 32, "value_head_dim": 32, "state_dtype": "fp32"}
    g = spec_from_dict({**BASE, "layer_types": ["linear", "linear", "linear", "full"], "linear_attention": lin}, "t")
    state = 4 * 32 * 32 * 4 + 3 * (2 * 2 * 32 + 4 * 32) * 2   # fp32 recurrent state + bf16 conv state
    assert g.sequence_cache_bytes(1, 2) - 2 * per_layer == pytest.approx(6 * state)
    assert g.sequence_cache_bytes(1000, 2) - g.sequence_cache_bytes(1, 2) == 2 * 999 * per_layer


def test_ffn_types_and_moe_offsets_place_the_experts():
    moe = {"num_experts": 4, "experts_per_token": 1, "expert_intermediate_size": 64, "moe_layer_frequency": 2,
           "moe_layer_offset": 1}
    m = spec_from_dict({**BASE, "moe": moe}, "t")
    assert [m.is_moe_layer(i) for i in range(4)] == [False, True, False, True]
    h = spec_from_dict({**BASE, "layer_types": ["none", "full"], "ffn_types": ["dense", "none"]}, "t")
    assert h.layer_params(1) == h.attention_params() + h.hidden_size      # one norm, no FFN
    assert h.layer_params(0) == h.dense_mlp_params() + h.hidden_size


@pytest.mark.parametrize("extra,match", [
    ({"layer_types": ["sliding"]}, "sliding_window"),
    ({"layer_types": ["linear"]}, "linear_attention"),
    ({"layer_types": ["banana"]}, "valid: full, sliding"),
    ({"ffn_types": ["moe"]}, "moe mapping"),
    ({"nope_layers": [99]}, "nope_layers"),
    ({"indexer": {"heads": 4, "head_dim": 64, "top_k": 16}}, "needs MLA"),
    ({"global_kv_heads": 3}, "global_kv_heads: 3 must divide num_heads"),
    ({"global_head_dim": -1}, "global_head_dim"),
    ({"attention_k_eq_v": "yes"}, "attention_k_eq_v"),
    ({"global_head_dim": 512, "mla": {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
                                      "v_head_dim": 128}}, "needs GQA attention, not MLA"),
    ({"layer_types": ["linear"], "linear_attention": {"key_heads": 2, "value_heads": 2, "key_head_dim": 8,
                                                      "value_head_dim": 8, "gate": "vector"}},
     "linear_attention.gate: 'vector' is not valid; valid: head, channel"),
    ({"layer_types": ["linear"], "linear_attention": {"key_heads": 2, "value_heads": 2, "key_head_dim": 8,
                                                      "value_head_dim": 8, "gate": "channel"}},
     "gate_rank: a channel gate needs the rank"),
])
def test_the_schema_refuses_a_layer_kind_without_what_it_needs(extra, match):
    with pytest.raises(WhatifError, match=match):
        spec_from_dict({**BASE, **extra}, "t")
