"""MTP under attention-DP in the simulator (rank_group.py, IterationTimes.group_time): every rank's decode rows verify
the round's drafts in the lockstep step, the group drafts together, and each row gains the tokens its acceptance
draws, so a lone request reproduces `estimate`'s TPOT and a loaded group's rounds cost the estimate's round."""
from __future__ import annotations

import statistics

import numpy as np
import pytest

import whatif

KW = dict(kernel_engine="trtllm", tp=8, ep=8, dp_attention=True, quantization="fp8")
MODEL, GPU = "deepseek-v3", "dgx-b200"


def _gains(res) -> list[int]:
    """Tokens each request gained per round after its first (a round's tokens share one timestamp)."""
    out = []
    for rec in res.records:
        _, counts = np.unique(rec.token_times[1:], return_counts=True)
        out += counts.tolist()
    return out


def test_a_lone_request_reproduces_the_estimates_tpot():
    """Full acceptance (no draws): 24 tokens after the first in 12 rounds of 2, each the estimate's round."""
    tech = ["mtp:k=1,alpha=1"]
    res = whatif.simulate(MODEL, GPU, traffic=dict(concurrency=1, requests=1), prompt=1024, output=25,
                          techniques=tech, **KW)
    est = whatif.estimate(MODEL, GPU, batch=1, prompt=1024, output=25, with_max_batch=False, techniques=tech,
                          **KW).estimate
    rec = res.records[0]
    assert _gains(res) == [2] * 12
    assert rec.tpot_s == pytest.approx(est.tpot_s, rel=0.01)


@pytest.fixture(scope="module")
def loaded():
    def run(tech):
        kw = dict(KW, techniques=tech) if tech else KW
        return whatif.simulate(MODEL, GPU, traffic=dict(concurrency=64, requests=128), prompt=1024, output=256, **kw)
    return run(None), run(["mtp:k=1"])


def test_under_load_a_round_costs_the_estimates_round_and_tpot_drops(loaded):
    """64 clients over 8 ranks: a round is the estimate's verify + draft at batch 64, rows gain the expected
    1 + 0.85 tokens, and TPOT drops by about the round's tokens over its cost relative to a plain step."""
    plain, mtp = loaded
    est = whatif.estimate(MODEL, GPU, batch=64, prompt=1024, output=256, with_max_batch=False,
                          techniques=["mtp:k=1"], **KW).estimate
    rounds = [g for r in mtp.records for g in r.inter_token_s]
    assert statistics.median(rounds) == pytest.approx(est.decode_round.time_s, rel=0.02)
    assert np.mean(_gains(mtp)) == pytest.approx(1.85, rel=0.03)
    step = statistics.median(g for r in plain.records for g in r.inter_token_s)
    expected = step / est.decode_round.per_token_s   # the speed-up a steady decode would see
    tpot = [statistics.mean(r.tpot_s for r in res.records) for res in (plain, mtp)]
    assert 1.2 < expected < 1.85
    assert tpot[0] / tpot[1] == pytest.approx(expected, rel=0.1)


@pytest.mark.parametrize("dp", [False, True])
@pytest.mark.parametrize("tech", [None, "mtp:k=1,alpha=1", "eagle3:tree=1,alpha=1"])
def test_a_lone_request_reproduces_the_estimate(dp, tech):
    """TTFT and TPOT of one request alone, with and without attention-DP and a speculative head: the simulator's
    step (one busy rank, the head's prefill beside the target's) is the estimate's batch-1 pass."""
    kw = dict(KW, dp_attention=dp, **({"techniques": [tech]} if tech else {}))
    res = whatif.simulate(MODEL, GPU, traffic=dict(concurrency=1, requests=1), prompt=1024, output=25, **kw)
    est = whatif.estimate(MODEL, GPU, batch=1, prompt=1024, output=25, with_max_batch=False, **kw).estimate
    rec = res.records[0]
    assert rec.ttft_s == pytest.approx(est.ttft_s, rel=1e-6)
    assert rec.tpot_s == pytest.approx(est.tpot_s, rel=1e-3)


def test_eagle3_under_load_a_round_costs_the_estimates_round():
    """EAGLE-3 per rank under attention DP: 64 clients over 8 ranks, each round the estimate's round at batch 64."""
    tech = ["eagle3:tree=1"]
    res = whatif.simulate(MODEL, GPU, traffic=dict(concurrency=64, requests=64), prompt=1024, output=64,
                          techniques=tech, **KW)
    est = whatif.estimate(MODEL, GPU, batch=64, prompt=1024, output=64, with_max_batch=False,
                          techniques=tech, **KW).estimate
    rounds = [g for r in res.records for g in r.inter_token_s]
    assert statistics.median(rounds) == pytest.approx(est.decode_round.time_s, rel=0.03)
