"""Family B (KV quantization and compression): each mechanism moves the costs it should, errors
name the technique and key, and the claims whatif should get right stay in their bands."""
from dataclasses import replace

import pytest

from whatif.claims import evaluate
from whatif.claims.family_b import CLAIMS
from whatif.errors import WhatifError
from whatif.specs.models import load_model
from whatif.roofline.config import Precision
from whatif.roofline.estimate import Workload
from whatif.roofline.context import KVFormat
from whatif.roofline.techniques.registry import parse_technique, technique_set
from whatif.scenario import Scenario

WL = Workload(batch=8, prompt=2048, output=256)
BASE_KV = KVFormat(2.0, 2.0)


def run(techniques, model="llama-2-7b", workload=WL, hardware="a100-sxm-80gb", **kw):
    return Scenario(model=model, hardware=hardware, workload=workload, techniques=tuple(techniques), **kw).run(
        with_max_batch=False)


def decode_op(e, name):
    return next(t.op for t in e.decode.op_times if t.op.name == name)


def prefill_ops(e):
    return {t.op.name: t.op for p, _ in e.prefill for t in p.op_times}


@pytest.fixture(scope="module")
def base():
    return run([])


def kv_ratio(e, base):
    return base.memory.kv_cache_bytes / e.memory.kv_cache_bytes


# ---------------------------------------------------------------- claims

@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.band], ids=lambda c: f"{c.technique}-{c.metric}")
def test_claims_in_band(claim):
    out = evaluate(claim)
    assert out.in_band, (claim.paper, out.gain, claim.band)


def test_every_claim_evaluates_and_is_explained():
    for c in CLAIMS:
        assert c.why and evaluate(c).gain > 0


def test_kivi_throughput_gain_is_bounded_by_its_compression():
    """At max batch, decode is between GEMM-bound (gain 1) and KV-bound (gain = the bytes-per-token ratio,
    whether the batch is set by memory or by the engine's sequence cap)."""
    setup = next(c for c in CLAIMS if c.technique == "kivi" and c.metric == "throughput_at_max_batch")
    assert 1.0 < evaluate(setup).gain < evaluate(replace(setup, metric="kv_bytes_per_token")).gain


# ---------------------------------------------------------------- quantization

def test_kivi_format_residual_and_dequant(base):
    t = parse_technique("kivi")
    kv = t.transform_kv(BASE_KV)
    assert kv.element_bytes == pytest.approx(2 / 8 + 4 / 32)
    assert kv.residual_tokens == 96          # values hold 128, keys 0..127: 3/4 of R on average
    e = run([t])
    assert 2.5 < kv_ratio(e, base) < 5.33
    attn, plain = decode_op(e, "attention"), decode_op(base, "attention")
    assert attn.hbm_bytes < plain.hbm_bytes / 2 and attn.alu_ops > 0
    assert decode_op(e, "kv_quantize").count == 32
    short = run([t], workload=Workload(8, 32, 16))      # everything still inside the 16-bit residual
    assert decode_op(short, "attention").alu_ops == 0


def test_kv_quant_and_fp8_write_and_read_fewer_bytes(base):
    q4, fp8, q8 = run(["kv_quant"]), run(["kv_fp8"]), run(["kv_quant:bits=8"])
    assert kv_ratio(fp8, base) == pytest.approx(2.0)
    assert kv_ratio(q4, base) == pytest.approx(2 / (0.5 + 4 / 64))
    assert kv_ratio(q8, base) < kv_ratio(fp8, base)          # int8 pays group scales, fp8 a per-tensor scale
    assert fp8.precision.kv == "fp8"
    for e in (q4, fp8):
        write = decode_op(e, "kv_cache_write")
        assert write.flops > 0 and write.hbm_bytes < decode_op(base, "kv_cache_write").hbm_bytes
        assert decode_op(e, "attention").alu_ops > 0
        assert e.tpot_s < base.tpot_s


def test_gear_pays_for_outliers_and_low_rank(base):
    gear, plain4 = run(["gear"]), run(["kv_quant:bits=4,group_size=64"])
    assert 1 < kv_ratio(gear, base) < kv_ratio(plain4, base)
    assert decode_op(gear, "attention").alu_ops > decode_op(run(["kivi:bits=4"]), "attention").alu_ops
    assert "gear_compress" in prefill_ops(gear)
    no_extras = run(["gear:outliers=0,rank_ratio=0,buffer=0"])
    assert no_extras.memory.kv_cache_bytes < gear.memory.kv_cache_bytes


def test_mikv_bytes_follow_the_important_share(base):
    assert kv_ratio(run(["mikv:important=1"]), base) == pytest.approx(1.0)
    all_low = run(["mikv:important=0,low_bits=4,group_size=64"])
    assert kv_ratio(all_low, base) == pytest.approx(kv_ratio(run(["kv_quant"]), base))
    e = run(["mikv"])
    assert 3 < kv_ratio(e, base) < 3.5
    assert decode_op(e, "mikv_importance_update").hbm_bytes > 0


# ---------------------------------------------------------------- channels, layers

def test_minicache_shrinks_memory_but_not_decode_reads(base):
    e = run(["minicache"])
    assert kv_ratio(e, base) == pytest.approx(1 / (0.5 + 0.5 * 0.55))
    assert decode_op(e, "attention").hbm_bytes == decode_op(base, "attention").hbm_bytes
    assert decode_op(e, "minicache_restore").hbm_bytes > 0 and "minicache_merge" in prefill_ops(e)
    both = run(["kivi:bits=4", "minicache"])
    assert kv_ratio(both, base) == pytest.approx(kv_ratio(run(["kivi:bits=4"]), base) * kv_ratio(e, base))
    assert kv_ratio(run(["minicache:start=0.75"]), base) < kv_ratio(e, base)


def test_think_prunes_key_channels_and_scores_at_prefill(base):
    e = run(["think"])
    assert kv_ratio(e, base) == pytest.approx(1 / 0.8)
    assert decode_op(e, "attention").flops < decode_op(base, "attention").flops
    assert "think_channel_prune" in prefill_ops(e)
    assert all(t.op.name != "think_channel_prune" for t in e.decode.op_times)
    assert kv_ratio(run(["kivi", "think"]), base) > kv_ratio(run(["kivi"]), base)


# ---------------------------------------------------------------- heads, latent

def test_kv_head_compression_halves_heads_and_projections(base):
    e = run(["kv_head_compression"])
    assert e.model.num_kv_heads == 16 and kv_ratio(e, base) == pytest.approx(2.0)
    assert e.memory.weights_bytes < base.memory.weights_bytes
    gqa = run(["kv_head_compression:keep=0.25"], model="llama-3.1-8b")
    assert gqa.model.num_kv_heads == 2


def test_mla_conversion_caches_the_latent():
    e = run(["mla_conversion:kv_lora_rank=128,rope_dim=32"], model="llama-3.2-1b")
    assert e.model.mla.kv_lora_rank == 128 and e.model.kv_elements_per_token() == 16 * 160
    assert any(t.op.name == "q_absorb" for t in e.decode.op_times)
    derived = parse_technique("mla_conversion").spec(load_model("llama-3.1-8b"))
    assert derived.kv_lora_rank + derived.qk_rope_head_dim == round(2 * 8 * 128 / 6.4)


# ---------------------------------------------------------------- errors and composition

@pytest.mark.parametrize(("spec", "key"), [
    ("kivi:bits=9", "bits"), ("kv_quant:group_size=0", "group_size"), ("gear:outliers=1.5", "outliers"),
    ("gear:rank_ratio=-1", "rank_ratio"), ("mikv:high_bits=4,low_bits=8", "low_bits"),
    ("mikv:important=2", "important"), ("minicache:start=1", "start"), ("minicache:retain=0.9", "retain"),
    ("think:pruning=1", "pruning"), ("kv_head_compression:keep=0", "keep"),
    ("mla_conversion:compression=1", "compression"),
])
def test_bad_parameters_name_the_key(spec, key):
    name = spec.partition(":")[0]
    with pytest.raises(WhatifError, match=f"{name}:{key}="):
        parse_technique(spec)


def test_technique_cannot_apply_to_this_model():
    llama = load_model("llama-2-7b")
    mqa = replace(llama, num_kv_heads=1)
    mla = load_model("deepseek-v3")
    cases = [("kv_head_compression", mqa, "multi-query"), ("kv_head_compression", mla, "latent attention"),
             ("kv_head_compression:keep=0.3", llama, "keep=0.3.*valid: .*0.5"), ("mla_conversion", mla, "latent"),
             ("think", mla, "latent"), ("mla_conversion:compression=100", load_model("llama-3.2-1b"), "compression"),
             ("minicache:start=0.99", llama, "start")]
    for spec, model, pattern in cases:
        with pytest.raises(WhatifError, match=pattern):
            parse_technique(spec).check(model, 0)


def test_conflicts_and_compositions():
    for pair in (["kivi", "gear"], ["kv_fp8", "kv_quant"], ["mikv", "kivi"],
                 ["kv_head_compression", "mla_conversion"]):
        with pytest.raises(WhatifError, match="cannot be combined"):
            technique_set(pair)
    e = run(["int4", "kivi", "minicache", "think", "h2o"], model="llama-3.1-8b")
    assert e.memory.kv_cache_bytes > 0 and e.tpot_s > 0
    assert run(["kv_head_compression", "kivi"]).memory.kv_cache_bytes < run(["kivi"]).memory.kv_cache_bytes


def test_fp8_kv_dtype_flag_and_technique_store_the_same_bytes():
    flag = run([], precision=Precision(kv="fp8"))
    tech = run(["kv_fp8"])
    assert flag.memory.kv_cache_bytes == tech.memory.kv_cache_bytes
    assert tech.tpot_s >= flag.tpot_s          # the technique also pays the conversions
