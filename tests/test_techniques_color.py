"""CoLoR (family E): retrieved passages rewritten shorter by a compressor LM (Phi-3-mini), offline or per request."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline.techniques.passage_compression import COMPRESSOR
from whatif.roofline.techniques.registry import parse_technique
from whatif.scenario import build_scenario


def run(techniques, prompt=8192, output=16, shared_prefix=0):
    return build_scenario({"model": "llama-3.1-8b", "hardware": "h100-sxm", "techniques": techniques},
                          {"workload": {"batch": 1, "prompt": prompt, "output": output,
                                        "shared_prefix": shared_prefix}}).run()


def compressor_ops(e):
    return [(t, n) for p, n in e.prefill for t in p.op_times if t.op.name.startswith("color_compress")]


def test_positions_shrink_by_the_ratio_over_the_passages_only():
    c = parse_technique("color:prompt=1910,ratio=1.91")
    assert c.positions(1910) == pytest.approx(1000)
    half = parse_technique("color:prompt=2000,context=0.5,ratio=2")
    assert half.positions(2000) == pytest.approx(500 + 1000)
    assert c.stored_tokens(1910 + 10) == pytest.approx(1010)


def test_offline_compression_is_free_per_request_and_online_pays_a_generation_pass():
    base, offline, online = run([]), run(["color"]), run(["color:precomputed=false"])
    assert base.memory.kv_cache_bytes / offline.memory.kv_cache_bytes == pytest.approx(
        (8192 + 16) / (8192 / 1.91 + 16), rel=0.01)
    assert not compressor_ops(offline)
    assert offline.ttft_s < online.ttft_s
    assert offline.tpot_s == pytest.approx(online.tpot_s)
    ops = compressor_ops(online)
    # the compressor's weights are read once for the passages' prefill and once per decode step
    params = sum(t.op.flops * t.op.count for t, _ in ops if t.op.name == "color_compress_prefill_mlp_down")
    assert params == pytest.approx(2 * 8192 * COMPRESSOR.intermediate_size * COMPRESSOR.hidden_size
                                   * COMPRESSOR.num_layers, rel=1e-6)
    steps = -(-128 // 1.91)
    decode = next(t for t, _ in ops if t.op.name == "color_compress_decode_mlp_down")
    assert decode.op.count == COMPRESSOR.num_layers * steps
    assert decode.op.shape.m == 8192 // 128                      # every passage decodes side by side


def test_more_compression_means_a_smaller_cache_but_a_shorter_compressor_run():
    mild, strong = run(["color:ratio=1.5,precomputed=false"]), run(["color:ratio=4,precomputed=false"])
    assert strong.memory.kv_cache_bytes < mild.memory.kv_cache_bytes
    work = [sum(t.total_s * n for t, n in compressor_ops(e) if "decode" in t.op.name) for e in (mild, strong)]
    assert work[1] < work[0]


def test_chunked_prefill_pays_the_compressor_once():
    def with_chunk(chunk):
        workload = {"batch": 1, "prompt": 8192, "output": 4, **({"prefill_chunk": chunk} if chunk else {})}
        return build_scenario({"model": "llama-3.1-8b", "hardware": "h100-sxm",
                               "techniques": ["color:precomputed=false"]}, {"workload": workload}).run()

    whole, chunked = with_chunk(0), with_chunk(1024)
    assert len(chunked.prefill) > 1
    flops = [sum(t.op.flops * t.op.count * n for t, n in compressor_ops(e)) for e in (whole, chunked)]
    assert flops[1] == pytest.approx(flops[0])


def test_color_checks_its_parameters_and_cannot_share_a_prefix():
    with pytest.raises(WhatifError, match="color:ratio=0.5"):
        parse_technique("color:ratio=0.5")
    with pytest.raises(WhatifError, match="color:passage=0"):
        parse_technique("color:passage=0")
    with pytest.raises(WhatifError, match="color: cannot be combined with prefix_caching"):
        run(["color", "prefix_caching"], shared_prefix=1024)
    with pytest.raises(WhatifError, match="cannot be combined with refrag"):
        run(["refrag", "color"])
