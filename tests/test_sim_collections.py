"""The garbage collector is held back during a run only: thresholds and frozen objects come back as
they were, after an error too."""
from __future__ import annotations

import gc

import pytest

from whatif.simulator.collections_paused import YOUNG_THRESHOLD, collections_paused


def test_collector_settings_come_back_after_a_run_and_after_an_error():
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with collections_paused():
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        assert gc.get_freeze_count() > frozen
        assert not gc.isenabled()
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen and gc.isenabled()
    with pytest.raises(RuntimeError), collections_paused():
        raise RuntimeError("a run that fails")
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen and gc.isenabled()


def test_a_run_makes_no_garbage_cycles_per_request():
    """The collector is off during a run (collections_paused): that holds memory flat only while a run's requests
    leave no reference cycles behind, so the cyclic garbage found after runs of 200 and 2,000 requests (the
    cluster's and clock's own few) must not grow with the requests."""
    from whatif.scenario import Scenario
    from whatif.simulator import cluster
    from whatif.simulator.config import SimConfig
    from whatif.simulator.workload import WorkloadSpec

    found = []
    for n in (200, 2000):
        gc.collect()
        gc.disable()
        try:
            result = cluster.simulate(SimConfig(Scenario(), WorkloadSpec(lengths="sharegpt", requests=n, rate=20.0)))
            assert result.summary()["requests"]["finished"] == n
            del result
            found.append(gc.collect())
        finally:
            gc.enable()
    assert found[1] <= found[0] + 10, found
