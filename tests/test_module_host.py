"""The host time of SGLang's MLA / DSA attention module in an eager prefill, as aiconfigurator measured it whole
(engine kernels.eager_module_launches; roofline/module_host.py, benchmarks/eager_module_host.py)."""
from pathlib import Path
from types import SimpleNamespace

import pytest

from whatif.errors import WhatifError
from whatif import api
from whatif.roofline.module_host import MODULE_KEYS, launch_factors, module_kernels_per_layer
from whatif.roofline.module_host import ALL_MODULE_ROLES
from whatif.roofline.op_launches import quantizes_own_input
from whatif.roofline.ops import OpClass, graph_role
from whatif.specs.engines import load_engine
from whatif.specs.op_kinds import OpRole
from tests.benchmark_module import load_benchmark

eager_module_host = load_benchmark("eager_module_host")
MODERN = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator" / "modern"


def prefill(model: str, quantization: str | None, prompt: int = 1024):
    r = api.estimate(model, "dgx-b200", tp=8, batch=1, prompt=prompt, output=2, kernel_engine="sglang",
                     quantization=quantization)
    (p, _), = r.prefill
    return p, load_engine("sglang")


def test_sglang_prefill_of_an_mla_model_charges_the_measured_module_host_time():
    p, spec = prefill("deepseek-ai/DeepSeek-R1", "fp8")
    launches = dict(spec.eager_module_launches)["mla:fp8_block"]
    n = module_kernels_per_layer(p.op_times)
    assert 5 <= n < launches < 30
    per_kernel = 29.3e-6   # the B200 hosts' eager launch (sglang.yaml eager_launch_by_arch)
    # every kernel once, the module's kernels of the 61 layers together `launches` a layer; "fp8" loads the
    # checkpoint's 128x128 blocks (session 73 M), whose per-token-group quantize kernels are ops of their own
    # (counted in p.kernels), so no GEMM outside the module adds an input-quantize launch of its own
    # (kernels.eager_input_quantize: per-tensor fp8, tests/test_op_launches.py)
    quantize = sum(t.op.count for t in p.op_times
                   if quantizes_own_input(t.op) and graph_role(t.op) not in ALL_MODULE_ROLES)
    assert quantize == 0 and any(t.op.name.endswith("_group_quant") for t in p.op_times)
    assert p.launch_s == pytest.approx((p.kernels + 61 * (launches - n) + quantize) * per_kernel, rel=1e-6)


def test_models_and_formats_without_a_measured_module_keep_one_launch_a_kernel():
    for model, quant in (("Qwen/Qwen3-32B", "fp8"), ("deepseek-ai/DeepSeek-R1", "nvfp4")):
        p, _ = prefill(model, quant)   # (an fp8 GEMM's own input-quantize kernel apart: test_op_launches.py)
        quantize = sum(t.op.count for t in p.op_times if quantizes_own_input(t.op))
        assert p.launch_s == pytest.approx((p.kernels + quantize) * 29.3e-6, rel=1e-6), model


def fake(roles_counts, launches=None, mla=True, indexer=False, scheme="fp8"):
    """A setup and priced ops shaped like module_host reads them."""
    times = [SimpleNamespace(op=SimpleNamespace(role=r, part_of=None, count=c, op_class=OpClass.GEMM))
             for r, c in roles_counts]
    attn = SimpleNamespace(quantization=scheme, weight="fp8" if scheme else "bf16")
    setup = SimpleNamespace(model=SimpleNamespace(mla=object() if mla else None, indexer=object() if indexer else None),
                            precision=SimpleNamespace(module=lambda cls: attn),
                            engine_spec=SimpleNamespace(eager_module_launches=launches or ()))
    return setup, times


def test_factors_spread_the_measured_launches_over_the_modules_kernels_and_never_lower_them():
    ops = [(OpRole.Q_PROJ, 3), (OpRole.Q_PROJ, 3), (OpRole.KV_A_PROJ, 3), (OpRole.KV_B_PROJ, 3),
           (OpRole.MLA_ATTENTION, 3), (OpRole.O_PROJ, 3),   # the dense layers' and the MoE layers' apart
           (OpRole.Q_PROJ, 58), (OpRole.Q_PROJ, 58), (OpRole.KV_A_PROJ, 58), (OpRole.KV_B_PROJ, 58),
           (OpRole.MLA_ATTENTION, 58), (OpRole.O_PROJ, 58), (OpRole.EXPERT_UP, 58), (OpRole.INPUT_NORM, 61)]
    setup, times = fake(ops, (("mla:fp8_block", 18.0),))
    f = launch_factors(setup, times)
    assert sorted(f.values()) == [3.0] * 12 and id(times[-1].op) not in f and id(times[-2].op) not in f
    assert launch_factors(*fake(ops, (("mla:fp8_block", 4.0),))) == {}        # fewer than counted: unchanged
    assert launch_factors(*fake(ops, (("dsa:fp8_block", 30.0),))) == {}       # a DSA figure is not an MLA one
    assert launch_factors(*fake(ops)) == {}                                   # the option absent: off
    assert launch_factors(*fake(ops, (("mla:fp8_block", 18.0),), mla=False)) == {}
    assert launch_factors(*fake(ops, (("mla:fp8_block", 18.0),), scheme="nvfp4")) == {}
    assert len(launch_factors(*fake(ops, (("dsa:bfloat16", 12.0),), indexer=True, scheme=""))) == 12


def test_an_unknown_module_key_is_a_one_line_error(tmp_path):
    text = (Path(__file__).resolve().parents[1] / "whatif" / "engine_profiles" / "sglang.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace('"mla:fp8_block":', '"mla:fp4":'))
    with pytest.raises(WhatifError, match="eager_module_launches: 'mla:fp4' is not valid; valid: mla:bfloat16"):
        load_engine(str(bad))
    assert set(dict(load_engine("sglang").eager_module_launches)) <= set(MODULE_KEYS)
    from whatif.roofline.module_host import GEMM_FORMATS, MODULE_ROLES
    assert set(MODULE_KEYS) == {f"{k}:{f}" for k in MODULE_ROLES for f in GEMM_FORMATS.values()}


@pytest.mark.skipif(not MODERN.is_dir(), reason="shared kernel tables not present")
def test_the_profiles_launches_are_the_tables_floors_and_hold_leave_one_gpu_out():
    table = eager_module_host.floors(MODERN)
    n = eager_module_host.launches(table)
    spec = dict(load_engine("sglang").eager_module_launches)
    for key, value in spec.items():
        module, fmt = key.split(":")
        per_gpu = [v for (g, m, f), v in n.items() if (m, f) == (module, fmt)]
        assert len(per_gpu) == 2 and value == pytest.approx(sum(per_gpu) / 2, abs=0.01), key
    assert all(abs(e) < 0.25 for e in eager_module_host.leave_one_gpu_out(table).values())


@pytest.mark.skipif(not MODERN.is_dir(), reason="shared kernel tables not present")
def test_trtllm_module_tables_are_graph_timed_so_hold_no_host_time():
    """TensorRT-LLM's MLA / DSA context-module tables replay a CUDA graph (collect_mla_module.py): their smallest
    calls cost fewer TensorRT-LLM eager launches than whatif counts kernels in the module, which an eager call could
    not; so trtllm.yaml takes no eager_module_launches from them."""
    host = eager_module_host.host_launch_s("trtllm")
    table = eager_module_host.trtllm_graph_floors(MODERN)
    kernels = {"mla": eager_module_host.whatif_module_kernels("deepseek-ai/DeepSeek-R1", "fp8"),
               "dsa": eager_module_host.whatif_module_kernels("zai-org/GLM-5", "fp8")}
    assert {(g, m) for g, m, _ in table} == {(g, m) for g in ("b200_sxm", "h100_sxm") for m in ("mla", "dsa")}
    for (gpu, module, gemm), (ms, _) in table.items():
        assert ms * 1e-3 / host[gpu] < kernels[module], (gpu, module, gemm)
    assert not load_engine("trtllm").eager_module_launches


def test_a_dsa_pass_past_the_top_k_takes_the_sparse_paths_measured_host_time():
    ops = [(OpRole.Q_PROJ, 3), (OpRole.KV_A_PROJ, 3), (OpRole.MLA_ATTENTION, 3), (OpRole.O_PROJ, 3)]
    setup, times = fake(ops, (("dsa:fp8_block", 8.0), ("dsa_sparse:fp8_block", 20.0)), indexer=True)
    setup.model.indexer = SimpleNamespace(top_k=2048)
    short, long_ = SimpleNamespace(groups=((1024, 0, 4),)), SimpleNamespace(groups=((1024, 0, 3), (1024, 1500, 1)))
    assert sorted(set(launch_factors(setup, times, short).values())) == [2.0]    # dense path: 8 / 4 kernels
    assert sorted(set(launch_factors(setup, times, long_).values())) == [5.0]    # one sequence past 2,048 keys
    assert sorted(set(launch_factors(setup, times).values())) == [2.0]           # no batch: the dense path


@pytest.mark.skipif(not MODERN.is_dir(), reason="shared kernel tables not present")
def test_sglangs_eager_moe_core_is_a_flat_host_floor_of_about_a_dozen_launches_on_both_gpus():
    """collect_wideep_deepep_moe.py times run_moe_core eagerly: its few-token rows are flat, ~11-13 SGLang eager
    launches on either GPU's host (leave-one-GPU-out within 25%), more than whatif's routed-MoE kernels a layer
    of the flashinfer_trtllm path the serving rows run; SGLang's profile maps no MoE host from it."""
    table = eager_module_host.moe_core_floors(MODERN)
    n = eager_module_host.launches(table)
    assert set(table) == {(g, "moe_core", "fp8_block") for g in ("b200_sxm", "h100_sxm")}
    assert all(9.0 < v < 15.0 for v in n.values())
    assert all(abs(e) < 0.25 for e in eager_module_host.leave_one_gpu_out(table).values())
    assert min(n.values()) > eager_module_host.whatif_moe_kernels("deepseek-ai/DeepSeek-R1", "fp8")
    assert not any(k.startswith("moe") for k, _ in load_engine("sglang").eager_module_launches)


@pytest.mark.skipif(not MODERN.is_dir(), reason="shared kernel tables not present")
def test_vllms_eager_dsa_module_costs_several_times_whatifs_kernel_count_in_host_launches():
    """vLLM's DSA context module is its one eagerly timed module table (collect_mla_module.py): flat at ~1.35 ms
    with bf16 GEMMs on both GPUs, ~61-63 vLLM eager launches where whatif counts 14 kernels; block-fp8 and NVFP4
    GEMMs add more."""
    table = eager_module_host.vllm_dsa_floors(MODERN)
    n = eager_module_host.launches(table, eager_module_host.VLLM_HOST_PROFILE)
    kernels = eager_module_host.whatif_module_kernels("zai-org/GLM-5", "fp8", engine="vllm")
    bf16 = [v for (g, m, f), v in n.items() if f == "bfloat16"]
    assert len(bf16) == 2 and all(v > 4 * kernels for v in bf16)
    for gpu in ("b200_sxm", "h100_sxm"):
        assert n[(gpu, "dsa", "fp8_block")] > n[(gpu, "dsa", "bfloat16")]
