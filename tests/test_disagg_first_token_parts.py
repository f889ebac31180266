"""benchmarks/disagg_first_token_parts.py: a disaggregated request's queue / prefill / admit / send / boundary parts
sum to its engine-side TTFT, the simulator's hooks are restored after the run, and the KV part is the priced send."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import disagg_first_token_parts as dftp  # noqa: E402
from whatif.roofline.config import Parallelism  # noqa: E402
from whatif.scenario import Scenario  # noqa: E402
from whatif.simulator import cluster as cluster_mod  # noqa: E402
from whatif.simulator import replica as replica_mod  # noqa: E402
from whatif.simulator.cluster import simulate  # noqa: E402
from whatif.simulator.config import ClusterConfig, SchedulerConfig, SimConfig  # noqa: E402
from whatif.simulator.workload import WorkloadSpec  # noqa: E402

MIXTRAL = Scenario(model="mixtral-8x7b", hardware="dgx-h100", parallel=Parallelism(tp=4, ep=4))


def _run(cluster: ClusterConfig, concurrency: int = 4):
    traffic = WorkloadSpec(requests=12, prompt=512, output=16, concurrency=concurrency, seed=1)
    with dftp.handoff_times() as times:
        res = simulate(SimConfig(MIXTRAL, traffic, SchedulerConfig.for_engine(MIXTRAL.engine_spec()), cluster))
    return res, times


def test_parts_sum_to_each_disaggregated_ttft_and_the_hooks_come_back():
    hand_on, transfer = cluster_mod.Cluster.hand_on, replica_mod.Replica._transfer
    res, times = _run(ClusterConfig(replicas=1, prefill_replicas=1))
    assert cluster_mod.Cluster.hand_on is hand_on and replica_mod.Replica._transfer is transfer
    done = [r for r in res.records if r.first_token_s is not None]
    assert done and all(len(times[id(r)]) == 3 for r in done)
    for r in done:
        parts = dftp.request_parts(r, times[id(r)])
        assert sum(parts.values()) == pytest.approx(r.ttft_s)
        assert all(v >= -1e-12 for v in parts.values())
    means = dftp.mean_parts(res.records, times)
    assert set(means) == set(dftp.PARTS) and means["prefill"] > 0 and means["send"] > 0


def test_the_send_part_is_the_priced_kv_transfer(monkeypatch):
    """Each request's `send` is what IterationTimes.send_time priced for its KV (one client: no overlap)."""
    from whatif.simulator.iteration_time import IterationTimes
    priced = []
    send_time = IterationTimes.send_time

    def recorded(self, *args, **kwargs):
        priced.append(send_time(self, *args, **kwargs))
        return priced[-1]

    monkeypatch.setattr(IterationTimes, "send_time", recorded)
    res, times = _run(ClusterConfig(replicas=1, prefill_replicas=1), concurrency=1)
    sends = [dftp.request_parts(r, times[id(r)])["send"] for r in res.records if r.first_token_s is not None]
    assert priced and sends == pytest.approx(priced[:len(sends)])


def test_an_aggregated_run_has_no_hand_off_to_split():
    res, times = _run(ClusterConfig(replicas=1))
    assert not times
    with pytest.raises(ValueError, match="no request reached its first token through a disaggregated hand-off"):
        dftp.mean_parts(res.records, times)


def test_the_summary_shares_add_up_per_engine():
    rec = {"engine": "sglang", "ratio": 0.5, "queue": 10.0, "prefill": 30.0, "admit": 0.0, "send": 5.0,
           "boundary": 5.0}
    line = dftp.summary([rec, {**rec, "ratio": 0.7}])[0]
    assert line.startswith("sglang: 2 rows, median ratio x0.60")
    assert "queue 20.0% prefill 60.0% admit 0.0% send 10.0% boundary 10.0%" in line
