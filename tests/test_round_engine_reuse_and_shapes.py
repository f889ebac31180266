"""Mechanisms behind issue 21's family E/F fixes: a decode round on an eager engine pays its launches,
a padded batch's KV realignment launches a copy per sequence, early-exit self-speculation verifies only
the layers after the exit, and Hydragen's shared-prefix attention is one attention problem per head."""
from __future__ import annotations

import pytest

from whatif.roofline.estimate import Workload
from whatif.scenario import Scenario

SPEC = "speculative:draft=llama-68m,k=4,alpha=0.6"


def run(techniques, model="llama-2-7b", hardware="a100-sxm-80gb", batch=1, prompt=256, output=64, **kw):
    return Scenario(model=model, hardware=hardware, workload=Workload(batch=batch, prompt=prompt, output=output),
                    techniques=tuple(techniques), **kw).run(with_max_batch=False)


# ---------------------------------------------------------------- rounds run as the engine runs steps

def test_a_round_on_an_eager_engine_pays_its_launches_and_a_graphed_one_does_not():
    eager = run([SPEC], kernel_engine="hf-transformers").decode_round
    graphed = run([SPEC], kernel_engine="vllm").decode_round
    assert eager.verify.launch_s > 0
    assert graphed.verify.launch_s == 0
    # the eager engine's host time per kernel (100 us) dominates a 7B verify pass at batch 1
    assert eager.verify.time_s > 2 * graphed.verify.time_s
    assert eager.draft_s > 2 * graphed.draft_s


def test_plain_decode_and_speculation_are_priced_alike_on_an_eager_engine():
    """With no acceptance the round is one verify pass (plus drafting) for one token: never faster than a
    plain eager decode step, as it was when the round alone skipped the launches."""
    plain = run([], kernel_engine="hf-transformers")
    spec = run(["speculative:draft=llama-68m,k=4,alpha=0.0"], kernel_engine="hf-transformers")
    assert spec.tpot_s > plain.tpot_s


# ---------------------------------------------------------------- realignment of a padded batch

def realign_s(batch: int) -> float:
    return run([f"{SPEC},batch_policy=realign"], kernel_engine="hf-transformers", batch=batch).decode_round.overhead_s


def realign_launches(layers: int, batch: int) -> int:
    # eBay/spec_dec realign_kv_cache: per layer a zeroed K and V tensor and six ops on the length tensors, per
    # layer and sequence two slice copies and four .item() reads; the round's final lengths, their max and its read
    return 8 * layers + 3 + 6 * layers * batch


def test_realignment_launches_one_copy_per_sequence_and_layer():
    one, two, eight = realign_s(1), realign_s(2), realign_s(8)
    layers = 32
    assert eight / two == pytest.approx(realign_launches(layers, 8) / realign_launches(layers, 2), rel=0.15)
    assert eight == pytest.approx(realign_launches(layers, 8) * 100e-6, rel=0.2)   # 100 us per eager launch
    # the released loop re-aligns every round, batch 1 too
    assert one == pytest.approx(realign_launches(layers, 1) * 100e-6, rel=0.2)


# ---------------------------------------------------------------- early-exit self-speculation

def test_early_exit_verification_runs_only_the_layers_after_the_exit():
    reuse = run(["self_speculative:draft_layers=0.25,k=4,alpha=0.7"]).decode_round
    full = run(["self_speculative:draft_layers=0.25,k=4,alpha=0.7,reuse=false"]).decode_round
    # memory-bound at batch 1: the verify pass reads ~3/4 of the weights (the LM head read by both)
    assert reuse.verify.time_s / full.verify.time_s == pytest.approx(0.75, abs=0.07)
    # the draft layers then also run the deepest draft next round: drafting costs a little more
    assert reuse.draft_s >= full.draft_s
    assert reuse.time_s < full.time_s


# ---------------------------------------------------------------- Hydragen's shared-prefix attention

def test_hydragen_prefix_attention_is_one_problem_per_head_near_flashattention_efficiency():
    wl = Workload(1024, 16256, 128, shared_prefix=16256)
    e = Scenario(model="codellama-13b", hardware="dgx-a100-40gb", gpus=8, workload=wl,
                 techniques=("hydragen",)).run(with_max_batch=False)
    prefix = next(t for t in e.decode.op_times if t.op.name == "attention_shared_prefix")
    assert prefix.op.shape.sequences == 1
    achieved = prefix.op.flops * prefix.op.count / prefix.total_s / e.system.gpu.peak_flops("bf16")
    # 1024 query rows x 16K keys per head are long tiles: well above the per-tile overhead of 1024 tiny
    # causal problems (~19% of peak), below the tensor-core peak
    assert 0.4 < achieved < 0.9
