"""Token-gathering sparse attention at the measured sparse / dense kernel rate (roofline/gathered_attention.py)."""
import pytest

from whatif.roofline import gathered_attention as ga
from whatif.roofline.estimate import Workload
from whatif.roofline.techniques.registry import make_technique
from whatif.scenario import Scenario
from whatif.validate import gathered_attention as fit
from whatif.validate.modern_rows import DEFAULT_ROOT

WL = Workload(batch=4, prompt=65536, output=64)


def run(techniques=(), workload=WL):
    return Scenario(model="llama-3.1-8b", hardware="h100-sxm", workload=workload,
                    techniques=tuple(techniques)).run(with_max_batch=False)


def attention(e, phase):
    passes = e.prefill if phase == "prefill" else [(e.decode, 1)]
    return [t for p, _ in passes for t in p.op_times if t.op.name.startswith("attention")]


def test_efficiencies_are_shares_of_the_dense_rate():
    assert 0 < ga.GATHERED_PREFILL_EFF < 1 and 0 < ga.GATHERED_DECODE_EFF < 1


def test_only_the_techniques_that_gather_tokens_are_flagged_and_by_phase():
    assert make_technique("minference").gathers == ("prefill",)
    assert make_technique("tidaldecode").gathers == ("decode",)
    for static in ("quest", "lm_infinite", "s2_attention", "sale", "streamingllm"):
        assert make_technique(static).gathers == (), static


def test_a_gathered_prefill_runs_at_the_measured_share_of_dense_attention():
    e = run(["minference"])
    ops = attention(e, "prefill")
    assert ops and all(t.op.shape.gathered for t in ops)
    t = ops[0]
    busy = t.time_s - t.overhead_s
    from dataclasses import replace
    from whatif.roofline.timing import time_op
    dense = time_op(replace(t.op, shape=replace(t.op.shape, gathered=False)), e.system.gpu, e.efficiency)
    assert busy == pytest.approx((dense.time_s - dense.overhead_s) / ga.GATHERED_PREFILL_EFF)


def test_dense_attention_and_undecided_phases_keep_the_dense_rate():
    assert not any(t.op.shape.gathered for t in attention(run(), "prefill") + attention(run(), "decode"))
    e = run(["minference"])
    assert not any(t.op.shape.gathered for t in attention(e, "decode"))      # MInference's decode is dense
    short = run(["tidaldecode"], Workload(batch=4, prompt=128, output=16))   # reads all it keeps: not gathered
    assert not any(t.op.shape.gathered for t in attention(short, "decode"))
    assert any(t.op.shape.gathered for t in attention(run(["tidaldecode"]), "decode"))


@pytest.mark.skipif(not DEFAULT_ROOT.exists(), reason="the modern kernel tables are not here")
def test_the_shipped_efficiencies_are_the_tables_fit():
    assert fit.pooled(phase="prefill") == pytest.approx(ga.GATHERED_PREFILL_EFF, abs=5e-4)
    assert fit.pooled(phase="decode") == pytest.approx(ga.GATHERED_DECODE_EFF, abs=5e-4)
