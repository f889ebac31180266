"""REFRAG (family E): a retrieved context prefilled and cached as one position per chunk, plus its encoder."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline.techniques.registry import parse_technique
from whatif.scenario import build_scenario


def run(techniques, prompt=8192, output=16, shared_prefix=0):
    return build_scenario({"model": "llama-2-7b-32k", "hardware": "a100-sxm-80gb", "techniques": techniques},
                          {"workload": {"batch": 1, "prompt": prompt, "output": output,
                                        "shared_prefix": shared_prefix}}).run()


def test_positions_are_one_per_chunk_plus_expanded_chunks_and_the_question():
    r = parse_technique("refrag:prompt=1600")
    assert r.positions(1600) == 100
    half = parse_technique("refrag:prompt=1600,context=0.5,expand=0.25")
    assert half.positions(1600) == pytest.approx(50 * 0.75 + 800 * 0.25 + 800)
    assert r.stored_tokens(1600 + 40) == 100 + 40          # generated tokens are cached as usual


def test_the_cache_and_prefill_shrink_and_the_encoder_costs_unless_precomputed():
    base, per_request, stored = run([]), run(["refrag"]), run(["refrag:precomputed=true"])
    assert base.memory.kv_cache_bytes / per_request.memory.kv_cache_bytes == pytest.approx(
        (8192 + 16) / (512 + 16), rel=0.01)
    assert stored.ttft_s < per_request.ttft_s < base.ttft_s / 4
    encoder = [t for p, _ in per_request.prefill for t in p.op_times if t.op.name.startswith("refrag_encoder")]
    # 2 x (4 d^2 + 8 d^2) FLOPs per context token per layer, d = 1024, 24 layers
    assert sum(t.op.flops * t.op.count for t in encoder) == pytest.approx(8192 * 2 * 12 * 1024 ** 2 * 24, rel=0.01)
    assert per_request.tpot_s < base.tpot_s


def test_refrag_cannot_share_a_prefix_and_checks_its_parameters():
    with pytest.raises(WhatifError, match="refrag: cannot be combined with prefix_caching"):
        run(["refrag", "prefix_caching"], shared_prefix=1024)
    with pytest.raises(WhatifError, match="refrag:expand=2"):
        parse_technique("refrag:expand=2")
