"""Engine version profiles (engine_profiles/versions/) and the serving front end: a version runs its engine's
kernel fits except where its own kernels differ (TensorRT-LLM before XQA reads a GQA model's KV cache once per
query head), and a request through the HTTP server pays the spec's front end on TTFT and E2E."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Precision
from whatif.roofline.engine_kernels import engine_ops, is_gqa_decode, unshared_gqa_decode
from whatif.roofline.engines import check_engine, engine_spec
from whatif.roofline.estimate import Workload
from whatif.roofline.forward_pass import time_pass
from whatif.roofline.pass_setup import pass_setup
from whatif.roofline.graph import pass_ops
from whatif.roofline.context import pass_context
from whatif.specs.op_kinds import OpRole
from whatif.roofline.ops import OpClass
from whatif.scenario import Scenario
from whatif.specs.engines import engine_from_mapping, load_engine, version_names
from whatif.specs.profiles import read_yaml
from whatif.specs.engines import VERSION_DIR


def decode_time(model: str, engine: str, tp: int = 1) -> float:
    sc = Scenario(model=model, hardware="h100-sxm", gpus=tp, precision=Precision("fp8", "fp8", "fp8"),
                  kernel_engine=engine)
    m, system, par, eff = sc.resolve()
    setup = pass_setup(m, system, par, sc.precision, eff, sc.utilization(), engine_spec=sc.engine_spec())
    return time_pass(setup, ForwardBatch.decode(64, 2048), True).time_s


def test_version_profile_runs_its_engines_fits():
    assert "trtllm-0.6" in version_names()
    e = engine_spec("trtllm-0.6")
    assert e.kernel_fits == "trtllm" and check_engine("trtllm-0.6") == "trtllm"
    assert not e.gqa_decode_shares_kv and e.frontend.seconds(1000) == 0.0   # offline C++ benchmark
    assert all(v.split(":")[0] in ("documented", "assumed") for v in e.sources.values())
    assert engine_spec("trtllm").gqa_decode_shares_kv and engine_spec("trtllm").kernel_fits == "trtllm"
    with pytest.raises(WhatifError, match="trtllm-0.6"):
        check_engine("trtllm-9")


def test_pre_xqa_decode_reads_the_cache_once_per_query_head():
    sc = Scenario(model="llama-3.1-70b", hardware="h100-sxm", gpus=2, precision=Precision("fp8", "fp8", "fp8"))
    m, system, par, eff = sc.resolve()
    ctx = pass_context(m, ForwardBatch.decode(8, 1000), par, sc.precision, 0)
    op = next(o for o in pass_ops(ctx) if is_gqa_decode(o))
    g = op.shape.heads / op.shape.kv_heads
    assert g == 8
    un = unshared_gqa_decode(op)
    assert un.shape.kv_bytes == pytest.approx(g * op.shape.kv_bytes)
    assert un.bytes["hbm"] - op.bytes["hbm"] == pytest.approx((g - 1) * op.shape.kv_bytes)
    others = [o for o in pass_ops(ctx) if o.op_class != OpClass.ATTENTION_DECODE]
    run = engine_ops(others, engine_spec("trtllm-0.6"))
    # GEMMs etc. untouched but for the fp8 GEMMs' inputs, which a TensorRT engine's producers write quantized,
    # and RoPE and the KV append, which its attention operator does (tests/test_engine_fused_ops.py)
    kept = [o for o in others if o.role not in (OpRole.ROPE, OpRole.KV_WRITE)]
    assert [(o.name, o.flops, o.bytes, o.shape) for o in run] == [(o.name, o.flops, o.bytes, o.shape) for o in kept]
    assert all(o.input_quantized == (o.op_class == OpClass.GEMM and o.dtype == "fp8") for o in run)
    assert engine_ops([op], engine_spec("trtllm")) == [op]


def test_pre_xqa_slows_gqa_decode_but_not_multi_head_models():
    gqa = decode_time("llama-3.1-70b", "trtllm-0.6", 2) / decode_time("llama-3.1-70b", "trtllm", 2)
    mha = decode_time("llama-2-7b", "trtllm-0.6") / decode_time("llama-2-7b", "trtllm")
    assert gqa > 1.3          # 8 query heads per KV head: the cache read dominates a long-context decode
    assert mha == pytest.approx(1.0, rel=0.05)   # only the (non-overlapped) CPU per step differs


def test_front_end_adds_to_served_ttft_and_e2e_only():
    sc = Scenario(model="llama-3-8b", hardware="h100-sxm", kernel_engine="vllm",
                  workload=Workload(batch=1, prompt=1000, output=16))
    est = sc.run(with_max_batch=False)
    front = engine_spec("vllm").frontend
    assert front.seconds(1000) == pytest.approx(front.per_request_s + 1000 * front.per_prompt_token_s)
    assert est.served_ttft_s - est.ttft_s == pytest.approx(front.seconds(1000))
    assert est.served_e2e_s - est.e2e_s == pytest.approx(front.seconds(1000))


def test_bad_version_fields_are_one_line_errors():
    data = read_yaml(VERSION_DIR / "trtllm-0.6.yaml")
    bad = dict(data, kernels={**data["kernels"], "gqa_decode_shares_kv": {**data["kernels"]["gqa_decode_shares_kv"],
                                                                          "value": "no"}})
    with pytest.raises(WhatifError, match="gqa_decode_shares_kv"):
        engine_from_mapping(bad, "bad.yaml")
    bad = dict(data, frontend={"per_request_s": {"value": -1, "unit": "s", "provenance": "assumed", "source": "x"},
                               "per_prompt_token_s": {"value": 0, "unit": "s", "provenance": "assumed", "source": "x"}})
    with pytest.raises(WhatifError, match="frontend.per_request_s"):
        engine_from_mapping(bad, "bad.yaml")


def test_vllm_before_async_scheduling_pays_its_cpu_step_in_line():
    old, new = engine_spec("vllm-0.6"), engine_spec("vllm")
    assert check_engine("vllm-0.6") == "vllm" and old.gqa_decode_shares_kv
    assert not old.cpu.overlapped and new.cpu.overlapped
    assert old.step_seconds(5e-3, 8) == pytest.approx(5e-3 + old.cpu.seconds(8))
    assert new.step_seconds(5e-3, 8) == pytest.approx(5e-3)
    assert old.graph_sizes[-1] == 256 and old.graph_batch(257) is None


def test_sglang_0_3_runs_prefill_and_decode_in_separate_steps_without_overlap():
    """SGLang v0.3.0: a step is a prefill batch or the decode batch (prefill first; mixing only with
    --enable-mixed-chunk), its CPU step runs between GPU steps (no overlap scheduler before 0.4), graphs up to
    160; today's SGLang spec keeps the prefill-first steps but overlaps its CPU work."""
    from whatif.simulator.config import SchedulerConfig

    old, new = engine_spec("sglang-0.3"), engine_spec("sglang")
    assert check_engine("sglang-0.3") == "sglang" and old.kernel_fits == "sglang"
    assert not old.cpu.overlapped and new.cpu.overlapped
    assert old.step_seconds(5e-3, 8) == pytest.approx(5e-3 + old.cpu.seconds(8))
    assert old.graph_sizes[-1] == 160 and old.graph_batch(161) is None and old.graph_batch(9) == 16
    for spec in (old, new):
        cfg = SchedulerConfig.for_engine(spec)
        assert not cfg.chunked_prefill and cfg.priority == "prefill", spec.name
    assert old.frontend.seconds(100) > 0   # served over HTTP


def test_a_release_profile_lists_only_what_differs_from_its_base(tmp_path):
    """versions/sglang-0.5.yaml and vllm-0.18.yaml extend their engine's profile (specs/engines.py engine_mapping):
    every section they do not list is the base's, so a scheduler change to SGLang reaches the rows that run 0.5; a
    leaf they list replaces the base's; a base that is no engine profile is a one-line error."""
    import dataclasses
    own = {"name", "description", "kernel_fits", "sources", "allreduce_norm_fusion", "allreduce_fusion_caps",
           "allreduce_fusion_kernel", "allreduce_fusion_quantizes"}
    for version, base in (("sglang-0.5", "sglang"), ("vllm-0.18", "vllm")):
        raw = read_yaml(VERSION_DIR / f"{version}.yaml")
        assert raw["extends"] == base and set(raw) == {"kind", "name", "description", "extends", "kernels"}
        v, b = load_engine(version), load_engine(base)
        for f in dataclasses.fields(v):
            if f.name not in own:
                assert getattr(v, f.name) == getattr(b, f.name), (version, f.name)
        assert v.base_engine == base and v.allreduce_norm_fusion and not b.allreduce_norm_fusion
    mine = tmp_path / "mine.yaml"
    mine.write_text("kind: engine\nname: mine\nextends: vllm\nscheduler:\n  max_num_seqs: {value: 8, unit: "
                    "sequences, provenance: assumed, source: a test}\n")
    spec = load_engine(str(mine))
    assert spec.max_num_seqs == 8 and spec.max_num_batched_tokens == load_engine("vllm").max_num_batched_tokens
    assert spec.base_engine == "vllm" and spec.sources["scheduler.max_num_seqs"] == "assumed: a test"
    chained = tmp_path / "chained.yaml"   # a launch of a release with other flags extends that release (session 64)
    chained.write_text("kind: engine\nname: chained\nextends: vllm-0.18\n")
    assert load_engine(str(chained)).allreduce_norm_fusion == load_engine("vllm-0.18").allreduce_norm_fusion
    assert load_engine(str(chained)).base_engine == load_engine("vllm-0.2-ray").base_engine == "vllm"
    nowhere = tmp_path / "nowhere.yaml"
    nowhere.write_text("kind: engine\nname: nowhere\nextends: vllm-9.9\n")
    with pytest.raises(WhatifError, match=r"nowhere.yaml.extends: 'vllm-9.9' is not valid; valid: "):
        load_engine(str(nowhere))


def test_vllm_0_2_behind_ray_pays_two_actor_round_trips_a_step():
    """DistServe's vLLM baselines run v0.2.3 with --engine-use-ray --worker-use-ray (its 2-start-api-server.py):
    vllm-0.2-ray is vllm-0.2 (v0.2.7) with Ray's measured round trips (Ray 2.5.0 release microbenchmark: an async
    actor's 1 / 1,483.5 s, a threaded actor's 1 / 2,575.0 s) and v0.2.3's blocking sampler (vllm-project/vllm#1889,
    merged after v0.2.3: ~2 ms an iteration) added to each step, and the engine actor's add_request to each request;
    the rest is vllm-0.2's."""
    import dataclasses
    ray, base = load_engine("vllm-0.2-ray"), load_engine("vllm-0.2")
    assert ray.cpu.per_step_s - base.cpu.per_step_s == pytest.approx(1 / 1483.5 + 1 / 2575.0 + 2.0e-3, rel=2e-3)
    assert ray.frontend.per_request_s - base.frontend.per_request_s == pytest.approx(1 / 1483.5, rel=2e-3)
    assert ray.cpu.per_sequence_s == base.cpu.per_sequence_s and ray.cpu.overlapped is False
    for f in dataclasses.fields(ray):
        if f.name not in {"name", "description", "cpu", "frontend", "sources"}:
            assert getattr(ray, f.name) == getattr(base, f.name), f.name
    assert "1_1_async_actor_calls_sync" in ray.sources["cpu.per_step_s"]
    assert "vllm-project/vllm#1889" in ray.sources["cpu.per_step_s"]


def test_release_profiles_split_limits_as_their_base_engine():
    """Attention-DP group limits (roofline/engines.py GROUP_LIMITS) are keyed on the engine a profile is a release of
    (kernels.fits), not its name: every SGLang release splits them over the ranks, no vLLM or TensorRT-LLM one does."""
    from whatif.roofline.engines import limits_per_group
    for name in ("sglang", "sglang-0.3", "sglang-0.5", "sglang-rocm"):
        assert limits_per_group(load_engine(name)), name
    for name in ("vllm", "vllm-0.18", "vllm-rocm", "trtllm", "trtllm-engine", "trtllm-0.6"):
        assert not limits_per_group(load_engine(name)), name


def test_vllm_0_2_pays_its_detokenizer_per_running_sequence():
    """v0.2.x detokenizes every running sequence each step (_decode_sequence -> detokenize_incrementally), ~20 us a
    call (vllm-project/vllm#5206, vLLM 0.3.0's same function): vllm-0.2's per-sequence host time carries it beside
    the 6 us of bookkeeping the newer profiles assume, and vllm-0.2-ray inherits it."""
    base, newer = load_engine("vllm-0.2"), load_engine("vllm-0.6")
    assert base.cpu.per_sequence_s - newer.cpu.per_sequence_s == pytest.approx(20e-6)
    assert "vllm-project/vllm#5206" in base.sources["cpu.per_sequence_s"]
    assert load_engine("vllm-0.2-ray").cpu.per_sequence_s == base.cpu.per_sequence_s


def test_deepspeed_mii_runs_splitfuse_passes_formed_after_the_last():
    """DeepSpeed-MII serving FastGen (versions/deepspeed-mii.yaml): ragged batches of at most 768 tokens and 512
    sequences, decodes first and prompts cut to fill the rest (chunked), eager, and its loop forms each pass after
    the last one's sampled tokens reach the host (no step formed ahead); vLLM's kernel fits stand in."""
    from whatif.simulator.config import SchedulerConfig

    mii = engine_spec("deepspeed-mii")
    assert check_engine("deepspeed-mii") == "vllm" and mii.kernel_fits == "vllm"
    assert not mii.cpu.overlapped and engine_spec("vllm").cpu.overlapped
    assert mii.step_seconds(5e-3, 8) == pytest.approx(5e-3 + mii.cpu.seconds(8))
    assert mii.graph_sizes == () and not mii.prefix_caching
    cfg = SchedulerConfig.for_engine(mii)
    assert cfg.chunked_prefill and cfg.token_budget == 768 and cfg.max_batch == 512
    from whatif.specs import hardware
    h100 = mii.for_gpu(hardware.load_component("h100-sxm", "gpu"))
    assert (h100.max_num_seqs, h100.max_num_batched_tokens) == (512, 768)   # no GPU-size default in DeepSpeed


def test_distserve_awaits_each_step_through_ray():
    """DistServe's own engine (versions/distserve.yaml, single_stage_engine.py): each _step sends the batch to its
    workers through Ray and awaits the result before forming the next (no step formed ahead), so vllm.yaml's step
    plus Ray's measured threaded-actor round trip (1 / 2,575.0 s) is paid in line; the rest is vllm.yaml's."""
    ds, base = load_engine("distserve"), load_engine("vllm")
    assert ds.cpu.per_step_s - base.cpu.per_step_s == pytest.approx(1 / 2575.0, rel=2e-3)
    assert ds.cpu.overlapped is False and base.cpu.overlapped is True
    assert check_engine("distserve") == "vllm" and engine_spec("distserve").kernel_fits == "vllm"
    assert "1_1_actor_calls_sync" in ds.sources["cpu.per_step_s"]
    import dataclasses
    # its hand-off (session 72 D, simulator/decode_migration.py): the first token from the context stage, the KV
    # moved by the decoding loop between steps behind the 5% waiting-block gate
    assert ds.first_token_from_prefill and ds.decode_migration_gate == 0.05
    assert not base.first_token_from_prefill and base.decode_migration_gate == 0.0
    # its own stage engines form pipeline micro-batches by turns, not vLLM V1's batch queue (session 75 J)
    assert not ds.pp_batch_queue and base.pp_batch_queue
    for f in dataclasses.fields(ds):
        if f.name not in {"name", "description", "cpu", "sources", "first_token_from_prefill",
                          "decode_migration_gate", "pp_batch_queue"}:
            assert getattr(ds, f.name) == getattr(base, f.name), f.name
