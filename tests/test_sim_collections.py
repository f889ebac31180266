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


def _runs():
    """Runs of n requests by the paths that reach the records: an open loop (alone, watched for a certain SLO miss,
    stopped at a horizon with requests in flight) and a closed loop (its clients answered through on_finish)."""
    from whatif.scenario import Scenario
    from whatif.simulator.config import SLO, SimConfig
    from whatif.simulator.workload import WorkloadSpec

    def rate(n: int, **kw) -> SimConfig:
        return SimConfig(Scenario(), WorkloadSpec(lengths="sharegpt", requests=n, rate=20.0), **kw)
    loose = SLO(ttft_s=10.0, tpot_s=1.0, attainment=0.5)   # (met: the watch runs to the end)
    return {
        "open loop": lambda n: (rate(n), {}),
        "watched": lambda n: (rate(n), {"stop_failing": loose}),
        "horizon": lambda n: (rate(n, horizon_s=0.8 * n / 20.0), {}),
        "closed loop": lambda n: (SimConfig(Scenario(), WorkloadSpec(lengths="sharegpt", requests=n,
                                                                     concurrency=32)), {}),
    }


@pytest.mark.parametrize("name", ["open loop", "watched", "horizon", "closed loop"])
def test_a_run_makes_no_garbage_cycles_per_request(name):
    """The collector is off during a run (collections_paused): that holds memory flat only while a run's requests
    leave no reference cycles behind, so the cyclic garbage found after runs of 200 and 1,000 requests (the
    cluster's and clock's own few) must not grow with the requests and hold no request's record: nothing the
    clock, cluster and replicas reach keeps the records once the run is over (open_loop.py, cluster._run). At a
    horizon the requests still in flight stay in the replicas' queues and batches, and only those."""
    from whatif.simulator import cluster
    from whatif.simulator.request import Record

    cluster._TIMES.clear()   # (an evicted run's roofline memo is cyclic garbage of its own: none evicted here)
    found, kept, in_flight = [], [], []
    for n in (200, 1000):
        cfg, kw = _runs()[name](n)
        gc.collect()
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            result = cluster.simulate(cfg, **kw)
            assert len(result.records) > 0.7 * n
            in_flight.append(sum(r.finish_s is None for r in result.records))
            del result
            found.append(gc.collect())
            kept.append(sum(type(o) is Record for o in gc.garbage))
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
    if name == "horizon":
        assert kept[0] <= in_flight[0] < 0.2 * 200 and kept[1] <= in_flight[1] < 0.2 * 1000, (kept, in_flight)
        return
    assert found[1] <= found[0] + 10, found
    assert kept == [0, 0], kept
