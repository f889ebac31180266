"""Family F (speculative decoding): each drafter's round (draft, verify pass, tokens gained) moves
the costs it should; speed-ups come out of the roofline, so they fall once a batch makes the verify
pass compute-bound; memory, errors and the CLI report the round."""
from __future__ import annotations

import json

import pytest

from tests.test_cli import run_error, run_json, run_text
from whatif.cli import main
from whatif.specs.models import list_models, load_model
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.decode_round import Round, RoundContext
from whatif.roofline.estimate import Workload
from whatif.roofline.forward_pass import time_pass
from whatif.roofline.pass_setup import pass_setup
from whatif.roofline.techniques.registry import parse_technique
from whatif.scenario import Scenario

TARGET = "llama-2-7b"
SPEC = "speculative:draft=llama-68m,k=4,alpha=0.8"
WIDE_TREE = "speculative:draft=llama-68m,tree=4x3x2x1,alpha=0.8"


def run(techniques, model=TARGET, hardware="h100-sxm", batch=1, prompt=512, output=128, **kw):
    return Scenario(model=model, hardware=hardware, workload=Workload(batch=batch, prompt=prompt, output=output),
                    techniques=tuple(techniques), **kw).run(with_max_batch=False)


def context(technique, model=TARGET, hardware="h100-sxm", batch=1, ctx=1024, gpus=None, extra=()):
    """The RoundContext an estimate builds for a decode round of `batch` sequences after `ctx` tokens."""
    sc = Scenario(model=model, hardware=hardware, gpus=gpus, techniques=(*extra, technique))
    m, system, par, eff = sc.resolve()
    setup = pass_setup(m, system, par, sc.precision, eff, sc.utilization(), sc.technique_set())
    return RoundContext(setup=setup, batch=batch, context=ctx, prompt=ctx, output=256, cuda_graphs=True)


def round_at(technique, **kw) -> Round:
    rc = context(technique, **kw)
    return rc.setup.techniques.decoder.round(rc)


def plain_step_s(batch, ctx, model=TARGET, hardware="h100-sxm") -> float:
    """One autoregressive decode step of the target, no technique."""
    m, system, par, eff = Scenario(model=model, hardware=hardware).resolve()
    setup = pass_setup(m, system, par, Precision(), eff, 0.9)
    return time_pass(setup, ForwardBatch.decode(batch, ctx), True).time_s


def verify_tokens(r: Round) -> int:
    return r.verify.batch.tokens // r.verify.batch.sequences


def op(passtime, name):
    return next(t.op for t in passtime.op_times if t.op.name == name)


# ---------------------------------------------------------------- the round and its verify pass

def test_verify_pass_computes_logits_at_every_verified_token():
    for spec, width in ((SPEC, 5), ("medusa", 65), ("eagle", 46), (WIDE_TREE, 65),
                        ("ngram:candidates=3,k=2", 7)):
        r = round_at(spec, batch=8)
        assert verify_tokens(r) == width, spec                        # the tree's nodes + the pass's own token
        assert op(r.verify, "lm_head").shape.m == 8 * width        # logits at every verified token
        assert op(r.verify, "sampling").shape.elements == 8 * width * 32000
    plain = run([]).decode
    assert op(plain, "lm_head").shape.m == 1


def test_draft_steps_follow_the_tree_depth():
    for spec, steps in ((SPEC, 4), ("speculative:draft=llama-68m,tree=3x2", 2), (WIDE_TREE, 4), ("eagle", 5)):
        assert round_at(spec).detail["draft_steps"] == steps


def test_draft_model_steps_and_first_step_catch_up():
    """The drafter runs k one-token steps; its first takes in the verify pass's new token, and also
    the deepest draft (which it never ran) when every draft was accepted."""
    batch, ctx, k = 64, 1024, 4
    rc = context(f"speculative:draft=llama-68m,k={k},alpha=0", batch=batch, ctx=ctx)
    draft = rc.other_model(load_model("llama-68m"), 1)

    def step(q, depth):
        return time_pass(draft, ForwardBatch.verify_pass(batch, q, ctx + depth), True).time_s

    none = rc.setup.techniques.decoder.round(rc)
    assert none.draft_s == pytest.approx(sum(step(1, d) for d in range(k)))
    all_ = round_at(f"speculative:draft=llama-68m,k={k},alpha=1", batch=batch, ctx=ctx)
    assert all_.tokens == k + 1
    assert all_.draft_s == pytest.approx(step(2, 0) + sum(step(1, d) for d in range(1, k)))
    # EAGLE's head re-runs every accepted token (it needs the target's feature at each)
    eagle = [round_at(f"eagle:tree=,k={k},alpha={a}", batch=batch, ctx=ctx) for a in (0.0, 1.0)]
    assert eagle[1].draft_s > eagle[0].draft_s
    spec = parse_technique("eagle")
    assert spec.catch_up_tokens(3.2, [0.8, 0.6]) == 3.2
    # a full verify pass writes the draft layers' KV; verifying only the layers after the exit (reuse) does not
    assert parse_technique("self_speculative:reuse=false").catch_up_tokens(3.2, [0.8, 0.6]) == 1.0
    assert parse_technique("self_speculative").catch_up_tokens(3.2, [0.8, 0.6]) == pytest.approx(1.6)
    assert parse_technique("speculative").catch_up_tokens(3.2, [0.8, 0.6]) == pytest.approx(1.6)


def test_a_semi_autoregressive_head_drafts_several_levels_per_pass():
    """FLASH: tokens_per_pass=k runs the head once per k tree levels; the tokens per round are unchanged."""
    eagle = parse_technique("eagle")
    assert eagle.pass_widths([3, 2, 2, 1, 1]) == [3, 2, 2, 1, 1]
    assert parse_technique("eagle:tokens_per_pass=2").pass_widths([3, 2, 2, 1, 1]) == [2, 1, 1]
    assert parse_technique("eagle:tokens_per_pass=5").pass_widths([3, 2, 2, 1, 1]) == [1]
    one, two = (round_at(f"eagle:tokens_per_pass={k}", batch=1, ctx=1024) for k in (1, 2))
    assert two.tokens == one.tokens and two.draft_s < one.draft_s
    with pytest.raises(Exception, match="tokens_per_pass"):
        parse_technique("eagle:tokens_per_pass=0")


def test_a_zero_cost_drafter_with_no_acceptance_is_never_faster():
    for batch in (1, 8, 64, 256):
        for ctx in (128, 2048):
            plain = plain_step_s(batch, ctx)
            for k in (1, 4, 16, 17):   # 17 verified tokens: past the decode attention kernel
                r = round_at(f"ngram:lookup_us=0,alpha=0,k={k}", batch=batch, ctx=ctx)
                assert r.tokens == 1 and r.draft_s == 0
                assert r.per_token_s >= plain * (1 - 1e-9), (batch, ctx, k)
    for batch in (1, 32):
        base, e = run([], batch=batch), run(["ngram:lookup_us=0,alpha=0"], batch=batch)
        assert e.tpot_s >= base.tpot_s and e.e2e_s >= base.e2e_s


def speedups(spec, batches, **kw):
    return [run([], batch=b, **kw).tpot_s / run([spec], batch=b, **kw).tpot_s for b in batches]


BATCHES = (1, 4, 16, 64, 256, 512)


def test_speedup_falls_as_the_batch_passes_the_ridge_point():
    """At batch 1 the verify pass costs about a decode step (both read the weights once); as the
    batch grows its k+1 tokens per sequence make it compute-bound, and drafting gains less."""
    chain = speedups(SPEC, BATCHES)
    assert chain[0] > 2
    assert max(chain[3:]) < 0.85 * chain[0]
    for spec in (WIDE_TREE, "medusa"):
        s = speedups(spec, BATCHES)
        assert s[0] > 2, spec
        assert s[-1] < 0.5 * s[0] and s[-1] < 1, spec       # a wide tree loses outright at a large batch
        assert all(x < 1 for x in s[3:]), spec


# ---------------------------------------------------------------- batch policies

def test_min_policy_falls_to_one_token_per_round_and_ragged_does_not():
    ragged = [round_at("speculative:draft=llama-68m,alpha=0.8", batch=b).tokens for b in (1, 8, 64, 512)]
    least = [round_at("speculative:draft=llama-68m,alpha=0.8,batch_policy=min", batch=b).tokens
             for b in (1, 8, 64, 512)]
    assert ragged == pytest.approx([ragged[0]] * 4)
    assert least[0] == pytest.approx(ragged[0])
    assert all(a > b for a, b in zip(least, least[1:])) and least[-1] < 1.01


def test_realign_adds_overhead_that_grows_with_context():
    spec = "speculative:draft=llama-68m,batch_policy=realign"
    assert round_at(spec, batch=1).overhead_s > 0                        # the released loop runs at batch 1 too
    assert round_at("speculative:draft=llama-68m", batch=8, ctx=3000).overhead_s == 0
    short, long = round_at(spec, batch=8, ctx=300), round_at(spec, batch=8, ctx=3000)
    assert 0 < short.overhead_s < long.overhead_s
    # the copies' bytes grow 10x; the per-sequence bound reads (.item()) and index ops do not
    assert long.overhead_s > 3 * short.overhead_s
    assert long.time_s == pytest.approx(long.draft_s + long.verify.time_s + long.overhead_s)


# ---------------------------------------------------------------- PEARL, SpecDec++, SpecTr

@pytest.mark.parametrize("batch", [1, 16, 128])
def test_parallel_drafting_is_never_slower_and_takes_the_longer_of_the_two(batch):
    for draft in ("llama-68m", "llama-2-7b"):
        seq = round_at(f"speculative:draft={draft}", batch=batch)
        par = round_at(f"speculative:draft={draft},parallel=true", batch=batch)
        assert par.overlap and not seq.overlap
        assert par.time_s == pytest.approx(max(par.draft_s, par.verify.time_s))
        assert seq.time_s == pytest.approx(seq.draft_s + seq.verify.time_s)
        assert par.time_s <= seq.time_s
    a, b = run(["speculative:draft=llama-2-7b"], batch=batch), run(["speculative:draft=llama-2-7b,parallel=true"],
                                                                  batch=batch)
    assert b.tpot_s < a.tpot_s and b.ttft_s < a.ttft_s       # the drafter's prefill runs beside the target's
    assert b.memory.weights_bytes < a.memory.weights_bytes   # and it sits on its own GPU


def test_adaptive_that_never_stops_equals_fixed_k():
    for batch in (1, 16):
        fixed = round_at("speculative:draft=llama-68m,k=5,alpha=0.8", batch=batch)
        never = round_at("speculative:draft=llama-68m,k=5,alpha=0.8,adaptive=true,spread=1e7,stop=0.7,head_weight=1",
                         batch=batch)
        assert never.tokens == pytest.approx(fixed.tokens, rel=1e-3)
        assert verify_tokens(never) == verify_tokens(fixed) == 6
        assert never.draft_s == pytest.approx(fixed.draft_s, rel=1e-3)
    early = round_at("speculative:draft=llama-68m,k=5,alpha=0.8,adaptive=true,stop=0.3", batch=1)
    assert early.detail["drafted_per_sequence"] < 5 and early.tokens < fixed.tokens


def test_spectr_candidates_raise_tokens_per_round():
    rounds = [round_at(f"speculative:draft=llama-68m,k=3,alpha=0.6,candidates={c}") for c in (1, 2, 4)]
    assert rounds[0].tokens < rounds[1].tokens < rounds[2].tokens
    assert [verify_tokens(r) for r in rounds] == [4, 7, 13]
    assert rounds[0].draft_s <= rounds[2].draft_s


# ---------------------------------------------------------------- memory

def test_draft_model_weights_and_kv_take_memory_and_batch():
    wl = dict(batch=8, prompt=2048, output=256)
    base, small, big = run([], **wl), run(["speculative:draft=llama-68m"], **wl), run(
        ["speculative:draft=llama-2-7b"], **wl)
    draft = load_model("llama-2-7b")
    assert big.memory.weights_bytes == pytest.approx(2 * base.memory.weights_bytes, rel=0.02)
    assert big.memory.kv_cache_bytes == pytest.approx(2 * base.memory.kv_cache_bytes)   # same shape: same KV
    assert base.memory.weights_bytes < small.memory.weights_bytes < big.memory.weights_bytes
    assert base.memory.kv_cache_bytes < small.memory.kv_cache_bytes < big.memory.kv_cache_bytes
    assert base.max_batch >= small.max_batch > big.max_batch
    assert big.max_batch < 0.6 * base.max_batch
    # RAPID's short draft context caps the drafter's cache
    short = run(["speculative:draft=llama-2-7b,draft_context=256"], **wl)
    assert short.memory.kv_cache_bytes == pytest.approx(base.memory.kv_cache_bytes * (1 + 256 / 2304))
    assert short.decode_round.draft_s < big.decode_round.draft_s
    assert draft.vocab_size == 32000


def test_medusa_and_eagle_add_head_weights():
    wl = dict(batch=8, prompt=2048, output=256)
    base, medusa, eagle = run([], **wl), run(["medusa"], **wl), run(["eagle"], **wl)
    m = load_model(TARGET)
    d, v = m.hidden_size, m.vocab_size
    assert medusa.memory.weights_bytes - base.memory.weights_bytes == pytest.approx(4 * (d * d + d * v) * 2)
    assert run(["medusa:heads=5,tree=4x3x2x1x1"], **wl).memory.weights_bytes > medusa.memory.weights_bytes
    assert medusa.memory.kv_cache_bytes == base.memory.kv_cache_bytes
    added = eagle.memory.weights_bytes - base.memory.weights_bytes
    layer = base.memory.weights_bytes / m.num_layers
    assert 0.9 * layer < added < 1.5 * layer                        # one decoder layer and the feature fuse
    assert eagle.memory.kv_cache_bytes == pytest.approx(base.memory.kv_cache_bytes * (1 + 1 / m.num_layers))
    for e in (medusa, eagle):
        assert e.max_batch <= base.max_batch


def test_medusa_heads_under_tensor_parallelism():
    """vLLM replicates the residual blocks and splits each head's LM head by vocabulary, then
    gathers the logits: the heads' bytes per GPU shrink less than 1/tp."""
    t = parse_technique("medusa")
    m = load_model(TARGET)
    prec = Precision()
    one, two = t.extra_weight_bytes(m, Parallelism(1), prec), t.extra_weight_bytes(m, Parallelism(2), prec)
    d, v = m.hidden_size, m.vocab_size
    assert two == pytest.approx(4 * (d * d + d * v / 2) * 2) and one / 2 < two < one
    names = [o.name for o in t._head_ops(m, 2, 8, prec)]
    assert "medusa_logits_gather" in names and "medusa_logits_gather" not in [o.name for o in t._head_ops(m, 1, 8,
                                                                                                            prec)]
    r = round_at("medusa", hardware="dgx-h100", gpus=2, batch=8)
    assert r.draft_s > 0 and op(r.verify, "lm_head").shape.m == 8 * 65


def test_sparse_self_speculation_drafts_cheaper_with_a_smaller_budget_at_long_context():
    kw = dict(model="llama-3.1-8b", batch=8, ctx=32768)
    drafts = [round_at(f"sparse_self_speculative:budget={b}", **kw).draft_s for b in (16384, 4096, 1024)]
    assert drafts[0] > drafts[1] > drafts[2]
    full = round_at("self_speculative:draft_layers=0.99", **kw)   # about the target drafting with its whole cache
    assert drafts[2] < 0.5 * full.draft_s
    # at a context below the budget the draft reads everything: no cheaper than the target's own steps
    short = round_at("sparse_self_speculative:budget=4096", model="llama-3.1-8b", batch=8, ctx=2048)
    assert short.draft_s >= 4 * plain_step_s(8, 2048, model="llama-3.1-8b") * 0.99


# ---------------------------------------------------------------- composition with KV techniques

def test_speculation_composes_with_kv_compression():
    kw = dict(batch=16, ctx=3000)
    for spec in ("speculative:draft=llama-68m", "self_speculative", "medusa", "ngram"):
        plain, kivi = round_at(spec, **kw), round_at(spec, extra=("kivi",), **kw)
        assert kivi.verify.time_s < plain.verify.time_s, spec          # the verify pass reads the 2-bit cache
        assert op(kivi.verify, "attention").hbm_bytes < op(plain.verify, "attention").hbm_bytes / 2
        assert kivi.tokens == plain.tokens
    # early-exit layers are the target's own: they read its compressed cache too; a separate drafter does not
    assert round_at("self_speculative", extra=("kivi",), **kw).draft_s < round_at("self_speculative", **kw).draft_s
    assert round_at("speculative:draft=llama-68m", extra=("kivi",), **kw).draft_s == pytest.approx(
        round_at("speculative:draft=llama-68m", **kw).draft_s)
    e = run(["kivi", SPEC], batch=8, prompt=2048, output=256)
    assert e.tpot_s < run(["kivi"], batch=8, prompt=2048, output=256).tpot_s


# ---------------------------------------------------------------- drafter choice and errors

def test_draft_auto_is_the_smallest_shipped_model_with_the_targets_vocabulary():
    def size(m):
        return m.num_layers * m.hidden_size ** 2

    shipped = [load_model(n) for n in list_models()]
    for target in ("llama-2-7b", "llama-3-8b", "llama-3.1-8b"):
        t = load_model(target)
        d = parse_technique("speculative").draft_model(t)
        assert d.vocab_size == t.vocab_size and size(d) < size(t)
        assert size(d) == min(size(m) for m in shipped if m.vocab_size == t.vocab_size)
    assert parse_technique("speculative").draft_model(load_model("llama-2-7b")).num_layers <= 2


def test_bad_parameters_are_one_line_cli_errors(capsys):
    args = ("estimate", "--model", TARGET, "--technique")
    cases = {
        "speculative:k=0": "k=0",
        "speculative:alpha=1.5": "alpha=1.5",
        "speculative:tree=2x": "tree='2x'",
        "speculative:batch_policy=foo": "batch_policy='foo'",
        "speculative:alphas=0.9/2": "alphas=",
        "speculative:adaptive=true,tree=2x2": "adaptive=true",
        "speculative:draft=nosuch": "draft",
        "speculative:draft_tp=2": "draft_tp=2",
        "medusa:heads=2": "medusa:tree=",
        "ngram:lookup_us=-1": "lookup_us=-1",
        "sparse_self_speculative:budget=0": "budget=0",
    }
    for spec, key in cases.items():
        line = run_error(capsys, *args, spec)
        assert f"--technique {spec.split(':')[0]}" in line and key in line, line
    line = run_error(capsys, "estimate", "--model", "llama-3-8b", "--technique", "speculative:draft=llama-68m")
    assert "vocabulary" in line and "llama-68m" in line and "128256" in line
    line = run_error(capsys, "estimate", "--model", TARGET, "--technique", "speculative", "--technique", "medusa")
    assert "cannot be combined" in line


# ---------------------------------------------------------------- CLI

def test_estimate_prints_and_exports_the_round(capsys):
    args = ("estimate", "--technique", "speculative:draft=llama-68m,k=4,alpha=0.8", "--model", TARGET)
    text = run_text(capsys, *args, "--no-ops")
    for row in ("tokens per round (expected)", "draft time per round", "verify pass", "TPOT (effective"):
        assert row in text
    assert "5 tokens/sequence" in text
    d = run_json(capsys, *args)
    r = d["decode_round"]
    assert r["tokens_per_round"] == pytest.approx(1 + 0.8 + 0.8 ** 2 + 0.8 ** 3 + 0.8 ** 4)
    assert r["verify_tokens"] == 5 and r["draft_s"] > 0 and not r["draft_overlaps_verify"]
    assert r["round_s"] == pytest.approx(r["draft_s"] + r["verify_s"] + r["overhead_s"])
    assert r["time_per_token_s"] == pytest.approx(r["round_s"] / r["tokens_per_round"])
    assert run_json(capsys, "estimate", "--model", TARGET)["decode_round"] is None


def test_compare_with_speculative_variants(capsys):
    d = run_json(capsys, "compare", "--model", TARGET, "--variant", SPEC, "--variant", "medusa")
    rows = d["rows"]
    assert [r["label"] for r in rows] == ["baseline", SPEC, "medusa"]
    for r in rows[1:]:
        assert r["vs_baseline"]["tpot_speedup"] > 2
        assert r["vs_baseline"]["max_batch_ratio"] < 1          # draft weights and caches take HBM
    text = run_text(capsys, "compare", "--model", TARGET, "--variant", SPEC)
    assert "speculative" in text and "TPOT x" in text


def test_show_technique_medusa(capsys):
    text = run_text(capsys, "show", "technique", "medusa")
    assert "medusa" in text and "heads" in text and "family F" in text
    rc = main(["show", "technique", "medusa", "--json"])
    out, _ = capsys.readouterr()
    if rc == 0:
        assert json.loads(out)


def test_adaptive_drafting_is_priced_at_its_expected_step_count():
    """A random draft count costs its mean in drafter steps (SpecDec++ section 3: time linear in the draft
    steps), not the ceiling's: the round's time per token falls smoothly as acceptance rises (it jumped by
    a whole drafter step where the mean crossed an integer)."""
    per_token = []
    for a in (0.70, 0.72, 0.74, 0.76, 0.78, 0.80):
        r = round_at(f"speculative:draft=llama-2-7b,k=20,alpha={a},adaptive=true,stop=0.3,head_weight=1",
                     model="llama-2-13b")
        drafted = r.detail["drafted_per_sequence"]
        assert drafted % 1 > 1e-6                       # a fractional mean, priced as such
        per_token.append((r.draft_s + r.verify.time_s) / r.tokens)
    assert all(b < a for a, b in zip(per_token, per_token[1:])), per_token
