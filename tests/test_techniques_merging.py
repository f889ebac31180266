"""The techniques built for issue 41 from their abstracts: family C's merging and draft-scored variants
(KVMerger, EMS, Elastic Cache, PrefixKV, TIM, SpecKV, SpecPC), family D's HiP and family F's Hidden
Transfer and S2D. Each test checks the cost its mechanism states, so a wrong hook fails it."""
from __future__ import annotations

import math

import pytest

from whatif.errors import WhatifError
from whatif.roofline.attention import causal_pairs
from whatif.roofline.estimate import Workload
from whatif.roofline.techniques.registry import all_techniques, make_technique, parse_technique
from whatif.scenario import Scenario
from tests.test_techniques_speculative import context, round_at

A100 = "a100-sxm-80gb"
BUILT = ("kvmerger", "ems", "elastic_cache", "prefixkv", "tim", "speckv", "specpc", "hip", "actqkv",
         "hidden_transfer", "s2d")


def run(techniques=(), model="llama-3.1-8b", batch=2, prompt=8192, output=256, **kw):
    return Scenario(model=model, hardware=A100, workload=Workload(batch, prompt, output),
                    techniques=tuple(techniques), **kw).run(with_max_batch=False)


def ops(e, phase):
    passes = [p for p, _ in e.prefill] if phase == "prefill" else [e.decode]
    return [t.op for p in passes for t in p.op_times]


def named(e, phase, prefix):
    return [op for op in ops(e, phase) if op.name.startswith(prefix)]


def test_every_built_technique_is_registered_with_its_paper():
    for name in BUILT:
        cls = all_techniques()[name]
        assert cls.paper and len(cls.mechanism()) > 200, name


# ---------------------------------------------------------------- family C: merging
def test_kvmerger_keeps_its_share_of_the_prompt_and_appends_the_generated_tokens():
    t = parse_technique("kvmerger:kept=0.35,prompt=1000")
    assert t.stored_tokens(1000) == pytest.approx(350)
    assert t.stored_tokens(1200) == pytest.approx(550)          # 200 generated tokens kept whole
    base, e = run(), run(["kvmerger:kept=0.35"])
    assert e.memory.kv_cache_bytes == pytest.approx(base.memory.kv_cache_bytes * (0.35 * 8192 + 256) / 8448, rel=1e-3)
    merged = sum(t.op.bytes["hbm"] * n for p, n in e.prefill for t in p.op_times if t.op.name == "kvmerger_merge")
    assert merged and not named(e, "decode", "kvmerger")
    # every K/V of both prompts is read once, the kept share written
    per_token = base.memory.kv_cache_bytes / (2 * 8448 * 32)    # bytes per token and layer (2 sequences, 32 layers)
    assert merged == pytest.approx(2 * 8192 * 1.35 * per_token, rel=1e-3)
    assert e.tpot_s < base.tpot_s


def test_ems_pays_a_global_score_and_a_merge_that_grows_with_its_budget():
    small, big = run(["ems:budget=256"]), run(["ems:budget=1024"])
    assert named(small, "prefill", "ems_global_score") and not named(small, "decode", "ems")
    merge = {b: named(e, "prefill", "ems_merge")[0].flops for b, e in ((256, small), (1024, big))}
    assert merge[1024] > 3 * merge[256]                       # each evicted key meets every kept key
    assert parse_technique("ems:budget=256,prompt=8192").stored_tokens(8192 + 100) == pytest.approx(356)
    assert small.tpot_s < big.tpot_s < run().tpot_s


def test_elastic_cache_merges_one_token_a_step_while_generating():
    e = run(["elastic_cache:kept=0.5"])
    merge = named(e, "decode", "elastic_cache_merge")
    assert len(merge) == 1
    # 2 sequences x 8 KV heads x 128 x K and V, read twice and written once, in bf16
    assert merge[0].bytes["hbm"] == pytest.approx(2 * 8 * 128 * 2 * 3 * 2)
    assert named(e, "prefill", "elastic_cache_anchor_merge")
    assert e.memory.kv_cache_bytes == pytest.approx(run().memory.kv_cache_bytes / 2, rel=1e-6)


def test_prefixkv_costs_what_a_uniform_budget_of_the_same_mean_costs():
    uneven, uniform = run(["prefixkv:kept=0.4"]), run(["h2o:heavy=0.2,recent=0.2"])
    assert uneven.memory.kv_cache_bytes == pytest.approx(uniform.memory.kv_cache_bytes)
    assert uneven.tpot_s == pytest.approx(uniform.tpot_s, rel=1e-6)


def test_tim_never_prunes_the_prompt_and_compacts_less_often_with_longer_subtasks():
    t = parse_technique("tim:kept=0.1,prompt=1000")
    assert t.stored_tokens(800) == 800 and t.stored_tokens(3000) == pytest.approx(1200)
    short = named(run(["tim:subtask=128"], prompt=1024, output=4096), "decode", "tim_prune_compact")[0]
    long = named(run(["tim:subtask=512"], prompt=1024, output=4096), "decode", "tim_prune_compact")[0]
    assert short.bytes["hbm"] == pytest.approx(4 * long.bytes["hbm"])
    assert not named(run(["tim"]), "prefill", "tim")


# ---------------------------------------------------------------- family C: draft-scored
def test_speckv_runs_the_draft_before_the_target_and_holds_its_weights():
    base, e = run(), run(["speckv:budget=1024"])
    draft = named(e, "prefill", "speckv_draft_")
    assert any("prefill" in op.name for op in draft) and any("decode" in op.name for op in draft)
    assert not named(e, "decode", "speckv")
    assert e.memory.weights_bytes - base.memory.weights_bytes == pytest.approx(2.47e9, rel=0.05)   # Llama-3.2-1B bf16
    assert e.ttft_s > run(["snapkv:budget=1024"]).ttft_s
    with pytest.raises(WhatifError, match="speckv:draft=llama-3.2-1b.*vocabulary"):
        run(["speckv:draft=llama-3.2-1b"], model="llama-2-7b", prompt=2048)


def test_specpc_prefills_only_the_kept_prompt_tokens():
    e = run(["specpc:keep=0.25"], batch=1, prompt=8192)
    target = [op for op in ops(e, "prefill") if op.name == "attention"]
    assert sum(op.shape.pairs for op in target) == pytest.approx(causal_pairs(2048, 0), rel=0.01)
    assert named(e, "prefill", "specpc_draft_prefill_")
    assert e.ttft_s < run(batch=1, prompt=8192).ttft_s


# ---------------------------------------------------------------- family D: HiP
def test_hip_attends_k_keys_and_searches_log_t_rounds():
    t = parse_technique("hip:k=512")
    assert t.read_tokens(100_000) == 512 and t.read_tokens(300) == 300
    assert t.pair_fraction(4096, 0) * causal_pairs(4096, 0) == pytest.approx(
        512 * 513 / 2 + (4096 - 512) * 512)
    assert t.rounds(512 * 2) == 0 and t.rounds(131072) == math.ceil(math.log2(131072 / 512 / 2))
    short, long = run(["hip"], batch=1, prompt=16384), run(["hip"], batch=1, prompt=65536)
    per_token = [named(e, "decode", "hip_tree_search")[0].flops / n for e, n in ((short, 16384), (long, 65536))]
    assert per_token[1] < per_token[0]                        # sub-linear search cost per context token
    with pytest.raises(WhatifError, match="hip.*latent attention"):
        run(["hip"], model="deepseek-v3", prompt=1024)


def test_actqkv_attends_sinks_window_and_retrieved_and_probes_once_per_chunk():
    t = parse_technique("actqkv:retrieved=1024,window=2048,sinks=64")
    assert t.read_tokens(100_000) == 1024 + 2048 + 64
    assert t.pair_fraction(1, 5000) == 1.0
    e = run(["actqkv:chunk=256"], batch=1, prompt=16384)
    wide = run(["actqkv:chunk=1024"], batch=1, prompt=16384)
    probe = {c: sum(t.op.flops * n for p, n in x.prefill for t in p.op_times if t.op.name == "actqkv_block_scores")
             for c, x in ((256, e), (1024, wide))}
    assert probe[256] == pytest.approx(4 * probe[1024], rel=0.02)     # one probe per chunk
    near = run(["actqkv"], batch=1, prompt=4000)                     # all inside the window: nothing to retrieve
    assert not named(near, "decode", "actqkv_block_scores")


# ---------------------------------------------------------------- family F
def test_hidden_transfer_round_is_one_pass_plus_the_pseudo_rows_marginal_cost():
    r = round_at("hidden_transfer:k=3,tree=4x2x1", model="vicuna-7b")
    assert r.verify.batch.tokens == 4 + 8 + 8 + 1               # the tree and the last accepted token
    assert 0 < r.draft_s < 0.1 * r.verify.time_s              # weight-bound: a few rows ride on the same reads
    wide = round_at("hidden_transfer:k=3,tree=4x2x1", model="vicuna-7b", batch=64)
    assert wide.draft_s > r.draft_s
    with pytest.raises(WhatifError, match="hidden_transfer:tree.*k=2"):
        make_technique("hidden_transfer", {"k": 2, "tree": "4x2x1"})


def test_s2d_drafts_with_half_the_layers_but_holds_the_whole_draft():
    full = round_at("speculative:draft=vicuna-68m,k=4", model="vicuna-13b")
    half = round_at("s2d:draft=vicuna-68m,k=4,draft_layers=0.5", model="vicuna-13b")
    assert half.draft_s < full.draft_s and half.tokens == pytest.approx(full.tokens)
    rc = context("s2d:draft=opt-125m,k=4,draft_layers=0.5", model="opt-6.7b")
    assert rc.setup.techniques.decoder.draft_model(rc.setup.model).num_layers == 6
    a = run(["speculative:draft=opt-125m,k=4"], model="opt-6.7b", prompt=512)
    b = run(["s2d:draft=opt-125m,k=4"], model="opt-6.7b", prompt=512)
    assert a.memory.weights_bytes == pytest.approx(b.memory.weights_bytes)
