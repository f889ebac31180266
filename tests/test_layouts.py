"""Layouts as the engines configure them: ep x moe_tp = tp (TensorRT-LLM moe_ep_size x moe_tp_size) and
attention data-parallel ranks of tp / ranks GPUs each; their checks, collectives and memory per GPU."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

import whatif
from whatif.cli import main
from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.graph import forward_ops
from whatif.roofline.memory import layer_weight_bytes
from whatif.specs.models import load_model
from whatif.specs.op_kinds import OpRole

V3, FP8 = load_model("deepseek-v3"), Precision(weight="fp8")


def ops_of(par: Parallelism, batch: int = 64, context: int = 2048):
    return forward_ops(V3, ForwardBatch.decode(batch, context), par, FP8)


def comm(ops, name: str):
    return [op for op in ops if op.name == name]


def test_moe_tp_defaults_to_tp_over_ep_and_follows_tp():
    assert Parallelism(tp=8).moe_tp == 8 and Parallelism(tp=8, ep=8).moe_tp == 1
    assert Parallelism(tp=8, ep=2).moe_tp == 4
    # --gpus fills tp in after the fact (Scenario.parallelism): the defaults follow
    assert replace(Parallelism(ep=2), tp=8).moe_tp == 4
    assert replace(Parallelism(dp_attention=True), tp=8).attention_dp == 8
    assert replace(Parallelism(tp=8, ep=2, moe_tp=4), tp=16, ep=4).moe_tp == 4   # explicit stays


@pytest.mark.parametrize("kwargs, message", [
    (dict(tp=8, ep=2, moe_tp=2), "--moe-tp: 2 with --ep 2 splits experts over 4 GPUs, not the --tp 8"),
    (dict(tp=8, attention_dp=3), "--dp-attention: 3 ranks do not divide --tp 8"),
    (dict(tp=8, dp_attention="yes"), "--dp-attention: 'yes'; valid"),
])
def test_impossible_layouts_name_the_field(kwargs, message):
    with pytest.raises(WhatifError, match=message):
        Parallelism(**kwargs)


def test_ep_not_dividing_tp_is_refused_by_the_estimate():
    with pytest.raises(WhatifError, match="--ep: 3 does not divide --tp 8; valid: 1, 2, 4, 8"):
        whatif.estimate("deepseek-v3", "hgx-h200", tp=8, ep=3, quantization="fp8")


def test_experts_split_ep_times_moe_tp_ways():
    """Every split of the TP group into ep x moe_tp holds the same expert bytes per GPU; the expert GEMMs see
    num_experts/ep experts of intermediate/moe_tp columns and routed tokens k/ep of the group's."""
    weights = {ep: layer_weight_bytes(V3, Parallelism(tp=8, ep=ep), FP8, 0) for ep in (1, 2, 4, 8)}
    assert len({round(w) for w in weights.values()}) == 1
    inter = V3.moe.expert_intermediate_size
    for ep in (2, 4, 8):
        up = next(op for op in ops_of(Parallelism(tp=8, ep=ep)) if op.role == OpRole.EXPERT_UP)
        assert up.shape.n == 2 * inter // (8 // ep)
        assert up.shape.m == pytest.approx(64 * V3.moe.experts_per_token / ep)


def test_ep_below_tp_reduces_over_tp_and_dispatches_only_under_attention_dp():
    """TP attention: every GPU holds every token, so EP needs no all-to-all (the TP all-reduce sums the experts'
    partials); attention-DP ranks hold their own tokens and send them to the experts within the EP group."""
    ops = ops_of(Parallelism(tp=8, ep=2))
    assert not comm(ops, "moe_dispatch") and not comm(ops, "moe_combine")
    assert {op.shape.gpus for op in ops if op.role == OpRole.MLP_ALLREDUCE} == {8}
    dp = ops_of(Parallelism(tp=8, ep=8, dp_attention=True))
    assert {op.shape.gpus for op in comm(dp, "moe_dispatch") + comm(dp, "moe_combine")} == {8}


def test_attention_dp_ranks_split_weights_kv_and_collectives():
    """DP 2 of attention TP 4: non-expert weights split 4 ways (between TP 8's and DP 8's), each rank holds
    its own sequences' KV, attention all-reduces run over the rank's 4 GPUs."""
    tp, dp2, dp8 = (Parallelism(tp=8, ep=8, attention_dp=n) for n in (1, 2, 8))
    assert dp2.attention_tp == 4 and dp2.dense.tp == 4
    w = [layer_weight_bytes(V3, p, FP8, 0) for p in (tp, dp2, dp8)]
    assert w[0] < w[1] < w[2]
    ops = ops_of(dp2)
    assert {op.shape.gpus for op in ops if op.role == OpRole.ATTN_ALLREDUCE} == {4}
    # each GPU sends its 1/attention_tp share of its rank's 32 sequences
    sent = sum(op.bytes["link"] for op in comm(ops, "moe_dispatch"))
    assert sent == pytest.approx(sum(op.bytes["link"] for op in comm(ops_of(dp8), "moe_dispatch")))
    r2 = whatif.estimate("deepseek-v3", "hgx-h200", tp=8, ep=8, dp_attention=2, quantization="fp8", batch=64,
                         with_max_batch=False)
    r8 = whatif.estimate("deepseek-v3", "hgx-h200", tp=8, ep=8, dp_attention=True, quantization="fp8", batch=64,
                         with_max_batch=False)
    assert r2.estimate.memory.kv_cache_bytes == pytest.approx(4 * r8.estimate.memory.kv_cache_bytes, rel=0.01)


def test_split_experts_under_attention_dp_gather_and_scatter():
    """moe_tp > 1 under attention DP: the ranks' tokens are all-gathered over the TP group and the partial
    outputs reduce-scattered (no all-to-all); with whole experts it is the dispatch/combine all-to-all."""
    ops = ops_of(Parallelism(tp=8, ep=2, attention_dp=8))
    gather, scatter = comm(ops, "moe_gather"), comm(ops, "moe_scatter")
    assert gather and scatter and not comm(ops, "moe_dispatch")
    assert gather[0].shape.collective == "all_gather" and gather[0].shape.gpus == 8
    assert scatter[0].shape.collective == "reduce_scatter"
    assert not comm(ops_of(Parallelism(tp=8, ep=8, attention_dp=8)), "moe_gather")


@pytest.mark.parametrize("layout", [dict(ep=2), dict(ep=4, moe_tp=2), dict(ep=8, dp_attention=2),
                                    dict(ep=2, dp_attention=True), dict(ep=1, dp_attention=4)])
def test_new_layouts_estimate_under_ideal_and_default_efficiency(layout):
    for efficiency in ("default", "ideal"):
        r = whatif.estimate("deepseek-v3", "hgx-h200", tp=8, quantization="fp8", batch=32, prompt=1024, output=64,
                            efficiency=efficiency, with_max_batch=False, **layout)
        assert 0 < r.tpot_s < 1 and 0 < r.ttft_s < 60


def test_cli_flags_and_scenario_file(tmp_path, capsys):
    main(["estimate", "--model", "deepseek-v3", "--hardware", "hgx-h200", "--tp", "8", "--ep", "4", "--moe-tp", "2",
          "--dp-attention", "2", "--quantization", "fp8", "--batch", "8", "--no-ops", "--json"])
    par = json.loads(capsys.readouterr().out)["parallel"]
    assert (par["ep"], par["moe_tp"], par["attention_dp"], par["dp_attention"]) == (4, 2, 2, True)
    main(["estimate", "--model", "deepseek-v3", "--hardware", "hgx-h200", "--tp", "8", "--ep", "8",
          "--dp-attention", "--quantization", "fp8", "--batch", "8", "--no-ops"])
    assert "tp=8 pp=1 ep=8, DP attention)" in capsys.readouterr().out
    path = tmp_path / "s.yaml"
    path.write_text("model: deepseek-v3\nhardware: hgx-h200\nparallel: {tp: 8, ep: 2, moe_tp: 4, attention_dp: 4}\n"
                    "precision: {quantization: fp8}\n")
    r = whatif.estimate(scenario=str(path), batch=8, with_max_batch=False)
    assert (r.estimate.parallel.moe_tp, r.estimate.parallel.attention_tp) == (4, 2)
    code = main(["estimate", "--model", "deepseek-v3", "--hardware", "hgx-h200", "--tp", "8", "--ep", "2",
                 "--moe-tp", "8"])
    assert code == 2 and "--moe-tp: 8 with --ep 2" in capsys.readouterr().err


def test_search_enumerates_ep_moe_tp_and_wide_ep_over_nodes():
    from whatif.config_search.space import SearchSpace, layouts
    # TensorRT-LLM (moe_ep_size x moe_tp_size) runs every EP dividing TP; vLLM only ep 1 (experts split like TP)
    # and ep = tp (--enable-expert-parallel: EP = DP x TP), so its search tries those two (space.default_eps)
    space = SearchSpace(model="deepseek-v3", hardware=("dgx-h100",), gpu_budget=32, nodes=4, tps=(8, 16), pps=(1,),
                        engine="trtllm")
    vllm = layouts(SearchSpace(model="deepseek-v3", hardware=("dgx-h100",), gpu_budget=8, tps=(8,), pps=(1,)), 8, True)
    assert {(tp, ep) for tp, _, ep, dp in vllm} == {(8, 1), (8, 8)}
    got = layouts(space, node=8, moe=True, system=32)
    assert {(tp, ep) for tp, _, ep, dp in got if tp == 8 and dp == 1} == {(8, 1), (8, 2), (8, 4), (8, 8)}
    assert {(tp, ep) for tp, _, ep, dp in got if tp == 8 and dp == 8} == {(8, 1), (8, 2), (8, 4), (8, 8)}
    # fewer ranks than GPUs only with whole experts over the group (vLLM DP + EP, SGLang --dp N < tp)
    assert {(ep, dp) for tp, _, ep, dp in got if tp == 8 and 1 < dp < 8} == {(8, 2), (8, 4)}
    # across nodes: wide EP only, each rank's attention TP inside a node
    assert [(tp, ep, dp) for tp, _, ep, dp in got if tp == 16] == [(16, 16, 2), (16, 16, 4), (16, 16, 8),
                                                                    (16, 16, 16)]
    r = whatif.search("deepseek-v3", "dgx-h100", nodes=2, gpus=16, tp=(16,), pp=(1,), ep=(16,), batches=(64,),
                      modes=("aggregated",), quantizations=("fp8",), prompt=1000, output=100)
    assert r.configs and all(c.replica.tp == 16 and c.replica.dp_attention for c in r.configs)
    assert any(c.feasible for c in r.configs)
    assert {c.replica.attention_dp for c in r.configs} == {2, 4, 8, 16}
    assert {c.replica.label().split(" kv")[0].split(" q")[0] for c in r.configs if c.replica.attention_dp == 4} \
        == {"tp16 pp1 ep16 dp-attn4"}
    label = whatif.search("mixtral-8x7b", "dgx-h100", gpus=4, tp=(4,), pp=(1,), ep=(2,), batches=(8,),
                          modes=("aggregated",), prompt=1000, output=100).configs[0].replica.label()
    assert "tp4 pp1 ep2 moe-tp2" in label


def test_serve_commands_carry_the_attention_dp_ranks():
    from whatif.queries.serve_command import Deployment, Pool, serve_lines
    pool = Pool(tp=8, ep=8, dp_attention=True, attention_dp=2)
    sglang = "\n".join(serve_lines(Deployment("sglang", "m", (pool,))))
    vllm = "\n".join(serve_lines(Deployment("vllm", "m", (pool,))))
    assert "--dp-size 2 --enable-dp-attention" in sglang
    assert "--data-parallel-size 2 --enable-expert-parallel --tensor-parallel-size 4" in vllm


def test_each_attention_dp_rank_pays_its_own_cpu_and_graphs():
    """Each rank runs its own scheduler on its own CPU process and captures its own CUDA graphs: a step's CPU work
    is the busiest rank's sequences', not the whole group's (6 us/sequence over 67,584 sequences was 406 ms)."""
    from whatif.roofline.forward_pass import engine_step, step_shape
    from whatif.scenario import Scenario
    sc = Scenario(model="deepseek-v3", hardware="hgx-h200", parallel=Parallelism(tp=8, ep=8,
                  dp_attention=True), precision=Precision.of_scheme("fp8"), kernel_engine="sglang")
    setup = sc.resolved().pass_setup()
    fb = ForwardBatch.decode(8 * 100 - 3, 2048)
    run, graphs = step_shape(setup, fb, True)
    assert graphs and run.sequences == 8 * setup.engine_spec.graph_batch(100)   # each rank pads its own 100
    p, wall = engine_step(setup, fb, True)
    assert wall == pytest.approx(setup.engine_spec.step_seconds(p.time_s, 100))
    assert setup.engine_spec.cpu.seconds(100) < setup.engine_spec.cpu.seconds(797)


def test_compare_systems_take_moe_tp_attention_dp_and_nodes():
    from whatif.queries.compare import on_system
    from whatif.scenario import Scenario
    sc = on_system(Scenario(model="deepseek-v3"), "dgx-h100:tp=16:ep=4:moe_tp=4:dp=2:nodes=2")
    assert (sc.hardware, sc.nodes, sc.parallel.moe_tp, sc.parallel.attention_dp) == ("dgx-h100", 2, 4, 2)
    with pytest.raises(WhatifError, match="--systems: .*'dp=x' is not valid"):
        on_system(Scenario(), "dgx-h100:dp=x")


def test_the_api_takes_dp_attention_as_a_count_too():
    a = whatif.estimate("deepseek-v3", "hgx-h200", tp=8, ep=8, dp_attention=4, quantization="fp8", batch=8,
                        with_max_batch=False)
    b = whatif.estimate("deepseek-v3", "hgx-h200", tp=8, ep=8, attention_dp=4, quantization="fp8", batch=8,
                        with_max_batch=False)
    assert a.estimate.parallel == b.estimate.parallel and a.estimate.parallel.attention_tp == 2
    assert a.tpot_s == b.tpot_s


def test_a_prefill_pool_has_its_own_attention_dp_ranks():
    from whatif.roofline.config import Parallelism
    from whatif.simulator.config import ClusterConfig
    decode = Parallelism(tp=8, ep=8, dp_attention=True)
    pre = ClusterConfig(prefill_replicas=1, prefill_attention_dp=4).prefill_parallel(decode)
    assert (pre.tp, pre.ep, pre.attention_dp, pre.attention_tp) == (8, 8, 4, 2)
    assert ClusterConfig(prefill_replicas=1).prefill_parallel(decode).attention_dp == 8
    with pytest.raises(WhatifError, match="--prefill-attention-dp: 3 ranks do not divide the prefill TP group of 8"):
        ClusterConfig(prefill_replicas=1, prefill_attention_dp=3).prefill_parallel(decode)
    with pytest.raises(WhatifError, match="--no-prefill-dp-attention turns attention DP off"):
        ClusterConfig(prefill_replicas=1, prefill_dp_attention=False, prefill_attention_dp=2)


def test_a_searched_layout_with_fewer_ranks_prints_its_serve_command():
    from whatif.config_search.configs import Config
    from whatif.config_search.space import ReplicaSetup, SearchSpace
    from whatif.queries.deployment import from_search
    from whatif.queries.serve_command import serve_lines
    key = ReplicaSetup("dgx-h100", 8, 1, 8, "bf16", "bf16", attention_dp=2)
    assert (key.dp_attention, key.label()) == (True, "tp8 pp1 ep8 dp-attn2 wbf16 kvbf16")
    assert ReplicaSetup("dgx-h100", 8, 1, 8, "bf16", "bf16", (), True) == \
        ReplicaSetup("dgx-h100", 8, 1, 8, "bf16", "bf16", attention_dp=8)
    space = SearchSpace(model="qwen3-235b-a22b", hardware=("dgx-h100",), gpu_budget=8)
    deployment, _ = from_search(space, Config("aggregated", "dgx-h100", key, 64, 1, 8))
    assert "--data-parallel-size 2 --enable-expert-parallel --tensor-parallel-size 4" in \
        "\n".join(serve_lines(deployment))


def test_thirteen_nodes_hold_a_wide_ep_prefill_and_decode_deployment():
    """--nodes N beyond two: 13 DGX H100 nodes hold a 4-node prefill pool (EP32) and a 9-node decode pool (EP72
    with 32 redundant experts, 288 = 72 x 4 slots), each pool on its own nodes, the KV over the NICs."""
    from whatif.simulator.cluster import check_fits
    from whatif.simulator.config import ClusterConfig, SimConfig
    from whatif.simulator.pools import systems_used
    from whatif.simulator.workload import WorkloadSpec
    from whatif.scenario import Scenario
    sc = Scenario(model="deepseek-v3", hardware="dgx-h100", nodes=13, precision=Precision.of_scheme("fp8-block"),
                  parallel=Parallelism(tp=72, ep=72, dp_attention=True, redundant_experts=32))
    assert sc.system_profile().gpu_count == 104
    cfg = SimConfig(sc, WorkloadSpec(concurrency=8, requests=8), cluster=ClusterConfig(
        prefill_replicas=1, prefill_tp=32, prefill_ep=32, prefill_dp_attention=True))
    check_fits(cfg)
    assert systems_used(cfg, 32, 72) == "prefill on 4 x dgx-h100 + decode on 9 x dgx-h100"


def test_search_takes_the_attention_dp_ranks_to_try():
    kw = dict(gpus=8, tp=(8,), pp=(1,), batches=(16,), modes=("aggregated",), prompt=1000, output=100)
    r = whatif.search("mixtral-8x7b", "dgx-h100", dp_attention=(2, 8), **kw)
    assert {(c.replica.ep, c.replica.attention_dp) for c in r.configs} == \
        {(e, d) for e in (1, 8) for d in (2, 8)}     # as asked, at every EP vLLM runs (space.default_eps)
    r = whatif.search("mixtral-8x7b", "dgx-h100", dp_attention=(2, 8), engine="trtllm", **kw)
    assert {(c.replica.ep, c.replica.attention_dp) for c in r.configs} == \
        {(e, d) for e in (1, 2, 4, 8) for d in (2, 8)}     # TensorRT-LLM: at every EP
    with pytest.raises(WhatifError, match="--dp-attention: llama-3.1-8b has no experts"):
        whatif.search("llama-3.1-8b", "dgx-h100", dp_attention=(2,), **kw)
    assert main(["search", "--model", "mixtral-8x7b", "--hardware", "dgx-h100", "--gpus", "8", "--tp", "8",
                 "--dp-attention", "3", "--no-progress"]) == 2   # 3 ranks divide no TP size: said, not searched
