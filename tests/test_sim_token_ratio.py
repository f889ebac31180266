"""SGLang's new_token_ratio admission (scheduler capacity `ratio`, simulator/scheduling/token_ratio.py): a request
joins only while its prompt and output estimate fit beside the running ones' remaining outputs x the ratio."""
from whatif.roofline.engines import engine_spec
from whatif.simulator.cluster import simulate
from whatif.simulator.config import SchedulerConfig, SimConfig
from whatif.simulator.scheduling import token_ratio as tr
from tests.test_sim_capacity_policy import LONG, TIGHT, run   # (the contended cache those tests use)


def test_the_ratio_decays_to_its_floor_and_a_retract_raises_it():
    assert tr.decayed(tr.INIT_RATIO, 0) == 0.7
    assert abs(tr.decayed(tr.INIT_RATIO, 300) - (0.7 + 0.098) / 2) < 1e-12   # halfway after 300 of 600 steps
    assert tr.decayed(tr.INIT_RATIO, 10_000) == tr.MIN_RATIO == 0.7 * 0.14
    # retract_decode: (decoded + 20 per request) / (max_new + 1), at most 1
    assert tr.after_retract(decoded=100, max_new=1999, requests=2) == (100 + 40) / 2000
    assert tr.after_retract(decoded=5000, max_new=100, requests=1) == 1.0
    assert tr.output_estimate(10_000) == tr.CLIP_MAX_NEW_TOKENS == 4096 and tr.output_estimate(-3) == 0


def test_admission_refuses_at_equality_as_sglang_does():
    assert tr.admits(99, 200, 100.0) and not tr.admits(100, 200, 100.0)


def test_ratio_admits_fewer_at_once_and_preempts_less_than_on_demand():
    on_demand, ratio = run("on-demand"), run("ratio")
    assert sum(r.preemptions for r in on_demand.records) > sum(r.preemptions for r in ratio.records)
    assert on_demand.summary()["batch"]["max_seqs"] > ratio.summary()["batch"]["max_seqs"]


def test_sglang_admits_by_ratio_and_the_other_engines_do_not():
    assert SchedulerConfig.for_engine(engine_spec("sglang")).capacity == "ratio"
    assert SchedulerConfig.for_engine(engine_spec("vllm")).capacity == "on-demand"
    assert SchedulerConfig.for_engine(engine_spec("trtllm")).capacity == "reserve"


def test_sglang_requeues_a_retracted_request_last_and_vllm_first():
    assert SchedulerConfig.for_engine(engine_spec("sglang")).preempted_queue_last
    assert not SchedulerConfig.for_engine(engine_spec("vllm")).preempted_queue_last


def test_a_retracted_request_queued_last_still_finishes():
    res = simulate(SimConfig(TIGHT, LONG, SchedulerConfig(capacity="on-demand", max_batch=256,
                                                           preempted_queue_last=True)))
    assert all(r.finish_s is not None for r in res.records)
    assert sum(r.preemptions for r in res.records) > 0
