"""Disaggregated pools as their own deployments (simulator/pools.py): the prefill pool's own layout (tp, pp, ep,
attention-DP) and GPU type, the KV path between the pools (NVLink inside one node, the NICs across nodes), and
the flags that say so."""
from __future__ import annotations

from dataclasses import replace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import Parallelism, Precision
from whatif.scenario import Scenario
from whatif.simulator.cluster import simulate
from whatif.simulator.config import ClusterConfig, SchedulerConfig, SimConfig
from whatif.simulator.pools import prefill_scenario
from whatif.simulator.workload import WorkloadSpec

MIXTRAL = Scenario(model="mixtral-8x7b", hardware="dgx-h100", parallel=Parallelism(tp=4, ep=4))
TRAFFIC = WorkloadSpec(requests=12, prompt=512, output=16, concurrency=4, seed=1)


def run(sc: Scenario, cluster: ClusterConfig):
    return simulate(SimConfig(sc, TRAFFIC, SchedulerConfig.for_engine(sc.engine_spec()), cluster))


def test_the_prefill_pool_takes_its_own_layout():
    cl = ClusterConfig(replicas=1, prefill_replicas=2, prefill_tp=2, prefill_ep=1)
    pre = prefill_scenario(SimConfig(MIXTRAL, TRAFFIC, cluster=cl))
    assert (pre.parallel.tp, pre.parallel.ep) == (2, 1)
    res = run(MIXTRAL, cl)
    assert all(r.status == "finished" for r in res.records)
    line = res.setup["cluster"]
    assert "2 prefill replicas (tp=2 pp=1," in line and "1 decode replica (tp=4 pp=1 ep=4," in line
    assert [i.gpus for i in res.replicas] == [2, 2, 4]


def test_expert_parallelism_follows_the_prefill_tp_group_by_default():
    """The decode pool spreads experts over its TP group; a prefill pool of another TP size does the same."""
    cl = ClusterConfig(replicas=1, prefill_replicas=1, prefill_tp=2)
    assert cl.prefill_parallel(MIXTRAL.parallel) == Parallelism(tp=2, ep=2)


def test_an_expert_parallel_prefill_pool_keeps_the_routing_skew():
    """The routing skew is the model's and the traffic's: an EP prefill pool waits on its busiest rank too; a pool
    without EP drops it (whatif rejects a skew without EP)."""
    skewed = Parallelism(tp=8, ep=8, expert_skew=1.0)
    assert ClusterConfig(replicas=1, prefill_replicas=1).prefill_parallel(skewed).expert_skew == 1.0
    assert ClusterConfig(replicas=1, prefill_replicas=1, prefill_ep=1).prefill_parallel(skewed).expert_skew == 0.0


def test_kv_goes_over_nvlink_inside_a_node_and_the_nics_across_nodes():
    inside = run(MIXTRAL, ClusterConfig(replicas=1, prefill_replicas=1))          # 8 of 8 GPUs: one node
    across = run(MIXTRAL, ClusterConfig(replicas=2, prefill_replicas=1))          # 12 GPUs: two nodes
    assert "nvlink" in inside.setup["cluster"] and "rdma-400g" in across.setup["cluster"]
    assert "prefill on 1 x dgx-h100 + decode on 1 x dgx-h100" in across.setup["cluster"]
    # the first token reaches the client with the KV, from the decode pool: over a 50 GB/s NIC it comes later
    nic = run(MIXTRAL, ClusterConfig(replicas=1, prefill_replicas=1, kv_link="rdma-400g"))   # same pools, the NIC
    assert sum(r.ttft_s for r in nic.records) > sum(r.ttft_s for r in inside.records)


def test_heterogeneous_pools_run_each_on_its_own_gpus():
    cl = ClusterConfig(replicas=1, prefill_replicas=1, prefill_hardware="dgx-a100-80gb")
    res = run(MIXTRAL, cl)
    assert "dgx-a100-80gb / dgx-h100" in res.setup["scenario"] or "dgx-h100 / dgx-a100-80gb" in res.setup["scenario"]
    line = res.setup["cluster"]
    assert "prefill replica (a100-sxm-80gb tp=4" in line and "decode replica (h100-sxm tp=4" in line
    fast = run(MIXTRAL, ClusterConfig(replicas=1, prefill_replicas=1, prefill_hardware="dgx-h100",
                                      kv_link="rdma-400g"))
    assert sum(r.ttft_s for r in res.records) > sum(r.ttft_s for r in fast.records)   # A100s prefill slower


@pytest.mark.parametrize("field", ["prefill_tp", "prefill_ep", "prefill_hardware", "prefill_max_batch",
                                   "prefill_token_budget", "prefill_moe_kernels"])
def test_a_prefill_layout_without_a_prefill_pool_is_an_error(field):
    value = {"prefill_hardware": "dgx-h100", "prefill_moe_kernels": "trtllm-gen"}.get(field, 2)
    with pytest.raises(WhatifError, match=f"--{field.replace('_', '-')}: .*--prefill-replicas"):
        ClusterConfig(**{field: value})


def test_a_prefill_pool_under_attention_dp_steps_its_ranks_together():
    v3 = replace(MIXTRAL, model="deepseek-v3", hardware="dgx-b200", parallel=Parallelism(tp=8, ep=8),
                 precision=replace(MIXTRAL.precision, weight="fp8"))
    cl = ClusterConfig(replicas=1, prefill_replicas=1, prefill_tp=8, prefill_ep=8, prefill_dp_attention=True)
    res = run(v3, cl)
    assert "1 prefill replica (tp=8 pp=1 ep=8, 8 attention-DP ranks" in res.setup["cluster"]
    assert all(r.status == "finished" for r in res.records)


def test_the_prefill_pool_runs_its_own_moe_kernels():
    """A ctx worker whose moe_config.backend differs from the gen worker's: the prefill pool's scenario takes it,
    the decode pool keeps the scenario's, and its experts are priced by those kernels' rows (a B200 NVFP4 MoE)."""
    v3 = replace(MIXTRAL, model="deepseek-v3", hardware="dgx-b200", parallel=Parallelism(tp=8, ep=8),
                 precision=replace(MIXTRAL.precision, weight="fp8"))
    cl = ClusterConfig(replicas=1, prefill_replicas=1, prefill_moe_kernels="trtllm-gen")
    cfg = SimConfig(v3, TRAFFIC, cluster=cl)
    assert prefill_scenario(cfg).moe_kernels == "trtllm-gen" and v3.moe_kernels is None
    own = prefill_scenario(SimConfig(v3, TRAFFIC, cluster=ClusterConfig(replicas=1, prefill_replicas=1)))
    assert own is v3
    priced = [s.resolved().efficiency.moe_engine for s in (prefill_scenario(cfg), own)]
    assert priced == ["sglang", None]
    valid = "marlin, triton, trtllm-gen"
    with pytest.raises(WhatifError, match=f"--prefill-moe-kernels: 'cutlass' is not valid; valid: {valid}"):
        ClusterConfig(prefill_replicas=1, prefill_moe_kernels="cutlass")


def _prefill_comm_ms(sc: Scenario) -> dict:
    """ms of a full 8-rank prefill pass's MoE transport ops (8 prompts of 8,192 tokens, one a rank), by op name."""
    from whatif.roofline.estimate import Workload
    est = replace(sc, workload=Workload(batch=8, prompt=8192, output=2)).resolved().estimate()
    out: dict = {}
    for p, n in est.prefill:
        for t in p.op_times:
            if t.op.name.startswith("moe_"):
                out[t.op.name] = out.get(t.op.name, 0.0) + t.total_s * n * 1e3
    return out


def test_the_prefill_pool_carries_its_moe_tokens_its_own_way():
    """An SGLang prefill worker under DP attention with EP and no --moe-a2a-backend gathers every rank's tokens for
    the MoE (layers/communicator.py ScatterMode.FULL; srt-slurm recipes/b200-fp4/1k1k.yaml's prefill workers) where
    the decode pool keeps its all-to-all (prefill_moe_a2a): the prefill pass prices an all-gather and a
    reduce-scatter of all 8 ranks' tokens, no dispatch / combine, and costs more than the fp8 all-to-all (the gather
    moves the 16-bit hidden state: the block-scaled fp8 quantization runs after it)."""
    v3 = replace(MIXTRAL, model="deepseek-v3", hardware="dgx-b200", parallel=Parallelism(tp=8, ep=8),
                 precision=Precision(weight="fp8", activation="fp8", kv="fp8", quantization="fp8-block"))
    pool = dict(replicas=1, prefill_replicas=1, prefill_tp=8, prefill_ep=8, prefill_dp_attention=True)
    gathered = prefill_scenario(SimConfig(v3, TRAFFIC, cluster=ClusterConfig(**pool, prefill_moe_a2a="gather")))
    own = prefill_scenario(SimConfig(v3, TRAFFIC, cluster=ClusterConfig(**pool)))
    assert (gathered.parallel.moe_a2a, own.parallel.moe_a2a, v3.parallel.moe_a2a) == ("gather", "nccl", "nccl")
    g, a = _prefill_comm_ms(gathered), _prefill_comm_ms(own)
    assert set(g) == {"moe_gather", "moe_scatter"} and set(a) == {"moe_dispatch", "moe_combine"}
    assert sum(g.values()) > sum(a.values())
    with pytest.raises(WhatifError, match="--prefill-moe-a2a: 'll' is not valid; valid: nccl, deepep, gather"):
        ClusterConfig(prefill_replicas=1, prefill_moe_a2a="ll")
    with pytest.raises(WhatifError, match="--prefill-moe-a2a: sets the prefill pool's layout"):
        ClusterConfig(prefill_moe_a2a="gather")


@pytest.mark.parametrize("flags, message", [
    (["--prefill-replicas", "1", "--prefill-hardware", "nope"], "--prefill-hardware: unknown hardware 'nope'"),
    (["--prefill-replicas", "1", "--prefill-ep", "3"], "--prefill-ep: 3"),
    (["--prefill-tp", "2"], "--prefill-tp: sets the prefill pool's layout"),
    (["--prefill-replicas", "1", "--prefill-max-batch", "0"], "--prefill-max-batch"),
    (["--prefill-max-batch", "1"], "--prefill-max-batch: sets the prefill pool's layout or limits"),
])
def test_bad_pool_flags_are_one_line_errors(capsys, flags, message):
    from whatif.cli import main
    rc = main(["simulate", "--model", "mixtral-8x7b", "--hardware", "dgx-h100", "--tp", "4", "--ep", "4",
               "--requests", "2", "--no-progress", *flags])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc != 0 and len(err) == 1 and message in err[0]


def test_pool_flags_and_a_scenario_file_say_the_same(tmp_path, capsys):
    from whatif.cli import main
    base = ["simulate", "--model", "mixtral-8x7b", "--hardware", "dgx-h100", "--tp", "4", "--ep", "4",
            "--concurrency", "2", "--requests", "4", "--prompt", "256", "--output", "4", "--no-progress"]
    assert main([*base, "--prefill-replicas", "2", "--prefill-tp", "2", "--prefill-ep", "1", "--json"]) == 0
    by_flags = capsys.readouterr().out
    f = tmp_path / "s.yaml"
    f.write_text("cluster: {prefill_replicas: 2, prefill_tp: 2, prefill_ep: 1}\n")
    assert main([*base, "--scenario", str(f), "--json"]) == 0
    by_file = capsys.readouterr().out
    assert '"prefill_ep": 1' in by_flags
    cut = by_flags.index('"lookup')   # (the memo's hit counts differ between runs of one process)
    assert by_file[:cut] == by_flags[:cut]


def test_a_replica_larger_than_one_node_takes_whole_nodes_in_the_systems_line():
    """A 16-GPU replica over 8-GPU nodes (--nodes) takes 2 nodes of its own, never 16 // 8 = 0 per node."""
    from whatif.simulator.pools import _systems_for
    assert _systems_for(3, 16, 8) == 6 and _systems_for(1, 16, 8) == 2
    assert _systems_for(3, 4, 8) == 2 and _systems_for(2, 8, 8) == 2


def test_a_prefill_pool_of_one_sequence_a_step_queues_a_burst():
    """aiconfigurator launches prefill workers at max_batch_size 1: a burst of prompts then runs one prompt a step,
    each waiting for those before it, where a pool of the decode pool's limits prefills them together."""
    burst = WorkloadSpec(requests=16, prompt=128, output=4, concurrency=16, seed=1)

    def mean_ttft(cluster: ClusterConfig) -> tuple[float, str]:
        res = simulate(SimConfig(MIXTRAL, burst, SchedulerConfig.for_engine(MIXTRAL.engine_spec()), cluster))
        assert all(r.status == "finished" for r in res.records)
        return sum(r.ttft_s for r in res.records) / len(res.records), res.setup["cluster"]

    many, line = mean_ttft(ClusterConfig(replicas=1, prefill_replicas=1))
    one, line_one = mean_ttft(ClusterConfig(replicas=1, prefill_replicas=1, prefill_max_batch=1,
                                            prefill_token_budget=1628))
    assert one > 2 * many
    assert "1 prefill replica (tp=4 pp=1 ep=4, at most 1 sequences and 1628 tokens a step" in line_one
    assert "at most" not in line   # (the decode pool's limits: nothing to say)


def test_the_prefill_pool_limits_its_own_prompts():
    """An engine that computes a prompt whole (TensorRT-LLM without chunked context) refuses one longer than the
    prefill pool's token budget, whatever the decode pool's."""
    from whatif.simulator.cluster import Cluster
    from whatif.simulator.clock import Clock
    from whatif.simulator.request import Request
    sched = replace(SchedulerConfig.for_engine(MIXTRAL.engine_spec()), priority="mixed", chunked_prefill=False,
                    token_budget=8192)
    cfg = SimConfig(MIXTRAL, TRAFFIC, sched, ClusterConfig(replicas=1, prefill_replicas=1, prefill_token_budget=1024))
    cluster = Cluster(Clock(), cfg, 600)
    assert "token budget (1024 tokens)" in cluster.rejection(Request(0, 0.0, 2000, 4))
    assert cluster.rejection(Request(1, 0.0, 1000, 4)) == ""


def test_the_first_token_leaves_the_decode_pool_at_its_step_boundary():
    """A decode engine streams the prefilled first token where its loop next looks at the transfers: at the end of
    the step in flight when the KV lands (replica.first_token_at), at once on an idle engine."""
    from whatif.simulator.replica import first_token_at
    assert first_token_at(1.0, 1.5) == 1.5 and first_token_at(2.0, 1.5) == 2.0
    res = run(MIXTRAL, ClusterConfig(replicas=1, prefill_replicas=1))
    cols = res.log.columns
    decode = res.replicas[-1].index
    ends = {round(s + d, 12) for i, s, d in zip(cols["replica"], cols["start_s"], cols["duration_s"]) if i == decode}
    on_boundary = [r for r in res.records if round(r.first_token_s, 12) in ends]
    # with 4 clients in flight the decode engine is mostly busy when KV lands: most first tokens wait for its step
    assert len(on_boundary) >= len(res.records) // 2


def test_sglang_pd_prefill_ranks_take_requests_by_a_random_room():
    """SGLang's PD prefill server sends a request to rank bootstrap_room % dp_size, the room drawn at random by its
    router (rank_group.py): a seeded uniform pick, so ranks' loads differ where round-robin would deal them evenly;
    other engines and roles keep their rank routers; a release profile routes as the engine it is a release of."""
    from types import SimpleNamespace

    from whatif.simulator.rank_group import rank_router_for
    from whatif.simulator.router import Router
    from whatif.specs.engines import load_engine
    sglang, trtllm, sglang_05, trtllm_engine, vllm_018 = (SimpleNamespace(engine_spec=load_engine(n)) for n in (
        "sglang", "trtllm", "sglang-0.5", "trtllm-engine", "vllm-0.18"))
    assert rank_router_for(sglang, "prefill") == rank_router_for(sglang_05, "prefill") == "random"
    assert rank_router_for(sglang, "decode") == rank_router_for(sglang) == "round-robin"
    assert rank_router_for(trtllm, "prefill") == rank_router_for(trtllm_engine, "prefill") == "least-outstanding"
    assert rank_router_for(vllm_018, "prefill") == "round-robin"
    one, two = (Router("random", list(range(8)), "1-0") for _ in range(2))
    picks = [one.pick() for _ in range(64)]
    assert picks == [two.pick() for _ in range(64)]   # seeded: a run repeats
    assert len(set(picks)) > 1 and max(picks.count(r) for r in range(8)) > 8   # uneven, unlike round-robin's 8 each
