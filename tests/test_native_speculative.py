"""MTP and EAGLE-3 heads as the engines run them (techniques/native_speculative.py): the engines' default draft
lengths, acceptance assumed and shown, the verify pass priced by the target's own pricer, the head's memory,
and MTP under attention DP."""
from __future__ import annotations

from dataclasses import replace

import pytest

import whatif
from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.decode_round import RoundContext
from whatif.roofline.forward_pass import time_pass
from whatif.roofline.techniques.decoding import draft_later_steps, draft_model_passes
from whatif.scenario import Scenario

V3 = dict(model="deepseek-v3", hardware="hgx-h200", tp=8, ep=8, quantization="fp8", prompt=1024, output=256,
          with_max_batch=False)


@pytest.mark.parametrize("engine, k", [("sglang", 3), ("trtllm", 3), ("vllm", 1), ("sglang-0.3", 3)])
def test_mtp_takes_the_engines_draft_length(engine, k):
    techs = Scenario(model="deepseek-v3", techniques=("mtp",), kernel_engine=engine).technique_set()
    assert techs.items[0].k == k and techs.label() == f"mtp:k={k}"
    kept = Scenario(model="deepseek-v3", techniques=("mtp:k=2",), kernel_engine=engine).technique_set()
    assert kept.items[0].k == 2


def test_eagle3_takes_the_engines_tree():
    sg = Scenario(techniques=("eagle3",), kernel_engine="sglang").technique_set().items[0]
    vl = Scenario(techniques=("eagle3",), kernel_engine="vllm").technique_set().items[0]
    assert len(sg.draft_tree()) == 7 and len(vl.draft_tree()) == 3


def test_acceptance_is_shown_as_assumed(capsys):
    from whatif.cli import main
    main(["estimate", "--model", "deepseek-v3", "--hardware", "hgx-h200", "--tp", "8", "--ep", "8", "--quantization",
          "fp8", "--batch", "4", "--technique", "mtp", "--engine", "sglang", "--no-ops"])
    out = capsys.readouterr().out
    assert "techniques: mtp:k=3" in out and "mtp:alpha=0.85 is assumed" in out


def test_the_verify_pass_is_the_targets_pass_of_drafts_plus_one():
    sc = Scenario(model="deepseek-v3", hardware="hgx-h200", parallel=Parallelism(tp=8, ep=8),
                  precision=Precision.of_scheme("fp8"), techniques=("mtp",),
                  kernel_engine="sglang")
    setup = sc.resolved().pass_setup()
    mtp = setup.techniques.items[0]
    rc = RoundContext(setup, batch=16, context=2048, prompt=1024, output=256, cuda_graphs=True)
    r = mtp.round(rc)
    assert r.verify.batch == ForwardBatch.verify_pass(16, 4, 2048)
    assert r.verify.time_s == pytest.approx(time_pass(setup, ForwardBatch.verify_pass(16, 4, 2048), True).time_s)
    assert r.tokens == pytest.approx(1 + 0.85 + 0.85 ** 2 + 0.85 ** 3)


def test_gain_shrinks_as_the_batch_grows_and_the_head_costs_memory():
    def speedup(batch):
        base = whatif.estimate(**V3, batch=batch, kernel_engine="sglang")
        mtp = whatif.estimate(**V3, batch=batch, kernel_engine="sglang", techniques="mtp")
        return base.tpot_s / mtp.tpot_s, mtp.estimate.memory.weights_bytes - base.estimate.memory.weights_bytes
    small, head = speedup(1)
    large, _ = speedup(512)
    assert small > large and small > 1.5
    assert 1e9 < head < 3e9   # one MoE layer of DeepSeek-V3 in fp8 over 8 GPUs, and the 2h -> h projection


def test_mtp_runs_per_rank_under_attention_dp_and_other_techniques_do_not():
    dp = whatif.estimate(**V3, batch=256, dp_attention=True, techniques="mtp", kernel_engine="sglang")
    plain = whatif.estimate(**V3, batch=256, dp_attention=True, kernel_engine="sglang")
    assert dp.tpot_s < plain.tpot_s
    with pytest.raises(WhatifError, match="--dp-attention: not modelled together with --technique kivi"):
        whatif.estimate(**V3, batch=8, dp_attention=True, techniques="kivi")


def test_eagle3_runs_per_rank_under_attention_dp():
    """Each rank runs its own dense head on its share of the sequences: under full attention DP a GPU holds the
    whole head (8x its TP8 share) and the round's drafting is one rank's (batch / 8), so it costs no more than
    the TP8 head on the whole batch, where the verify pass gains what attention DP gains."""
    def est(**extra):
        return whatif.estimate(**V3, kernel_engine="sglang", batch=256, **extra).estimate
    dp, tp = est(dp_attention=True, techniques="eagle3"), est(techniques="eagle3")
    plain_dp, plain_tp = est(dp_attention=True), est()
    assert dp.tpot_s < plain_dp.tpot_s
    head_dp = dp.memory.weights_bytes - plain_dp.memory.weights_bytes
    head_tp = tp.memory.weights_bytes - plain_tp.memory.weights_bytes
    assert head_dp == pytest.approx(8 * head_tp, rel=0.02)
    assert dp.decode_round.draft_s < tp.decode_round.draft_s


def test_a_hybrid_models_verify_writes_a_state_a_verified_token_and_sglang_commits_the_accepted_one():
    from whatif.roofline.recurrent import state_writes
    from whatif.roofline.techniques.decoding import state_commit_s
    groups = ((4, 2048, 16),)
    assert state_writes(groups, verify=True) == 64 and state_writes(groups, verify=False) == 16
    assert state_writes(((1, 2048, 16),), verify=True) == 16

    def round_of(engine, model="qwen3.5-397b-a17b"):
        sc = Scenario(model=model, hardware="b200", parallel=Parallelism(tp=4), precision=Precision.of_scheme("fp8"),
                      techniques=("mtp:k=3",), kernel_engine=engine)
        setup = sc.resolved().pass_setup()
        return RoundContext(setup, batch=128, context=2048, prompt=1024, output=1024, cuda_graphs=True)
    sg, vl = round_of("sglang"), round_of("vllm")
    ops = {t.op.name: t for t in time_pass(sg.setup, ForwardBatch.verify_pass(128, 4, 2048), True).op_times}
    plain = {t.op.name: t for t in time_pass(sg.setup, ForwardBatch.decode(128, 2048), True).op_times}
    assert ops["gated_deltanet"].op.bytes["hbm"] > 2 * plain["gated_deltanet"].op.bytes["hbm"]
    assert state_commit_s(sg) > 0 and state_commit_s(vl) == 0   # vLLM reads the accepted token's slot instead
    assert state_commit_s(round_of("sglang", "deepseek-v3")) == 0   # no recurrent layers: nothing to commit


def _mtp_on(engine: str, batch: int):
    """A DeepSeek-V3 fp8 TP8 B200 setup with mtp:k=3 on `engine`, its MTP technique and a 1k-prompt round."""
    sc = Scenario(model="deepseek-v3", hardware="dgx-b200", parallel=Parallelism(tp=8),
                  precision=Precision.of_scheme("fp8"), techniques=("mtp:k=3",), kernel_engine=engine)
    setup = sc.resolved().pass_setup()
    rc = RoundContext(setup, batch=batch, context=2048, prompt=1024, output=256, cuda_graphs=True)
    return setup.techniques.items[0], rc


@pytest.mark.parametrize("batch", [1, 4])
def test_trtllm_mtp_context_step_chains_the_head_over_one_token_a_request(batch):
    """TensorRT-LLM's MTPEagleWorker drafts k tokens in the context step: one pass over the prompt, then k - 1
    eager passes of one token a request over the prompt's cache, each with its fuse (speculative/mtp.py)."""
    mtp, rc = _mtp_on("trtllm", batch)
    over_prompt = mtp.prefill_s(replace(rc, setup=replace(rc.setup, engine_spec=None)))
    later = draft_later_steps(replace(rc, cuda_graphs=False), mtp._head_setup(rc), [1, 1, 1], 1024)
    one = time_pass(mtp._head_setup(rc), ForwardBatch.verify_pass(batch, 1, 1025), False).time_s
    assert later > one > 0
    assert mtp.prefill_s(rc) == pytest.approx(over_prompt + later + mtp._fuse(rc, 2 * batch))


def test_sglang_mtp_context_step_runs_the_head_once():
    """SGLang's EAGLE worker runs the head once over a prompt (forward_draft_extend); its chain is the decode's."""
    mtp, rc = _mtp_on("sglang", 4)
    assert mtp.prefill_s(rc) == pytest.approx(mtp.prefill_s(replace(rc, setup=replace(rc.setup, engine_spec=None))))


def test_trtllm_mtp_first_draft_pass_runs_every_verified_position():
    """MTPEagleWorker.prepare_drafter_inputs feeds the head all k + 1 verified tokens a request, not the accepted
    ones only: the round's first draft pass is at 4 tokens a request under mtp:k=3."""
    mtp, rc = _mtp_on("trtllm", 4)
    r = mtp.round(rc)
    head = draft_model_passes(rc, mtp._head_setup(rc), [1, 1, 1], 4.0, rc.context) + mtp._fuse(rc, 4 * (4 + 2))
    assert r.draft_s == pytest.approx(head)
    sg, sg_rc = _mtp_on("sglang", 4)
    sg_round = sg.round(sg_rc)   # SGLang's first draft pass takes in the accepted tokens (catch_up_tokens)
    assert sg_round.draft_s == pytest.approx(sg.draft_s(sg_rc, [1, 1, 1], sg_round.tokens))
    assert sg_round.tokens < 4
