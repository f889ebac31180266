"""Sarathi-Serve's claims run pipeline micro-batches as the release's own engine forms them (session 75 P, issue 41):
sarathi/engine/pipeline_parallel_llm_engine.py schedules every 10 ms, on a first-stage finish and on each output, and
base_scheduler.schedule() forms a micro-batch whenever fewer than pp are in flight, so an arrival while one is in
flight forms another at once (the simulator's pp slots in turn, engine field pp_batch_queue false), not vLLM V1's
batch queue (an arrival waits for the batch in flight), which the default vllm spec carries since session 75 J."""
from __future__ import annotations

from collections import defaultdict

import pytest

from whatif.claims.family_j import CLAIMS
from whatif.claims.serving import deep_merged, run
from whatif.errors import WhatifError
from whatif.roofline.engines import engine_spec
from whatif.simulator.config import SchedulerConfig
from whatif.simulator.scheduling import core

SARATHI = [c for c in CLAIMS if c.paper.startswith("Sarathi-Serve") and c.metric == "capacity_rps"]
PP2 = {"model": "llama-3.1-8b", "hardware": "hgx-h200", "gpus": 2, "parallel": {"tp": 1, "pp": 2},
       "sim": {"traffic": {"concurrency": 8, "requests": 32, "prompt": 128, "output": 64}}}


def _lanes(monkeypatch, engine: dict) -> list[int]:
    """Each virtual engine's most rows in one step over a PP2 closed loop of 8 clients on the vllm spec."""
    rows: dict = defaultdict(int)
    schedule = core.Scheduler.schedule

    def recorded(self, now):
        batch = schedule(self, now)
        rows[id(self)] = max(rows[id(self)], batch.rows)
        return batch

    monkeypatch.setattr(core.Scheduler, "schedule", recorded)
    run(deep_merged(PP2, {"sim": {"engine": engine}}))
    monkeypatch.setattr(core.Scheduler, "schedule", schedule)
    return sorted(rows.values())


def test_every_sarathi_claim_sets_the_releases_rule_on_both_sides():
    assert len(SARATHI) == 3
    for c in SARATHI:
        system = deep_merged(c.setup, c.variant)
        assert c.setup["sim"]["engine"]["pp_batch_queue"] is False, c.paper
        assert system["sim"]["engine"]["pp_batch_queue"] is False, c.paper
        assert not (c.baseline_engine or c.system_engine), c.paper   # both on the vllm spec, which queues
    assert engine_spec("vllm").pp_batch_queue


def test_the_engine_field_overrides_the_specs_rule(monkeypatch):
    queued = _lanes(monkeypatch, {})   # the vllm spec's batch queue: one micro-batch holds the closed loop
    assert queued == [0, 8]
    turns = _lanes(monkeypatch, {"pp_batch_queue": False})   # each free slot took arrivals at once
    assert turns[0] > 0 and sum(turns) >= 8   # ([3, 6] at the time of writing: both slots run)


def test_the_field_defaults_to_the_specs_rule_and_rejects_non_booleans():
    assert SchedulerConfig.for_engine(engine_spec("vllm")).pp_batch_queue is True
    assert SchedulerConfig.for_engine(engine_spec("sglang")).pp_batch_queue is False
    assert SchedulerConfig().pp_batch_queue is None   # a bare config: the replica's spec decides
    with pytest.raises(WhatifError, match="pp_batch_queue"):
        SchedulerConfig(pp_batch_queue="no")
