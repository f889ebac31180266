"""A scheduling policy is one small class plus one registry line (whatif/simulator/scheduling/): one defined
here, shortest prompt first, runs a simulation and admits in the order it claims; the existing configurations
name the policies they always ran."""
from __future__ import annotations

import pytest

from whatif.errors import WhatifError
from whatif.scenario import Scenario
from whatif.simulator.cluster import simulate
from whatif.simulator.config import SLO, ClusterConfig, SchedulerConfig, SimConfig
from whatif.simulator.request import FINISHED, Request
from whatif.simulator.scheduling.core import Scheduler
from whatif.simulator.scheduling.prefill_first import PrefillFirst
from whatif.simulator.scheduling.registry import POLICIES, make_policy, policy_name
from whatif.simulator.scheduling.sequence import Batch


class ShortestPromptFirst(PrefillFirst):
    """Prefill-first with whole prompts, the waiting ones taken shortest first."""

    def form(self, core: Scheduler, batch: Batch, now: float) -> None:
        _shortest_first(core)
        super().form(core, batch, now)

    def admits(self, core: Scheduler) -> bool:
        _shortest_first(core)
        return super().admits(core)


def _shortest_first(core: Scheduler) -> None:
    ordered = sorted(core.waiting, key=lambda s: s.total - s.computed)
    core.waiting.clear()
    core.waiting.extend(ordered)


PROMPTS = [900, 100, 500, 300, 1100, 700, 200, 1000, 400, 800, 600, 1200]


def run(policy: str):
    requests = [Request(i, i * 0.001, p, 8) for i, p in enumerate(PROMPTS)]   # all queued while the first runs
    engine = SchedulerConfig(max_batch=1, chunked_prefill=False, policy=policy)
    return simulate(SimConfig(Scenario(), None, engine, ClusterConfig(), SLO()), requests=requests).records


def out_of_order(records) -> list[tuple[int, int]]:
    """(admitted prompt, a shorter one waiting then) for each admission that passed over a shorter prompt."""
    return [(r.request.prompt, q.request.prompt) for r in records for q in records
            if q.request.arrival_s <= r.first_scheduled_s < q.first_scheduled_s
            and q.request.prompt < r.request.prompt]


def test_a_policy_defined_here_runs_and_admits_shortest_first(monkeypatch):
    monkeypatch.setitem(POLICIES, "shortest-prompt-first", ShortestPromptFirst)   # the one registry line
    records = run("shortest-prompt-first")
    assert all(r.status == FINISHED for r in records)
    assert out_of_order(records) == []
    assert out_of_order(run("prefill-first"))   # (first come, first served passes over shorter prompts)


@pytest.mark.parametrize("fields, name", [
    ({}, "chunked-prefill"),
    ({"chunked_prefill": False}, "prefill-first"),
    ({"chunked_prefill": False, "priority": "mixed"}, "whole-prompts-beside-decodes"),
    ({"priority": "mixed"}, "chunked-prefill"),
    ({"chunked_prefill": False, "priority": "decode"}, "decode-first"),
    ({"priority": "decode"}, "chunked-prefill"),
    ({"batching": "static"}, "static"),
    ({"batching": "static", "chunked_prefill": False, "priority": "mixed"}, "static"),
    ({"batching": "static", "policy": "decode-first"}, "decode-first"),
])
def test_the_engine_fields_name_the_policy(fields, name):
    cfg = SchedulerConfig(**fields)
    assert policy_name(cfg) == name and isinstance(make_policy(cfg), POLICIES[name])


def test_an_unknown_policy_is_an_error_naming_the_valid_ones():
    with pytest.raises(WhatifError, match="'fifo' is not a scheduling policy; valid: chunked-prefill"):
        make_policy(SchedulerConfig(policy="fifo"))
