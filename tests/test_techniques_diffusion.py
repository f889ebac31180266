"""Family G, diffusion LLMs: denoising steps as bidirectional passes, block schedule, prefix and dual
caches, memory, errors and the family-G claims."""
import pytest

from whatif.claims import evaluate
from whatif.claims.family_g import CLAIMS
from whatif.errors import WhatifError
from whatif.roofline.attention import causal_pairs
from whatif.roofline.config import ForwardBatch
from whatif.roofline.estimate import Workload
from whatif.roofline.forward_pass import time_pass
from whatif.roofline.memory import stored_kv_bytes
from whatif.roofline.pass_setup import pass_setup
from whatif.roofline.techniques.diffusion import STAND_IN_PREFILL, bidirectional_share, block_passes, block_span
from whatif.roofline.techniques.registry import parse_technique, technique_set
from whatif.scenario import Scenario

WL = Workload(1, 512, 256)


def run(techniques=(), workload=WL, model="llada-8b", hardware="h100-sxm"):
    return Scenario(model=model, hardware=hardware, workload=workload,
                    techniques=tuple(techniques)).run(with_max_batch=False)


def setup_of(e):
    """The PassSetup an estimate ran with (diffusion transforms neither model nor precision)."""
    return pass_setup(e.model, e.system, e.parallel, e.precision, e.efficiency, 0.9, e.techniques)


def attention(p):
    return next(t.op for t in p.op_times if t.op.name == "attention")


@pytest.mark.parametrize("batch", [1, 8])
def test_one_token_per_step_without_cache_is_slower_than_autoregressive(batch):
    wl = Workload(batch, 512, 256)
    ar, dllm = run([], wl), run(["diffusion"], wl)
    assert dllm.decode_round.tokens == pytest.approx(1.0)
    assert dllm.e2e_s > 2 * ar.e2e_s
    assert dllm.tpot_s > 2 * ar.tpot_s
    # each step recomputes prompt + whole generation, each with logits
    assert dllm.decode.batch.groups == ((768, 0, batch),) and dllm.decode.batch.logit_rows == 768 * batch


@pytest.mark.parametrize("cache", ["none", "prefix", "dual"])
def test_fewer_steps_are_never_slower(cache):
    runs = [run([f"diffusion:steps={s},cache={cache}"]) for s in (256, 128, 64, 30, 8)]
    for more, fewer in zip(runs, runs[1:]):
        assert fewer.e2e_s <= more.e2e_s * (1 + 1e-9)
        assert fewer.tpot_s <= more.tpot_s * (1 + 1e-9)
        assert fewer.ttft_s <= more.ttft_s * (1 + 1e-9)
    # without a cache every step is the same pass: time scales with the steps
    if cache == "none":
        decode = [r.e2e_s - r.prefill[0][0].time_s for r in runs]
        assert decode[0] / decode[2] == pytest.approx(4.0, rel=1e-6)


def test_caches_order_per_step_at_long_prompts():
    wl = Workload(4, 3072, 512)
    step = {c: run([f"diffusion:cache={c}"], wl).decode_round for c in ("none", "prefix", "dual")}
    assert step["dual"].time_s < step["prefix"].time_s < step["none"].time_s
    # the per-block refresh is a full pass; dual's regular step computes only the block
    assert step["dual"].detail["computed_per_step"] == 32
    # (the refresh also writes the cache, which an uncached pass skips)
    assert step["none"].verify.time_s < step["dual"].detail["refresh_s"] < 1.02 * step["none"].verify.time_s
    assert step["none"].overhead_s == 0 and step["prefix"].overhead_s > 0


def test_block_passes_follow_fast_dllm():
    assert block_span(70, 32, 256) == (64, 32)
    assert block_span(250, 32, 250) == (224, 26)          # a short last block
    assert block_passes("none", 512, 256, 64, 32) == ((768, 0), (768, 0))
    assert block_passes("prefix", 512, 256, 64, 32) == ((768, 0), (192, 576))
    assert block_passes("dual", 512, 256, 64, 32) == ((768, 0), (32, 736))


def test_attention_is_bidirectional_in_every_pass():
    assert bidirectional_share(768, 0) * causal_pairs(768, 0) == pytest.approx(768 * 768)
    assert bidirectional_share(32, 736) * causal_pairs(32, 736) == pytest.approx(32 * 768)
    e = run(["diffusion:cache=dual"], Workload(2, 512, 256))
    q, c, n = e.decode.batch.groups[0]
    assert attention(e.decode).shape.pairs == pytest.approx(n * q * (c + q))
    base = run([], Workload(2, 512, 256))   # the autoregressive model keeps its causal pairs
    assert attention(base.prefill[0][0]).shape.pairs == pytest.approx(2 * causal_pairs(512, 0))


def test_no_separate_prefill_only_a_one_token_stand_in():
    e = run(["diffusion"])
    assert [p.batch.groups for p, _ in e.prefill] == [((1, 0, 1),)] == [tuple(STAND_IN_PREFILL)]
    # TTFT: the stand-in, then every step of the first block (its tokens become final together)
    per_block = run(["diffusion:block=64"])
    assert per_block.ttft_s == pytest.approx(e.prefill[0][0].time_s + 64 * per_block.tpot_s, rel=1e-6)
    whole = run(["diffusion:block=0"])
    assert whole.ttft_s == pytest.approx(whole.e2e_s, rel=1e-9)


def test_cached_mode_e2e_is_the_sum_of_its_block_passes():
    wl = Workload(2, 1024, 256)
    for cache in ("prefix", "dual"):
        e = run([f"diffusion:cache={cache},steps=64"], wl)
        s = setup_of(e)
        exact = e.prefill[0][0].time_s
        for b in range(8):
            (q0, c0), (q, c) = block_passes(cache, 1024, 256, 32 * b, 32)
            exact += time_pass(s, ForwardBatch.verify_pass(2, q0, c0), True).time_s
            exact += 7 * time_pass(s, ForwardBatch.verify_pass(2, q, c), True).time_s
        assert e.e2e_s == pytest.approx(exact, rel=0.03)   # 5 sampled contexts, trapezoid between


def test_memory_no_kv_without_cache_full_kv_with_one():
    techs = {c: technique_set([f"diffusion:cache={c}"]) for c in ("none", "dual")}
    none, dual = run(["diffusion"]), run(["diffusion:cache=dual"])
    assert stored_kv_bytes(none.model, none.parallel, none.precision, techs["none"], 768) == 0
    assert stored_kv_bytes(dual.model, dual.parallel, dual.precision, techs["dual"], 768) == \
        stored_kv_bytes(dual.model, dual.parallel, dual.precision, technique_set([]), 768)
    assert "kv_cache_write" not in {t.op.name for t in none.decode.op_times}
    # both keep a full pass's working set per sequence (its logits at every position dominate)
    working = none.memory.kv_cache_bytes
    assert working > 768 * none.model.vocab_size * 4
    assert dual.memory.kv_cache_bytes == pytest.approx(working + run([]).memory.kv_cache_bytes, rel=1e-6)


def test_steps_spellings_and_candidates():
    assert run(["diffusion:steps=0"]).e2e_s == run(["diffusion:steps=256"]).e2e_s
    assert run(["diffusion:tokens_per_step=8"]).e2e_s == run(["diffusion:steps=32"]).e2e_s
    one, two = run(["diffusion:steps=64"]), run(["diffusion:steps=64,candidates=2"])
    assert two.decode.batch.sequences == 2 * one.decode.batch.sequences
    assert two.tpot_s > 1.5 * one.tpot_s                   # a compute-bound uncached pass, twice as wide


@pytest.mark.parametrize(("spec", "pattern"), [
    ("diffusion:steps=-1", "diffusion:steps=-1: must be an integer >= 0"),
    ("diffusion:block=-32", "diffusion:block=-32: must be"),
    ("diffusion:cache=full", "diffusion:cache='full': must be one of none, prefix, dual"),
    ("diffusion:tokens_per_step=-2", "diffusion:tokens_per_step=-2.0: must be > 0"),
    ("diffusion:steps=30,tokens_per_step=8", "give steps= or tokens_per_step=, not both"),
    ("diffusion:candidates=0", "diffusion:candidates=0: must be an integer >= 1"),
])
def test_bad_parameters_are_clear_errors(spec, pattern):
    with pytest.raises(WhatifError, match=pattern):
        parse_technique(spec)


def test_fewer_steps_than_blocks_is_a_clear_error():
    with pytest.raises(WhatifError, match=r"diffusion:steps=4: 4 steps for 8 blocks of 32 tokens.*block=0"):
        run(["diffusion:steps=4"])
    assert run(["diffusion:steps=4,block=0"]).decode_round.tokens == 64


def test_simulator_refuses_block_decoders():
    from whatif.simulator.iteration_time import IterationTimes
    with pytest.raises(WhatifError, match="diffusion: the serving simulator"):
        IterationTimes(setup_of(run(["diffusion"])), True, 16, 8192, 768)


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.band], ids=lambda c: f"{c.technique}-{c.claimed}")
def test_family_g_claims_within_band(claim):
    outcome = evaluate(claim)
    assert outcome.in_band, (claim.technique, claim.metric, outcome.gain, claim.band)


def test_learn2pd_cache_claim_misses_for_the_stated_reason():
    # evenly spread, 45 steps over 32 blocks leave ~1.4 steps a block: most passes are the full refresh
    claim = next(c for c in CLAIMS if c.claimed == 57.51)
    outcome = evaluate(claim)
    alone = evaluate(next(c for c in CLAIMS if c.claimed == 22.58))
    assert 1.0 < outcome.gain / alone.gain < 2.0 < 57.51 / 22.58
