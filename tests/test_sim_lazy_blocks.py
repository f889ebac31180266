"""A decoding sequence's KV blocks are counted per phase visit, not given one by one (Scheduler.take_due_blocks,
_catch_up): after every iteration the blocks the pool has handed out are the blocks the running
sequences hold once brought up to date, and every block comes back when all requests are done (checked after each
batch the replica loop completes: the run's Stepping.observe, a parameter of simulate)."""
from __future__ import annotations

import pytest

from whatif.roofline.config import Parallelism
from whatif.scenario import Scenario
from whatif.simulator import cluster
from whatif.simulator.config import SchedulerConfig, SimConfig
from whatif.simulator.scheduling.core import Scheduler
from whatif.simulator.stepping import Stepping
from whatif.simulator.workload import WorkloadSpec

SMALL_KV = Scenario(memory_utilization=0.25)   # (the pool runs short: preemption)
CONFIGS = {
    "chunked, preempting": SimConfig(SMALL_KV, WorkloadSpec(lengths="sharegpt", requests=400, seed=5, rate=80.0)),
    "prefill-priority, preempting": SimConfig(SMALL_KV,
                                              WorkloadSpec(lengths="sharegpt", requests=400, seed=5, rate=80.0),
                                              SchedulerConfig(chunked_prefill=False)),
    "swap": SimConfig(SMALL_KV, WorkloadSpec(lengths="sharegpt", requests=400, seed=5, rate=80.0),
                      SchedulerConfig(preemption="swap")),
    "pp2 (two engines, one pool)": SimConfig(Scenario(hardware="dgx-h100", parallel=Parallelism(pp=2),
                                                      memory_utilization=0.15),
                                             WorkloadSpec(lengths="sharegpt", requests=300, seed=5, rate=60.0)),
}


def held(engine: Scheduler, s) -> int:
    """Blocks `s` holds now (its own and cached ones), its lazily counted ones included."""
    blocks = s.blocks
    if s in engine.decoding and s.next_need <= engine.visited:
        blocks += (engine.visited - s.next_need) // engine.bm.block_size + 1
    return blocks + len(s.shared)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_pool_hands_out_what_the_running_sequences_hold(name):
    engines: dict[int, Scheduler] = {}
    checked, preempted = [0], [0]

    def check(engine: Scheduler, batch) -> None:
        preempted[0] += batch.preempted
        pool = engine.hooks.schedulers   # (the replica's engines: pp of them share its pool)
        engines.update((id(e), e) for e in pool)
        assert sum(held(e, s) for e in pool for s in e.running) == engine.bm.used
        checked[0] += 1
    result = cluster.simulate(CONFIGS[name], stepping=Stepping(observe=check))
    assert checked[0] > 100 and preempted[0] > 0   # (the check ran, and through shortages)
    assert result.summary()["requests"]["finished"] == len(result.records)
    assert engines and all(e.bm.used == 0 for e in engines.values())   # every block came back
