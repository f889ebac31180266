"""The search's fast pricing gives the scalar path's figures: a batch timed by batch_times with a remembering
StepPricer (steps kept across batches and chunks) equals `whatif.estimate` of that batch bit for bit; a
remembered step is the one engine_step priced; worker processes give the same configurations as one
process."""
from __future__ import annotations

import pytest

import whatif
from whatif.cli import main
from whatif.config_search.evaluate import StepPricers, replica_scenario
from whatif.config_search.space import ReplicaSetup, SearchSpace
from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch
from whatif.roofline.estimate import batch_times
from whatif.roofline.forward_pass import engine_step
from whatif.roofline.step_price import StepPricer

PROMPT, OUTPUT = 3000, 200
SAMPLE = [   # (model, replica setup): dense TP and PP, fp8, a KV technique, MoE with EP and attention DP
    ("llama-3.1-8b", ReplicaSetup("dgx-h100", 1, 1, 1, "bf16", "bf16")),
    ("llama-3.1-8b", ReplicaSetup("dgx-h100", 2, 2, 1, "fp8", "fp8")),
    ("llama-3.1-8b", ReplicaSetup("dgx-h100", 2, 1, 1, "bf16", "bf16", ("kivi",))),
    ("mixtral-8x7b", ReplicaSetup("dgx-h100", 4, 1, 2, "bf16", "bf16")),
    ("mixtral-8x7b", ReplicaSetup("dgx-h100", 4, 1, 4, "bf16", "bf16", (), True)),
]


@pytest.mark.parametrize("model, key", SAMPLE, ids=lambda v: v.label() if isinstance(v, ReplicaSetup) else v)
def test_batch_times_with_a_shared_pricer_match_the_estimate(model, key):
    space = SearchSpace(model=model, hardware=("dgx-h100",), gpu_budget=8, prompt=PROMPT, output=OUTPUT)
    pricers = StepPricers()    # one per engine, across chunks, as evaluate_replica keeps them
    for chunk in (1024, 8192):
        sc = replica_scenario(space, key, chunk)
        resolved = sc.resolved()
        for b in (1, 3, 16, 64):
            w = sc.workload.__class__(**{**sc.workload.__dict__, "batch": b})
            setup = resolved.pass_setup(w.shared_prefix, w)
            fast = batch_times(setup, w, pricers.of(setup), sc.cuda_graphs)
            est = resolved.estimate(with_max_batch=False, workload=w)
            for name in ("ttft_s", "tpot_s", "e2e_s"):
                assert getattr(fast, name) == getattr(est, name), (chunk, b, name)
    assert len(pricers.known) == 1      # the chunk does not change the setup: one pricer, its steps shared


def test_a_remembered_step_is_the_one_engine_step_priced():
    sc = replica_scenario(SearchSpace(model="llama-3.1-8b", hardware=("dgx-h100",), gpu_budget=2),
                          ReplicaSetup("dgx-h100", 2, 1, 1, "bf16", "bf16"), 8192)
    setup = sc.resolved().pass_setup()
    pricer = StepPricer(setup, memoized=False, remember=True)
    for fb in (ForwardBatch.decode(8, 1500), ForwardBatch.prefill(2, 3000)):
        first = pricer.step(fb, True)
        assert pricer.step(fb, True) is first                      # remembered, not priced again
        assert first[1] == engine_step(setup, fb, True)[1]
        assert pricer.seconds(fb, True) == first[1]


def _rows(**kw):
    r = whatif.search("llama-3.1-8b", "dgx-h100", gpus=8, prompt=500, output=20, batches=(1, 8),
                      weight_dtypes=("bf16", "fp8"), modes=("aggregated",), **kw)
    return [c.row() for c in r.configs], r.estimates


def test_worker_processes_give_the_configurations_of_one_process():
    one, n1 = _rows(jobs=1)
    two, n2 = _rows(jobs=2)     # 20 replica setups: two workers (MIN_SETUPS_PER_JOB 8)
    assert one == two and n1 == n2


def test_jobs_is_checked():
    with pytest.raises(WhatifError, match="--jobs"):
        _rows(jobs=0)
    with pytest.raises(WhatifError, match="--jobs: only with --backend process"):
        _rows(jobs=2, backend="ray")


def test_cli_jobs_flag(capsys):
    assert main(["search", "--model", "llama-3.1-8b", "--hardware", "dgx-h100", "--gpus", "1", "--batches", "1",
                 "--jobs", "2", "--no-progress"]) == 0
    assert "searched" in capsys.readouterr().out
    assert main(["search", "--model", "llama-3.1-8b", "--hardware", "dgx-h100", "--gpus", "1", "--jobs", "0"]) != 0
    assert "--jobs: 0 is out of range" in capsys.readouterr().err
