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


def test_the_prefill_scale_what_if_scales_the_prefill_pass_only_and_comes_back():
    """--prefill-scale prices prefill-only steps F x (the prefill part moves by F, the send does not) and restores
    IterationTimes on exit; factor 1 leaves the run as it was; a factor <= 0 is refused in one line."""
    from whatif.simulator.iteration_time import IterationTimes
    time, group_time = IterationTimes.time, IterationTimes.group_time
    base_res, base_times = _run(ClusterConfig(replicas=1, prefill_replicas=1), concurrency=1)
    with dftp.prefill_scaled(2.0):
        res, times = _run(ClusterConfig(replicas=1, prefill_replicas=1), concurrency=1)
    assert IterationTimes.time is time and IterationTimes.group_time is group_time
    base, scaled = dftp.mean_parts(base_res.records, base_times), dftp.mean_parts(res.records, times)
    assert scaled["prefill"] == pytest.approx(2 * base["prefill"], rel=0.02)
    assert scaled["send"] == pytest.approx(base["send"])
    with dftp.prefill_scaled(1.0):
        same, same_times = _run(ClusterConfig(replicas=1, prefill_replicas=1), concurrency=1)
    assert dftp.mean_parts(same.records, same_times) == base
    with pytest.raises(ValueError, match="--prefill-scale: 0.0 is not a positive factor"):
        with dftp.prefill_scaled(0.0):
            pass


def test_the_prefill_scale_leaves_decode_and_mixed_steps_alone(monkeypatch):
    from whatif.simulator.iteration_time import IterationTimes
    monkeypatch.setattr(IterationTimes, "time", lambda self, d, c, p: 1.0)
    monkeypatch.setattr(IterationTimes, "group_time", lambda self, shapes: 1.0)
    with dftp.prefill_scaled(3.0):
        assert IterationTimes.time(None, 0, 0, [(512, 0)]) == 3.0
        assert IterationTimes.time(None, 4, 100, []) == 1.0
        assert IterationTimes.time(None, 4, 100, [(512, 0)]) == 1.0   # a mixed (aggregated) step
        assert IterationTimes.group_time(None, [(0, 0, [(512, 0)]), (0, 0, [])]) == 3.0
        assert IterationTimes.group_time(None, [(2, 50, []), (0, 0, [(512, 0)])]) == 1.0


def test_the_prefill_add_what_if_adds_a_cost_a_prefill_step(monkeypatch):
    from whatif.simulator.iteration_time import IterationTimes
    monkeypatch.setattr(IterationTimes, "time", lambda self, d, c, p: 1.0)
    with dftp.prefill_scaled(1.0, 0.25):
        assert IterationTimes.time(None, 0, 0, [(512, 0)]) == 1.25
        assert IterationTimes.time(None, 4, 100, []) == 1.0
    assert IterationTimes.time(None, 0, 0, [(512, 0)]) == 1.0
    with pytest.raises(ValueError, match="--prefill-add-ms: -1.0 is negative"):
        with dftp.prefill_scaled(1.0, -0.001):
            pass
