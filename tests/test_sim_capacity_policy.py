"""Capacity policies of the simulated scheduler: on-demand KV blocks (vLLM: preempt when out) and reserve
(TensorRT-LLM's GUARANTEED_NO_EVICT: admit only with the whole output's blocks set aside)."""
from whatif.roofline.engines import engine_spec
from whatif.roofline.estimate import Workload
from whatif.scenario import Scenario
from whatif.simulator.cluster import simulate
from whatif.simulator.config import SchedulerConfig, SimConfig
from whatif.simulator.workload import WorkloadSpec

# Llama-3-70B on 2 H100s holds only ~3 sequences of 5,000 tokens: long requests contend for the cache
TIGHT = Scenario(model="llama-3-70b", hardware="dgx-h100", gpus=2, workload=Workload(prompt=3000, output=2000))
LONG = WorkloadSpec(rate=1e9, requests=20, prompt=3000, output=2000, seed=1)


def run(capacity: str):
    res = simulate(SimConfig(TIGHT, LONG, SchedulerConfig(capacity=capacity, max_batch=256)))
    assert all(r.finish_s is not None for r in res.records)
    return res


def test_reserve_never_preempts_where_on_demand_does():
    on_demand, reserve = run("on-demand"), run("reserve")
    assert sum(r.preemptions for r in on_demand.records) > 0
    assert sum(r.preemptions for r in reserve.records) == 0
    # on demand admits more than fit whole, then thrashes: recomputed prompts make it finish later here
    assert on_demand.summary()["batch"]["max_seqs"] > reserve.summary()["batch"]["max_seqs"]


def test_reserve_runs_as_many_sequences_as_fit_whole():
    """Each running sequence had its whole prompt and output set aside: at most the estimate's max batch run
    at once, and that many do once the queue is deep."""
    assert run("reserve").summary()["batch"]["max_seqs"] == TIGHT.run().max_batch


def test_tensorrt_llm_reserves_and_vllm_takes_blocks_on_demand():
    assert SchedulerConfig.for_engine(engine_spec("trtllm")).capacity == "reserve"
    assert SchedulerConfig.for_engine(engine_spec("vllm")).capacity == "on-demand"


def test_a_disaggregated_cluster_that_reserves_hands_reservations_on():
    """A prefill replica gives back a sequence's reservation when the decode pool takes it (which sets its
    own aside): every request finishes, as on demand, and nothing is left reserved."""
    from whatif.simulator.config import ClusterConfig
    sc = Scenario(hardware="dgx-h100", kernel_engine="trtllm")
    res = simulate(SimConfig(sc, WorkloadSpec(rate=50, requests=600, prompt=2000, output=200, seed=1),
                             SchedulerConfig(capacity="reserve"), ClusterConfig(replicas=1, prefill_replicas=1)))
    assert all(r.finish_s is not None for r in res.records)
    assert sum(r.preemptions for r in res.records) == 0
