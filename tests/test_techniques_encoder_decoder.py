"""Encoder-decoder graphs (family E): an encoder reads the prompt once (bidirectional), a decoder generates with
cross-attention to the encoder's output."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline.techniques.encoder_decoder import cross_attention_weights
from whatif.roofline.techniques.registry import parse_technique
from whatif.scenario import build_scenario
from whatif.specs.models import load_model

MODEL = "qwen2.5-0.5b"


def run(techniques, prompt=512, output=64, batch=1, shared_prefix=0, hardware="l4"):
    return build_scenario({"model": MODEL, "hardware": hardware, "techniques": techniques},
                          {"workload": {"batch": batch, "prompt": prompt, "output": output,
                                        "shared_prefix": shared_prefix}}).run()


def ops(e, prefix, phase="prefill"):
    passes = list(e.prefill) if phase == "prefill" else [(e.decode, 1)]
    return [(t, n) for p, n in passes for t in p.op_times if t.op.name.startswith(prefix)]


def test_an_even_split_caches_half_the_layers_and_decodes_through_half():
    base, split = run([]), run(["encoder_decoder"])
    assert base.memory.kv_cache_bytes / split.memory.kv_cache_bytes == pytest.approx(2.0, rel=1e-6)
    assert split.tpot_s < base.tpot_s
    # weights: both stacks (12 + 12 layers) plus cross-attention in each of the 12 decoder layers
    m = load_model(MODEL)
    added = 12 * cross_attention_weights(m) * 2           # bytes at 16 bits
    assert split.memory.weights_bytes - base.memory.weights_bytes == pytest.approx(added, rel=1e-6)
    assert m.layer_params(0) > cross_attention_weights(m) > 0


def test_the_encoder_attends_to_every_pair_once_per_request():
    split = run(["encoder_decoder"], batch=2)
    attention = [t for t, _ in ops(split, "encoder_attention")]
    assert len(attention) == 1 and attention[0].op.count == 12
    m = load_model(MODEL)
    # all 512 x 512 pairs of each of the 2 prompts, per head: 2 * pairs * H * (d_qk + d_v) FLOPs
    assert attention[0].op.flops == pytest.approx(2 * 2 * 512 * 512 * m.num_heads * 2 * m.head_dim, rel=1e-6)
    assert not ops(split, "encoder_kv_cache_write") and not ops(split, "encoder_lm_head")
    assert ops(split, "cross_kv_proj") and not ops(split, "cross_kv_proj", phase="decode")
    assert ops(split, "cross_q_proj", phase="decode")


def test_keeping_every_layer_on_both_sides_costs_more_than_the_decoder_only_model():
    base, both = run([]), run(["encoder_decoder:encoder_layers=24,decoder_layers=24"])
    m = load_model(MODEL)
    assert both.memory.weights_bytes - base.memory.weights_bytes == pytest.approx(
        24 * (m.layer_params(0) + cross_attention_weights(m)) * 2, rel=1e-6)
    assert both.ttft_s > base.ttft_s
    assert both.tpot_s > base.tpot_s                      # cross-attention projections beside each layer's own
    assert both.memory.kv_cache_bytes == pytest.approx(base.memory.kv_cache_bytes)   # 24 decoder layers cache


def test_encoder_decoder_checks_its_inputs():
    with pytest.raises(WhatifError, match="encoder_decoder:encoder_layers=-1"):
        parse_technique("encoder_decoder:encoder_layers=-1")
    with pytest.raises(WhatifError, match="encoder_decoder: cannot be combined with prefix_caching"):
        run(["encoder_decoder", "prefix_caching"], shared_prefix=256)
    with pytest.raises(WhatifError, match="encoder_decoder: modelled for dense"):
        build_scenario({"model": "mixtral-8x7b", "hardware": "dgx-h100", "gpus": 2,
                        "techniques": ["encoder_decoder"]}, {"workload": {"batch": 1, "prompt": 512,
                                                                          "output": 8}}).run()
