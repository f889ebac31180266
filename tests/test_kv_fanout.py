"""kv_fanout.py: a disaggregated MLA prefill rank sends its whole latent to each decode attention-TP rank
(TensorRT-LLM MLACacheFormatter, SGLang required_dst_info_num); split heads and larger prefill groups send once;
the engine profile's disaggregation.mla_kv_fanout turns it on (default off)."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import Parallelism
from whatif.simulator.kv_fanout import kv_copies, mla_kv_copies
from whatif.specs.engines import engine_from_mapping, engine_mapping, load_engine, profile_index, ENGINE_DIR

ADP8, TP8, DEP8 = Parallelism(tp=8, attention_dp=8), Parallelism(tp=8), Parallelism(tp=8, attention_dp=8)


@pytest.mark.parametrize("mla, sender, receiver, want", [
    (True, ADP8, TP8, 8),                                 # attention-DP prefill -> TP8 decode: each TP rank a copy
    (True, ADP8, DEP8, 1),                                # attention-DP both sides: one rank receives
    (True, TP8, TP8, 1),                                  # same TP: each rank sends to its counterpart
    (True, TP8, DEP8, 1),                                 # a larger prefill group: one rank sends
    (True, Parallelism(tp=4, attention_dp=4), Parallelism(tp=8, attention_dp=2), 4),
    (False, ADP8, TP8, 1),                                # split heads: each byte once
])
def test_copies_follow_the_attention_tp_groups(mla, sender, receiver, want):
    assert mla_kv_copies(mla, sender, receiver) == want


def setup(engine: str, model_mla: bool, par: Parallelism):
    return SimpleNamespace(engine_spec=load_engine(engine), model=SimpleNamespace(mla=object() if model_mla else None),
                           parallel=par)


def test_the_profiles_that_fan_out_and_the_default():
    assert load_engine("trtllm").mla_kv_fanout and load_engine("sglang").mla_kv_fanout
    assert load_engine("sglang-0.5").mla_kv_fanout   # a release takes its engine's section
    assert not load_engine("vllm").mla_kv_fanout     # not read for vLLM: one copy, as before
    assert kv_copies(setup("trtllm", True, ADP8), setup("trtllm", True, TP8)) == 8
    assert kv_copies(setup("vllm", True, ADP8), setup("vllm", True, TP8)) == 1
    assert kv_copies(SimpleNamespace(engine_spec=None, model=None, parallel=ADP8), setup("vllm", True, TP8)) == 1


def test_a_bad_fanout_value_is_a_one_line_error():
    data = engine_mapping(profile_index(ENGINE_DIR)["trtllm"])
    bad = {**data, "disaggregation": {"mla_kv_fanout": {**data["disaggregation"]["mla_kv_fanout"], "value": "maybe"}}}
    with pytest.raises(WhatifError, match="disaggregation.mla_kv_fanout"):
        engine_from_mapping(bad, "trtllm.yaml")


def test_an_attention_dp_prefill_pool_hands_a_tp_decode_pool_its_latent_eight_times(monkeypatch):
    """DeepSeek-V3 fp8 under TensorRT-LLM: an attention-DP prefill pool and a TP8 decode pool on their own B200
    nodes; each first token waits for 8 copies over the prefill rank's NIC, 7 more than with the fan-out off."""
    from whatif import simulator
    from whatif.roofline.config import Precision
    from whatif.scenario import Scenario
    from whatif.simulator.cluster import simulate
    from whatif.simulator.config import ClusterConfig, SchedulerConfig, SimConfig
    from whatif.simulator.workload import WorkloadSpec
    sc = Scenario(model="deepseek-v3", hardware="dgx-b200", parallel=Parallelism(tp=8), kernel_engine="trtllm",
                  precision=Precision(weight="fp8"))
    cl = ClusterConfig(replicas=1, prefill_replicas=1, prefill_tp=8, prefill_ep=1, prefill_dp_attention=True)
    cfg = SimConfig(sc, WorkloadSpec(requests=3, prompt=4096, output=4, concurrency=1, seed=1),
                    SchedulerConfig.for_engine(sc.engine_spec()), cl)
    fanned = simulate(cfg)
    monkeypatch.setattr(simulator.replica, "kv_copies", lambda sender, receiver: 1)
    once = simulate(cfg)
    extra = [a.ttft_s - b.ttft_s for a, b in zip(fanned.records, once.records)]
    # 7 more copies of 4,096 tokens x 70.3 kB (61 layers of a 1,152-byte bf16 latent) over a 50 GB/s NIC (40 ms),
    # each copy its 61 layers' sends (each a NIC latency)
    assert all(0.04 < e < 0.06 for e in extra), extra


def test_search_prices_the_fanout_as_the_simulator_does():
    """config_search.disaggregated multiplies a prefill profile's send by the same copies (one answer per question):
    an attention-DP prefill replica of a fanning-out engine sends 8 copies to a TP8 decode replica, 1 to a DP one;
    pools of 8 GPUs each take two nodes, so every cluster sends over the NIC (kv_send_net_s)."""
    from whatif.config_search.configs import disaggregated
    from whatif.config_search.evaluate import BatchPoint, ReplicaProfile
    from whatif.config_search.space import ReplicaSetup, SearchSpace
    space = SearchSpace(model="deepseek-v3", hardware=("dgx-b200",), gpu_budget=32, output=64, prompt=8192, nodes=4)
    pre = ReplicaSetup("dgx-b200", 8, 1, 1, "fp8", "fp8", dp_attention=True)
    tp8 = ReplicaSetup("dgx-b200", 8, 1, 8, "fp8", "fp8")
    dep8 = replace(tp8, dp_attention=True, attention_dp=0)
    prefill = ReplicaProfile(pre, prefill_s=0.5, kv_send_node_s=0.001, kv_send_net_s=0.006, mla_kv_fanout=True)
    points = (BatchPoint(batch=8, ttft_s=0.5, tpot_s=0.01, e2e_s=1.13, throughput_tok_s=453.0),)

    def sends(pre_profile, decode):
        return {round(c.ttft_s - 0.5, 9) for c in disaggregated(space, pre_profile, ReplicaProfile(decode,
                                                                                                   points=points))}
    assert sends(prefill, tp8) == {0.048} and sends(prefill, dep8) == {0.006}
    assert sends(replace(prefill, mla_kv_fanout=False), tp8) == {0.006}
