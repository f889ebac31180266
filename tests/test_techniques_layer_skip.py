"""Family H (early exit and layer skipping): executed layers per decode step, batch unions, KV fill
and storage, fractional layer counts, claims, errors."""
import pytest

from whatif.claims import evaluate
from whatif.claims.family_h import CLAIMS
from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.estimate import Workload
from whatif.roofline.graph import forward_ops
from whatif.roofline.ops import gemm
from whatif.roofline.techniques.layer_skip import (expected_max_uniform, linear_budget, partial_op, run_layers,
                                                   union_share)
from whatif.roofline.techniques.registry import parse_technique, technique_set
from whatif.scenario import Scenario

MODEL = "llama-3.1-8b"


def run(techniques=(), batch=1, prompt=1024, output=128, model=MODEL, **kw):
    return Scenario(model=model, hardware="h100-sxm", workload=Workload(batch, prompt, output),
                    techniques=tuple(techniques), **kw).run(with_max_batch=False)


def speedup(technique, batch=1, **kw):
    return run([], batch, **kw).tpot_s / run([technique], batch, **kw).tpot_s


def decode_ops(technique, context=1024, batch=1, model=MODEL, tp=1):
    m = Scenario(model=model).resolve()[0]
    return forward_ops(m, ForwardBatch.decode(batch, context), Parallelism(tp=tp), Precision(),
                       techs=technique_set([technique] if technique else []))


def executed(ops, name):
    """Expected executed instances of the op `name` (a partial instance counts its share of the work)."""
    def work(op):
        return op.flops + sum(op.bytes.values())
    full = max(work(op) for op in ops if op.name == name)
    return sum(op.count * work(op) / full for op in ops if op.name == name)


# ----------------------------------------------------------------------------- cost math

def test_union_and_expected_max():
    assert union_share(0.25, 1) == pytest.approx(0.75)
    assert union_share(0.25, 2) == pytest.approx(1 - 0.0625)
    assert union_share(0.5, 64) == pytest.approx(1.0)
    assert expected_max_uniform(0.25, 1) == pytest.approx(0.625)      # the mean of U[0.25, 1]
    assert expected_max_uniform(0.25, 3) == pytest.approx(1 - 0.75 / 4)
    assert expected_max_uniform(1.0, 8) == 1.0


def test_linear_budget_is_monotone_and_clamped():
    values = [linear_budget(p, 100, 50, 0.8, 0.2) for p in range(0, 200, 10)]
    assert values == sorted(values, reverse=True)
    assert values[0] == 0.8 and values[-1] == pytest.approx(0.2)
    assert linear_budget(125, 100, 50, 0.8, 0.2) == pytest.approx(0.5)


def test_fractional_layer_count_keeps_the_work_of_the_expectation():
    op = gemm("mlp_down", 4, 4096, 14336, 2, 2, "bf16", count=32)
    partial = partial_op(op, 0.4)
    assert partial.count == 1 and partial.shape.n == pytest.approx(0.4 * 4096)
    assert partial.flops == pytest.approx(0.4 * op.flops) and partial.hbm_bytes == pytest.approx(0.4 * op.hbm_bytes)
    ops = decode_ops(None)
    out = run_layers(ops, lambda o: o.count * 0.7)     # 22.4 of 32 layers
    assert executed(out, "mlp_down") == pytest.approx(22.4)
    assert executed(out, "lm_head") == 1 and executed(out, "embedding") == 1
    assert sum(o.count for o in out if o.name == "qkv_proj") == 23    # 22 whole + one partial kernel


# ----------------------------------------------------------------------------- mechanisms

@pytest.mark.parametrize(("name", "key", "values"), [
    ("layer_skip", "share", (0.0, 0.25, 0.5, 0.75)),
    ("ffn_skip", "share", (0.0, 0.15, 0.3, 0.6)),
    ("early_exit", "min_exit", (1.0, 0.75, 0.5, 0.25)),
    ("skip_decode", "min_layers", (1.0, 0.75, 0.5, 0.25)),
])
def test_cost_falls_with_the_skip_share(name, key, values):
    extra = ",max_layers=1,prompt=1024,length=128" if name == "skip_decode" else ""
    tpot = [run([f"{name}:{key}={v}{extra}"]).tpot_s for v in values]
    assert all(b < a for a, b in zip(tpot, tpot[1:])), tpot
    assert tpot[0] <= run([]).tpot_s * 1.01   # no skip: the baseline (early exit pays its check)


def test_skip_decode_runs_fewer_layers_later_in_the_generation():
    t = "skip_decode:max_layers=1.0,min_layers=0.25,prompt=1000,length=100"
    layers = [executed(decode_ops(t, context=c), "qkv_proj") for c in (1000, 1025, 1050, 1100, 1500)]
    assert layers[0] == pytest.approx(32) and layers[-1] == pytest.approx(8)
    assert all(b < a for a, b in zip(layers[:4], layers[1:4]))
    assert layers[3] == layers[4]
    # a batch of groups at different positions runs the earliest group's (largest, nested) layer set
    m = Scenario(model=MODEL).resolve()[0]
    mixed = forward_ops(m, ForwardBatch(((1, 1025, 2), (1, 1100, 2))), Parallelism(), Precision(),
                        techs=technique_set([t]))
    assert executed(mixed, "qkv_proj") == pytest.approx(layers[1])


def test_skip_decode_stores_less_kv_and_keeps_prefill():
    t = "skip_decode:max_layers=0.5,min_layers=0.5,prompt=1024,length=1024"
    base, skip = run([], prompt=1024, output=1024), run([t], prompt=1024, output=1024)
    assert skip.memory.kv_cache_bytes == pytest.approx(base.memory.kv_cache_bytes * 0.75)   # half of half
    assert skip.ttft_s == pytest.approx(base.ttft_s)
    assert skip.tpot_s < base.tpot_s


def test_ffn_skip_keeps_attention_and_kv():
    base, skip = run([], batch=4), run(["ffn_skip:share=0.5,per_token=false"], batch=4)
    assert skip.memory.kv_cache_bytes == base.memory.kv_cache_bytes
    ops = decode_ops("ffn_skip:share=0.5,per_token=false")
    assert executed(ops, "attention") == executed(ops, "kv_cache_write") == executed(ops, "qkv_proj") == 32
    assert executed(ops, "mlp_gate_up") == executed(ops, "mlp_down") == executed(ops, "post_attn_norm") == 16
    tp2 = decode_ops("ffn_skip:share=0.5,per_token=false", tp=2)
    assert executed(tp2, "attn_allreduce") == 32 and executed(tp2, "mlp_allreduce") == 16
    assert skip.tpot_s < base.tpot_s


def test_ffn_skip_keeps_the_shared_residual_of_a_parallel_block():
    ops = decode_ops("ffn_skip:share=0.5,per_token=false", model="phi-2", tp=2)
    layers = executed(ops, "input_norm")
    assert executed(ops, "mlp_up") == layers / 2
    assert executed(ops, "residual_add_2") == executed(ops, "mlp_allreduce") == layers


def test_per_row_choices_lose_their_gain_as_the_batch_grows():
    # per-token FFN skipping and FiRST's per-sequence sets run the batch's union; unified skipping does not
    for per_row, synced in (("ffn_skip:share=0.3", "ffn_skip:share=0.3,per_token=false"),
                            ("layer_skip:share=0.3,per_sequence=true", "layer_skip:share=0.3")):
        assert speedup(per_row, 1) == pytest.approx(speedup(synced, 1))
        assert speedup(per_row, 16) < 1.01 < speedup(synced, 16)


def test_early_exit_gain_shrinks_with_the_batch():
    gains = [speedup("early_exit", b) for b in (1, 4, 16, 64)]
    assert gains == sorted(gains, reverse=True)
    assert gains[0] > 1.3 and gains[-1] < 1.05
    ops = decode_ops("early_exit", batch=3)
    assert executed(ops, "qkv_proj") == pytest.approx(32 * expected_max_uniform(0.25, 3))


def test_early_exit_kv_fill_costs_the_skipped_layers_projections():
    copy, none = decode_ops("early_exit:kv_fill=copy"), decode_ops("early_exit:kv_fill=none")
    assert executed(copy, "kv_fill_proj") == pytest.approx(32 - executed(copy, "qkv_proj")) == 12
    assert not any(op.name.startswith("kv_fill_") for op in none)
    # every layer ends up with the token's K/V under copy
    assert executed(copy, "kv_cache_write") + executed(copy, "kv_fill_kv_cache_write") == 32
    assert run(["early_exit:kv_fill=none"]).tpot_s < run(["early_exit:kv_fill=copy"]).tpot_s
    assert run(["early_exit:confidence=softmax"]).tpot_s > run([]).tpot_s   # a vocabulary GEMM per layer


def test_prefill_runs_every_layer():
    for t in ("layer_skip", "early_exit", "ffn_skip:per_token=false"):
        assert run([t]).ttft_s == pytest.approx(run([]).ttft_s)


def test_two_layer_budgets_conflict():
    for pair in (["skip_decode", "layer_skip"], ["early_exit", "ffn_skip"]):
        with pytest.raises(WhatifError, match="cannot be combined"):
            technique_set(pair)


@pytest.mark.parametrize(("spec", "pattern"), [
    ("layer_skip:share=1", "layer_skip:share=1.0: must be in \\[0, 1\\)"),
    ("ffn_skip:share=-0.1", "ffn_skip:share=-0.1: must be"),
    ("early_exit:min_exit=0", "early_exit:min_exit=0.0: must be in \\(0, 1\\]"),
    ("early_exit:kv_fill=zero", "early_exit:kv_fill='zero': must be one of copy, none"),
    ("early_exit:confidence=entropy", "must be one of state, softmax"),
    ("skip_decode:max_layers=0.2,min_layers=0.5", "skip_decode:max_layers=0.2: must be from min_layers"),
    ("skip_decode:length=0", "skip_decode:length=0: must be"),
    ("skip_decode:prompt=-1", "skip_decode:prompt=-1: must be"),
])
def test_bad_params_name_the_key(spec, pattern):
    with pytest.raises(WhatifError, match=pattern):
        parse_technique(spec)


# ----------------------------------------------------------------------------- claims

@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.band], ids=lambda c: f"{c.technique}-{c.setup['model']}")
def test_family_h_claims_within_band(claim):
    outcome = evaluate(claim)
    assert outcome.in_band, (claim.technique, claim.metric, outcome.gain, claim.band)


def test_layer_ratio_claims_stay_below_the_layer_ratio():
    # whatif keeps the LM head and embedding: never the full nominal layer ratio
    for claim in CLAIMS:
        if claim.claimed:
            assert evaluate(claim).gain < claim.claimed
