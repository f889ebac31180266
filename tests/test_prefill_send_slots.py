"""SGLang's PD prefill metadata slots (simulator/prefill_send_slots.py): an attention-DP prefill rank's requests of
its last two steps hold 2 x its running-request slots until the overlap loop polls their KV sends."""
from __future__ import annotations

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import Parallelism, Precision
from whatif.scenario import Scenario
from whatif.simulator import rank_group
from whatif.simulator.cluster import simulate
from whatif.simulator.config import ClusterConfig, SchedulerConfig, SimConfig
from whatif.simulator.prefill_send_slots import SendSlots
from whatif.simulator.workload import WorkloadSpec
from whatif.specs.engines import ENGINE_DIR, engine_from_mapping, engine_mapping, load_engine, profile_index


def test_a_rank_takes_no_more_prompts_than_its_last_two_steps_left():
    slots = SendSlots(ranks=2, slots=2)   # B = 1 per rank, 2B metadata slots
    assert slots.caps() == [2, 2] and not slots.held()
    slots.record([1, 0])
    slots.record([1, 1])
    assert slots.caps() == [0, 1]   # rank 0 ran a prompt in each of its last two steps: none free
    slots.record([0, 1])
    assert slots.caps() == [1, 0]
    slots.release()
    assert slots.caps() == [2, 2] and not slots.held()


def test_sglang_profiles_hold_two_slots_per_running_request_and_others_none():
    assert load_engine("sglang").prefill_send_slots == 2
    assert load_engine("sglang-0.5").prefill_send_slots == 2   # a release takes its engine's section
    assert load_engine("trtllm").prefill_send_slots == 0 and load_engine("vllm").prefill_send_slots == 0


def test_a_bad_slot_count_names_its_field():
    data = engine_mapping(profile_index(ENGINE_DIR)["sglang"])
    sec = data["disaggregation"]
    bad = {**data, "disaggregation": {**sec, "prefill_send_slots": {**sec["prefill_send_slots"], "value": -1}}}
    with pytest.raises(WhatifError, match="disaggregation.prefill_send_slots: -1 is out of range"):
        engine_from_mapping(bad, "sglang.yaml")


class _Unbounded(SendSlots):
    def caps(self) -> list[int]:
        return [1 << 30] * len(self.recent)


def _run():
    """A saturated 8k-prompt attention-DP prefill pool with one running request per rank (the fp8 recipes' 8)."""
    sc = Scenario(model="deepseek-v3", hardware="dgx-b200", parallel=Parallelism(tp=8, ep=8), kernel_engine="sglang",
                  precision=Precision(weight="fp8"))
    traffic = WorkloadSpec(requests=96, prompt=8192, output=8, concurrency=48, seed=1)
    cl = ClusterConfig(replicas=1, prefill_replicas=1, prefill_tp=8, prefill_ep=8, prefill_dp_attention=True,
                       prefill_max_batch=8, prefill_token_budget=65536)
    return simulate(SimConfig(sc, traffic, SchedulerConfig.for_engine(sc.engine_spec()), cl))


def _prompts_a_step(res) -> float:
    cols = res.log.columns
    pre = {i.index for i in res.replicas if i.role == "prefill"}
    n = [p for r, p in zip(cols["replica"], cols["prefill_seqs"]) if r in pre and p]
    return sum(n) / len(n)


@pytest.mark.slow
def test_held_slots_leave_ranks_idle_and_lengthen_ttft_under_load(monkeypatch):
    held = _run()
    monkeypatch.setattr(rank_group, "SendSlots", _Unbounded)
    free = _run()
    assert all(r.status == "finished" for r in held.records)
    assert _prompts_a_step(held) < _prompts_a_step(free) <= 8   # a rank sits out one step of three at least
    assert sum(r.ttft_s for r in held.records) > 1.1 * sum(r.ttft_s for r in free.records)
