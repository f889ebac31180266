"""Family E (prefix and shared-context reuse) and CacheGen: mechanisms, claim bands, errors, conflicts."""
import pytest

from whatif.roofline.ops import link_bytes
from whatif.claims import evaluate
from whatif.claims.family_e import CLAIMS
from whatif.errors import WhatifError
from whatif.roofline.estimate import Workload
from whatif.roofline.techniques.prefix_reuse import block_pairs, share_prefill
from whatif.roofline.techniques.registry import parse_technique, technique_set
from whatif.scenario import Scenario

E_TECHNIQUES = ("hydragen", "prefix_caching", "cacheblend", "cache_craft", "ape", "pie", "cachegen")


def run(techniques=(), model="llama-2-7b", hardware="a100-sxm-80gb", workload=None, gpus=None):
    workload = workload or Workload(8, 2048, 256)
    return Scenario(model=model, hardware=hardware, gpus=gpus, workload=workload,
                    techniques=tuple(techniques)).run(with_max_batch=False)


def prefill_ops(e):
    return [t for p, n in e.prefill for t in p.op_times]


# ---------------------------------------------------------------- shared prefix

def test_share_prefill_splits_units_at_the_prefix():
    assert share_prefill([(2048, 0, 8)], 1024, computed_once=True) == [(1024, 0, 1), (1024, 1024, 8)]
    assert share_prefill([(2048, 0, 8)], 1024, computed_once=False) == [(1024, 1024, 8)]
    # a prompt that is all prefix: computed once, or (cache hit) only its last token per sequence
    assert share_prefill([(1024, 0, 8)], 1024, computed_once=True) == [(1024, 0, 1)]
    assert share_prefill([(1024, 0, 8)], 1024, computed_once=False) == [(1, 1023, 8)]
    assert share_prefill([(512, 2048, 8)], 1024, computed_once=True) == [(512, 2048, 8)]


def hydragen_gain(batch, prefix):
    wl = Workload(batch, prefix, 128, shared_prefix=prefix)
    base = run(["prefix_caching"], "llama-2-13b", "dgx-a100-40gb", wl, gpus=8)
    return run(["hydragen"], "llama-2-13b", "dgx-a100-40gb", wl, gpus=8).throughput_tok_s / base.throughput_tok_s


def test_hydragen_gain_grows_with_batch_size():
    gains = [hydragen_gain(b, 2048) for b in (32, 256, 1024)]
    assert gains[0] < gains[1] < gains[2]
    assert gains[0] >= 1.0


def test_hydragen_gain_grows_with_prefix_length():
    gains = [hydragen_gain(1024, p) for p in (1024, 2048, 3968)]
    assert gains[0] < gains[1] < gains[2]


def test_hydragen_reads_the_prefix_once_and_stores_it_once():
    wl = Workload(64, 2048, 64, shared_prefix=2048)
    base, hyd = run([], workload=wl), run(["hydragen"], workload=wl)
    names = {t.op.name for t in hyd.decode.op_times}
    assert {"attention_shared_prefix", "attention_suffix", "attention_merge"} <= names

    def attention_bytes(e):
        return sum(t.op.hbm_bytes * t.op.count for t in e.decode.op_times if t.op.name.startswith("attention"))
    assert attention_bytes(hyd) < attention_bytes(base) / 10
    assert hyd.memory.shared_kv_bytes > 0 and hyd.memory.kv_cache_bytes < base.memory.kv_cache_bytes / 10
    assert hyd.ttft_s < base.ttft_s / 10     # the prefix is prefilled once, not 64 times


def test_prefix_caching_full_hit_still_computes_the_last_token():
    e = run(["prefix_caching"], workload=Workload(8, 1024, 16, shared_prefix=1024))
    assert [p.batch.groups for p, _ in e.prefill] == [((1, 1023, 8),)]
    assert e.ttft_s > 0


# ---------------------------------------------------------------- chunk caches

def test_cacheblend_ttft_gain_is_bounded_by_the_computed_share_and_falls_with_recompute():
    wl = Workload(1, 4096, 32)
    base = run([], "mistral-7b", "a100-pcie-80gb", wl).ttft_s
    gains = [base / run([f"cacheblend:recompute={r}"], "mistral-7b", "a100-pcie-80gb", wl).ttft_s
             for r in (0.05, 0.15, 0.5)]
    assert gains[0] > gains[1] > gains[2] > 1.0
    cb = parse_technique("cacheblend")
    assert gains[1] <= 1.0 / cb.computed_share


def test_cacheblend_loads_reused_kv_overlapped_and_only_from_the_host_tier():
    host = run(["cacheblend"], "mistral-7b", "a100-pcie-80gb", Workload(1, 4096, 32))
    loads = [t for t in prefill_ops(host) if t.op.name == "cacheblend_kv_load"]
    assert loads and all(t.op.shape.overlap for t in loads)
    assert any(t.op.name == "cacheblend_kv_deviation" for t in prefill_ops(host))
    gpu = run(["cacheblend:tier=gpu"], "mistral-7b", "a100-pcie-80gb", Workload(1, 4096, 32))
    assert not any(t.op.op_class == "transfer" for t in prefill_ops(gpu))
    assert gpu.ttft_s <= host.ttft_s


def test_cacheblend_runs_its_first_layer_over_every_loaded_token_and_rerotates_their_keys():
    """The release (vllm_blend llama.py, check_layers=[1]): layer 0 prefills every token, layer 1 projects Q/K/V
    of every token to pick the deviating ones, and each later layer re-rotates the loaded keys."""
    e = run(["cacheblend:tier=gpu"], "mistral-7b", "a100-pcie-80gb", Workload(1, 4096, 32))
    ops = {t.op.name: t.op for t in prefill_ops(e)}
    cb = parse_technique("cacheblend:tier=gpu")
    computed = ops["qkv_proj"].shape.m
    kept = computed * cb.reused * (1 - cb.recompute) / cb.computed_share
    for name in ("cacheblend_layer0_qkv_proj", "cacheblend_layer0_mlp_down", "cacheblend_check_qkv_proj"):
        assert ops[name].count == 1 and ops[name].shape.m == pytest.approx(kept)
    assert "cacheblend_check_mlp_down" not in ops and ops["cacheblend_layer0_attention"].count == 1
    rerotate = ops["cacheblend_rerotate_rope"]
    assert rerotate.count == e.model.num_layers - 1
    assert rerotate.shape.elements == pytest.approx(ops["rope"].shape.elements / cb.computed_share)
    # each costs time: without them the TTFT would be lower (the computed tokens' own layers are unchanged)
    first = sum(t.total_s for t in prefill_ops(e) if t.op.name.startswith(("cacheblend_layer0", "cacheblend_check")))
    assert first > 0.05 * e.ttft_s


def test_cacheblend_is_load_bound_on_a_slow_link():
    # llama-2-7b (MHA) KV is 4x Mistral's per token: loading 90% of a batch's prompts over PCIe dominates.
    e = run(["cacheblend"], workload=Workload(8, 2048, 32))
    load = sum(t.total_s for p, n in e.prefill for t in p.op_times if t.op.op_class == "transfer")
    # Load-bound: TTFT is the load plus the layer-by-layer pipeline's fill (one layer's compute).
    assert load <= e.ttft_s <= load * (1 + 1 / e.model.num_layers)


def test_cache_craft_beats_prefix_caching_that_hits_half_the_prompt():
    wl = Workload(32, 4096, 64, shared_prefix=2007)
    pc = run(["prefix_caching"], "llama-3-8b", workload=wl)
    cc = run(["cache_craft"], "llama-3-8b", workload=wl)
    assert cc.ttft_s < pc.ttft_s and cc.tpot_s == pytest.approx(pc.tpot_s, rel=0.02)


# ---------------------------------------------------------------- parallel encoding, editing, streaming

def test_block_pairs_match_causal_pairs_within_one_block():
    assert block_pairs(0, 100, 4096) == 100 * 101 / 2
    assert block_pairs(0, 8192, 4096) == 2 * 4096 * 4097 / 2


def test_ape_block_diagonal_prefill_cuts_attention_and_loading_cuts_the_rest():
    wl = Workload(1, 32768, 16)
    base = run([], "llama-3.1-8b", workload=wl)
    encoded = run(["ape:loaded=0"], "llama-3.1-8b", workload=wl)
    loaded = run(["ape"], "llama-3.1-8b", workload=wl)

    def attention_s(e):
        return sum(t.total_s for t in prefill_ops(e) if t.op.op_class.startswith("attention"))
    assert attention_s(encoded) < attention_s(base) / 3
    assert not any(t.op.op_class == "transfer" for t in prefill_ops(encoded))
    assert any(t.op.name == "ape_kv_load" for t in prefill_ops(loaded))
    assert loaded.ttft_s < encoded.ttft_s < base.ttft_s
    smaller = run(["ape:loaded=0,context=1024"], "llama-3.1-8b", workload=wl)
    assert attention_s(smaller) < attention_s(encoded)


def test_pie_recomputes_edits_and_rerotates_keys_after_the_edit():
    wl = Workload(1, 3968, 16)
    small, big = run(["pie:edited=16"], workload=wl), run(["pie:edited=512"], workload=wl)
    assert small.ttft_s < big.ttft_s < run([], workload=wl).ttft_s

    def rotated(e):
        return sum(t.op.flops for t in prefill_ops(e) if t.op.name == "pie_rerotate_keys")
    early, late = run(["pie:position=0.1"], workload=wl), run(["pie:position=0.9"], workload=wl)
    assert rotated(early) == pytest.approx(9 * rotated(late), rel=1e-6)
    assert not any(t.op.name == "pie_rerotate_keys" for t in prefill_ops(run(["pie:position=1"], workload=wl)))


def test_cachegen_fewer_bits_and_more_bandwidth_lower_ttft():
    wl = Workload(1, 8192, 1)

    def ttft(spec):
        return run([spec], "mistral-7b", workload=wl).ttft_s
    assert ttft("cachegen:bits=1") < ttft("cachegen:bits=2") < ttft("cachegen:bits=8")
    assert ttft("cachegen:bandwidth=30") < ttft("cachegen:bandwidth=3")
    coded = run(["cachegen:bits=8"], "mistral-7b", workload=wl)
    plain = run(["cachegen:bits=8,codec=none"], "mistral-7b", workload=wl)
    decode = {t.op.name: t.op.flops for t in prefill_ops(coded) + prefill_ops(plain)}
    assert decode["cachegen_decode"] > decode["kv_dequantize"]


def test_cachegen_stream_carries_every_tp_shard_over_one_link():
    wl = Workload(1, 8192, 1)

    def wire(gpus):
        e = run(["cachegen"], "llama-3.1-8b", "dgx-a100-80gb", wl, gpus=gpus)
        return sum(link_bytes(t.op) for t in prefill_ops(e) if t.op.op_class == "transfer")
    assert wire(4) == pytest.approx(wire(1))


# ---------------------------------------------------------------- claims, errors, conflicts

@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.band], ids=lambda c: f"{c.technique}-{c.metric}")
def test_family_e_claims_within_band(claim):
    outcome = evaluate(claim)
    assert outcome.in_band, (claim.technique, claim.metric, outcome.gain, claim.band)


@pytest.mark.parametrize("spec,key", [
    ("prefix_caching:hit_rate=1.5", "hit_rate"),
    ("cacheblend:reused=-0.1", "reused"),
    ("cacheblend:recompute=2", "recompute"),
    ("cacheblend:reused=1,recompute=0", "reused"),
    ("cacheblend:tier=ssd", "tier"),
    ("cache_craft:recompute=-1", "recompute"),
    ("ape:context=0", "context"),
    ("ape:query=1", "query"),
    ("ape:loaded=2", "loaded"),
    ("pie:edited=0", "edited"),
    ("pie:position=1.5", "position"),
    ("cachegen:bandwidth=0", "bandwidth"),
    ("cachegen:bits=0", "bits"),
    ("cachegen:codec=zip", "codec"),
])
def test_bad_parameters_name_the_key(spec, key):
    with pytest.raises(WhatifError, match=key):
        parse_technique(spec)


@pytest.mark.parametrize("pair", [["cacheblend", "prefix_caching"], ["ape", "cachegen"], ["pie", "cache_craft"]])
def test_prompt_reuse_techniques_conflict(pair):
    with pytest.raises(WhatifError, match="cannot be combined"):
        technique_set(pair)


@pytest.mark.parametrize("name", ["pie", "cacheblend", "ape", "cachegen", "hydragen"])
def test_latent_attention_models_are_rejected(name):
    with pytest.raises(WhatifError, match=name):
        run([name], "deepseek-v3", "dgx-h100", Workload(1, 1024, 8, shared_prefix=512), gpus=8)


@pytest.mark.parametrize("model", ["llama-3.1-8b", "llama-2-7b"])
@pytest.mark.parametrize("name", E_TECHNIQUES)
def test_defaults_run_with_non_negative_costs(model, name):
    e = run([name], model, workload=Workload(8, 2048, 256, shared_prefix=1024))
    ops = prefill_ops(e) + list(e.decode.op_times)
    assert all(t.op.flops >= 0 and all(v >= 0 for v in t.op.bytes.values()) for t in ops)
    assert e.ttft_s > 0 and e.tpot_s > 0
