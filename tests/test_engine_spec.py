"""Engine specs (engine_profiles/*.yaml): every number sourced, and each mechanism they carry (CUDA-graph
padding, CPU per step, memory accounting, scheduler limits) moving the prediction the way it should."""
from dataclasses import replace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Precision
from whatif.roofline.engines import ENGINES, engine_spec
from whatif.roofline.estimate import Workload
from whatif.roofline.forward_pass import engine_step, step_shape, time_pass
from whatif.roofline.memory import plan_memory
from whatif.roofline.pass_setup import pass_setup
from whatif.scenario import Scenario
from whatif.simulator.config import SchedulerConfig
from whatif.specs.engines import GIB, CpuOverhead, engine_from_mapping, engine_names, expand_sizes
from whatif.specs.profiles import read_yaml

BASE = Scenario(model="llama-3-8b", hardware="h100-sxm", workload=Workload(batch=1, prompt=512, output=64))


def setup_of(sc: Scenario):
    model, system, par, eff = sc.resolve()
    return pass_setup(model, system, par, sc.precision, eff, sc.utilization(), engine_spec=sc.engine_spec())


def test_every_cli_engine_has_a_spec_and_every_number_a_source():
    assert set(engine_names()) == set(ENGINES)
    for name in ENGINES:
        e = engine_spec(name)
        assert e.name == name
        assert len(e.sources) >= 15
        assert all(v.split(":")[0] in ("documented", "measured", "assumed") and len(v) > 30 for v in e.sources.values())
        assert list(e.graph_sizes) == sorted(set(e.graph_sizes)) and e.graph_sizes[0] == 1


def test_vllm_capture_sizes_follow_its_documented_formula():
    sizes = engine_spec("vllm").graph_sizes
    assert sizes == tuple([1, 2, 4] + list(range(8, 256, 8)) + list(range(256, 513, 16)))
    e = engine_spec("vllm")
    assert [e.graph_batch(b) for b in (1, 3, 5, 9, 250, 257, 512)] == [1, 4, 8, 16, 256, 272, 512]
    assert e.graph_batch(513) is None        # above the largest captured size: eager


def test_padding_adds_dummy_rows_without_logits_and_eager_above_the_largest_size():
    s = setup_of(BASE)
    run, graphs = step_shape(s, ForwardBatch.decode(13, 1000), True)
    assert graphs and run.sequences == 16 and run.logit_rows == 13
    run, graphs = step_shape(s, ForwardBatch.decode(600, 1000), True)
    assert not graphs and run.sequences == 600
    run, graphs = step_shape(s, ForwardBatch.prefill(1, 512), True)
    assert not graphs                         # prefill runs eagerly
    padded = time_pass(s, step_shape(s, ForwardBatch.decode(13, 1000), True)[0], True).time_s
    exact = time_pass(s, ForwardBatch.decode(13, 1000), True).time_s
    assert padded >= exact
    eager = engine_step(s, ForwardBatch.decode(600, 1000), True)[0]
    assert eager.launch_s > 0


def test_a_launchs_graph_list_replaces_the_profiles_and_the_limits_still_cut_it():
    """cuda_graph_sizes (a launch's list: TensorRT-LLM cuda_graph_config.batch_sizes) replaces the profile's
    decode_sizes; max_num_seqs then cuts it as it cuts the profile's (pad_to_limit adds the limit); bad input is a
    one-line error naming the field."""
    listed = Scenario(kernel_engine="trtllm", max_num_seqs=64, cuda_graph_sizes=(1, 2, 4, 8, 16, 24, 32, 48, 64))
    assert [listed.engine_spec().graph_batch(b) for b in (20, 33, 49)] == [24, 48, 64]
    cut = replace(listed, max_num_seqs=40).engine_spec()
    assert cut.graph_sizes == (1, 2, 4, 8, 16, 24, 32, 40)
    assert Scenario(kernel_engine="trtllm", max_num_seqs=64).engine_spec().graph_batch(20) == 32
    with pytest.raises(WhatifError, match="cuda_graph_sizes"):
        Scenario(kernel_engine="trtllm", cuda_graph_sizes=("x",)).engine_spec()


SERIAL = replace(engine_spec("vllm"), cpu=CpuOverhead(1e-3, 1e-5, overlapped=False))   # e.g. --no-async-scheduling


def test_cpu_work_adds_unless_the_engine_overlaps_it():
    sgl = engine_spec("sglang")
    assert all(engine_spec(n).cpu.overlapped for n in ENGINES)    # each engine's default overlaps
    assert SERIAL.step_seconds(0.010, 100) == pytest.approx(0.010 + 1e-3 + 100 * 1e-5)
    assert sgl.step_seconds(0.010, 100) == pytest.approx(0.010)
    assert sgl.step_seconds(1e-5, 100) == pytest.approx(sgl.cpu.seconds(100))   # a CPU-bound step
    s = replace(setup_of(BASE), engine_spec=SERIAL)
    p, wall = engine_step(s, ForwardBatch.decode(32, 1000), True)
    assert wall == pytest.approx(p.time_s + SERIAL.cpu.seconds(32))


def test_tpot_pays_the_cpu_per_step_the_kernels_alone_do_not():
    from whatif.roofline.estimate import estimate
    model, system, par, eff = BASE.resolve()

    def run(engine):
        return estimate(model, system, par, BASE.precision, BASE.workload, eff, utilization=0.9,
                        with_max_batch=False, engine_spec=engine)
    kernels_only, serial, overlapped = run(None), run(SERIAL), run(engine_spec("vllm"))
    assert serial.tpot_s == pytest.approx(kernels_only.tpot_s + SERIAL.cpu.seconds(1), rel=1e-6)
    assert overlapped.tpot_s == pytest.approx(kernels_only.tpot_s, rel=1e-6)   # the GPU step is longer
    assert serial.ttft_s == pytest.approx(kernels_only.ttft_s + SERIAL.cpu.seconds(1), rel=1e-6)
    assert overlapped.engine_spec.name == "vllm" and kernels_only.engine_spec is None


def test_memory_accounting_of_each_engine():
    cap = 79.11 * 2 ** 30   # the CUDA runtime's H100 total (h100-sxm.yaml runtime_capacity), not nvidia-smi's 81559 MiB
    for name in ENGINES:
        sc = replace(BASE, kernel_engine=name)
        s = setup_of(sc)
        plan = plan_memory(s, 1, 576, 512)
        e, f = sc.engine_spec(), sc.utilization()
        other = plan.activation_bytes + plan.workspace_bytes
        expected = {"total": f * cap - plan.weights_bytes - other,
                    "static": f * cap - plan.weights_bytes,
                    "free": f * (cap - plan.weights_bytes - other)}[e.memory.accounting]
        assert plan.free_for_kv == pytest.approx(expected, rel=1e-9), name
        assert plan.workspace_bytes == pytest.approx(e.memory.reserved_bytes(1))
    # NCCL buffers only when the replica spans GPUs
    e = engine_spec("vllm")
    assert e.memory.reserved_bytes(2) - e.memory.reserved_bytes(1) == pytest.approx(e.memory.nccl_bytes)
    # the activation peak is the engine's profile run (its token budget), not the workload's small pass
    assert plan_memory(setup_of(BASE), 1, 576, 64).activation_bytes == \
        plan_memory(setup_of(BASE), 1, 576, 512).activation_bytes


def test_sglang_memory_fraction_follows_tensor_parallelism():
    sc = replace(BASE, kernel_engine="sglang", model="llama-3-70b", parallel=replace(BASE.parallel, tp=8))
    assert sc.utilization() == 0.81
    assert replace(sc, memory_utilization=0.7).utilization() == 0.7
    assert replace(BASE, kernel_engine="sglang").utilization() == 0.88


def test_max_batch_is_capped_by_the_engines_max_num_seqs():
    small = replace(BASE, model="llama-3.2-1b", workload=Workload(batch=1, prompt=64, output=64))
    assert small.run().max_batch == small.engine_spec().max_num_seqs
    assert replace(small, kernel_engine="trtllm").run().max_batch > small.engine_spec().max_num_seqs


def test_vllm_takes_its_large_gpu_defaults_on_large_gpus_but_not_on_a100():
    """vllm/engine/arg_utils.py: >= 70 GiB and not an A100 -> 1024 sequences, 8192 tokens per step."""
    def spec(hw):
        return replace(BASE, hardware=hw).engine_spec()
    assert (spec("h100-sxm").max_num_seqs, spec("h100-sxm").max_num_batched_tokens) == (1024, 8192)
    assert (spec("b200").max_num_seqs, spec("h200-sxm").max_num_batched_tokens) == (1024, 8192)
    for small in ("a100-sxm-80gb", "l40s", "l4"):
        assert (spec(small).max_num_seqs, spec(small).max_num_batched_tokens) == (256, 2048)
    assert spec("h100-sxm").to_dict()["max_num_seqs"] == 1024


def test_simulator_scheduler_defaults_come_from_the_spec():
    d, v = SchedulerConfig(), engine_spec("vllm")
    assert (d.max_batch, d.token_budget, d.block_size, d.chunked_prefill) == \
        (v.max_num_seqs, v.max_num_batched_tokens, v.block_size, v.chunked_prefill)
    t = engine_spec("trtllm")
    cfg = SchedulerConfig.for_engine(t, max_batch=8)
    assert (cfg.max_batch, cfg.token_budget, cfg.block_size) == (8, t.max_num_batched_tokens, t.block_size)
    with pytest.raises(WhatifError, match="unknown field"):
        SchedulerConfig.for_engine(t, nonsense=1)


def test_a_malformed_spec_is_a_one_line_error_naming_the_field(tmp_path):
    from whatif.specs.engines import ENGINE_DIR
    good = read_yaml(ENGINE_DIR / "vllm.yaml")
    bad = {**good, "cpu": {**good["cpu"], "overlapped": {**good["cpu"]["overlapped"], "provenance": "guessed"}}}
    with pytest.raises(WhatifError, match=r"cpu\.overlapped\.provenance"):
        engine_from_mapping(bad, "x.yaml")
    bad = {**good, "memory": {**good["memory"], "accounting": {**good["memory"]["accounting"], "value": "all"}}}
    with pytest.raises(WhatifError, match="memory.accounting"):
        engine_from_mapping(bad, "x.yaml")
    with pytest.raises(WhatifError, match="start, stop, step"):
        expand_sizes([1, [2, 4]], "x")
    with pytest.raises(WhatifError, match="--engine"):
        engine_spec("tgi")


def test_estimate_says_which_engine_spec_it_used(capsys):
    from whatif.cli import main
    assert main(["estimate", "--engine", "sglang", "--no-ops", "--prompt", "128", "--output", "8"]) == 0
    out = capsys.readouterr().out
    assert "engine: sglang (engine_profiles/sglang.yaml)" in out


def test_gib_reserve_is_read_in_binary_units():
    assert engine_spec("vllm").memory.cuda_graph_bytes == pytest.approx(0.5 * GIB)


def test_fp8_scenario_runs_with_every_engine():
    for name in ENGINES:
        sc = replace(BASE, kernel_engine=name, precision=Precision("fp8", "fp8", "fp8"))
        est = sc.run(with_max_batch=False)
        assert est.ttft_s > 0 and est.tpot_s > 0


def test_limits_cap_the_batch_and_the_captured_graphs():
    """--max-num-seqs / --max-num-batched-tokens: the batch stops at the limit, decode graphs at the largest
    pure-decode batch the limits allow; TensorRT-LLM pads to that limit (one graph there), vLLM runs larger
    batches eagerly."""
    trt = engine_spec("trtllm")
    assert trt.graph_sizes[-1] == trt.max_num_seqs == 2048          # its listed sizes cut at its own limit
    assert trt.with_limits(640, 2048).graph_sizes[-3:] == (384, 512, 640)
    assert trt.with_limits(4096, 8192).graph_sizes[-2:] == (2048, 4096)   # listed sizes past 2048 come back
    assert trt.with_limits(4096, 1000).graph_sizes[-1] == 1000       # the token budget bounds a decode batch
    vllm = engine_spec("vllm")
    assert vllm.with_limits(100).graph_sizes[-1] == 96
    small = replace(BASE, model="llama-3.2-1b", workload=Workload(batch=1, prompt=64, output=64),
                    max_num_seqs=100)
    assert small.engine_spec().max_num_seqs == 100 and small.run().max_batch == 100


def test_limits_out_of_range_are_one_line_errors():
    from whatif.scenario import build_scenario
    with pytest.raises(WhatifError, match="max_num_seqs"):
        build_scenario({"max_num_seqs": 0}, {})
    with pytest.raises(WhatifError, match="max_num_batched_tokens"):
        build_scenario({"max_num_batched_tokens": 1.5}, {})


def test_the_sources_order_does_not_follow_the_hash_seed():
    """`sources` (estimate --json's engine.sources) in one order whatever PYTHONHASHSEED: the profile's keys are
    read in sorted order, not a set's."""
    import os
    import subprocess
    import sys
    code = "from whatif.specs.engines import load_engine; print(list(load_engine('vllm').sources))"
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(runs) == 1 and "scheduler.max_num_seqs" in runs.pop()
