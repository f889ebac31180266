"""SGLang's PD prefill rows (simulator/prefill_rows.py): a TP prefill server's request keeps its batch row until its
KV send is done, so at --max-running-requests 1 the next prompt starts only after the last one's send."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import Parallelism, Precision
from whatif.scenario import Scenario
from whatif.simulator import replica
from whatif.simulator.cluster import simulate
from whatif.simulator.config import ClusterConfig, SchedulerConfig, SimConfig
from whatif.simulator.prefill_rows import batch_limit, holds_rows
from whatif.simulator.workload import WorkloadSpec
from whatif.specs.engines import ENGINE_DIR, engine_from_mapping, engine_mapping, load_engine, profile_index


def test_sends_in_flight_take_rows_but_never_a_running_prompts():
    assert batch_limit(1, 0, 0) == 1
    assert batch_limit(1, 0, 1) == 0      # the one row is still sending: nothing new, nothing to run
    assert batch_limit(8, 0, 3) == 5
    assert batch_limit(2, 1, 2) == 1      # a chunked prompt keeps its row and runs on
    assert batch_limit(4, 0, 6) <= 0


def _setup(engine: str):
    return SimpleNamespace(engine_spec=load_engine(engine))


def test_only_sglang_tp_prefill_pools_hold_rows():
    assert holds_rows(_setup("sglang"), "prefill", None)
    assert holds_rows(_setup("sglang-0.5"), "prefill", None)   # a release takes its engine's section
    assert not holds_rows(_setup("sglang"), "prefill", object())   # an attention-DP rank: its metadata slots bind
    assert not holds_rows(_setup("sglang"), "decode", None) and not holds_rows(_setup("sglang"), "mixed", None)
    assert not holds_rows(_setup("trtllm"), "prefill", None) and not holds_rows(_setup("vllm"), "prefill", None)
    assert not holds_rows(SimpleNamespace(engine_spec=None), "prefill", None)


def test_a_bad_flag_names_its_field():
    data = engine_mapping(profile_index(ENGINE_DIR)["sglang"])
    sec = data["disaggregation"]
    bad = {**data, "disaggregation": {**sec, "prefill_rows_held_to_send": {**sec["prefill_rows_held_to_send"],
                                                                           "value": "yes"}}}
    with pytest.raises(WhatifError, match="disaggregation.prefill_rows_held_to_send"):
        engine_from_mapping(bad, "sglang.yaml")


def _run():
    """A saturated TP8 8k-prompt prefill server at --max-running-requests 1 (the generator's rule), TP8 decode."""
    sc = Scenario(model="deepseek-v3", hardware="dgx-b200", parallel=Parallelism(tp=8, ep=8), kernel_engine="sglang",
                  precision=Precision(weight="fp8"))
    traffic = WorkloadSpec(requests=24, prompt=8192, output=4, concurrency=12, seed=1)
    cl = ClusterConfig(replicas=1, prefill_replicas=1, prefill_tp=8, prefill_ep=8, prefill_max_batch=1,
                       prefill_token_budget=9692)
    return simulate(SimConfig(sc, traffic, SchedulerConfig.for_engine(sc.engine_spec()), cl))


def _prefill_gaps(res) -> list[float]:
    """Idle time between one prefill step's end and the next one's start on the prefill replica."""
    cols = res.log.columns
    pre = {i.index for i in res.replicas if i.role == "prefill"}
    rows = zip(cols["replica"], cols["start_s"], cols["duration_s"], cols["prefill_seqs"])
    steps = [(s, s + d) for r, s, d, p in rows if r in pre and p]
    return [b[0] - a[1] for a, b in zip(steps, steps[1:])]


def test_held_rows_put_each_send_between_prefill_steps(monkeypatch):
    held = _run()
    monkeypatch.setattr(replica, "holds_rows", lambda *a: False)
    free = _run()
    assert all(r.status == "finished" for r in held.records + free.records)
    assert max(_prefill_gaps(free)) < 1e-9              # saturated: the next prompt starts as the last one ends
    assert min(_prefill_gaps(held)) > 1e-3              # each waits for the last prompt's KV to land
    assert sum(r.ttft_s for r in held.records) > sum(r.ttft_s for r in free.records)
