"""Host launches of an op the engine's eager prefill runs as a chain of kernels (engine
kernels.prefill_op_launches; roofline/op_launches.py): SGLang's Gated DeltaNet chunk."""
from pathlib import Path
from types import SimpleNamespace

import pytest

from whatif import api
from whatif.errors import WhatifError
from whatif.roofline.op_launches import op_launch_factors, quantizes_own_input
from whatif.roofline.ops import OpClass
from whatif.specs.engines import load_engine
from whatif.specs.op_kinds import OpRole

QWEN35 = "Qwen/Qwen3.5-397B-A17B"
B200_LAUNCH = 29.3e-6   # the B200 hosts' eager launch (sglang.yaml eager_launch_by_arch)


def prefill(model: str, engine: str, prompt: int = 1024):
    r = api.estimate(model, "dgx-b200", tp=8, batch=1, prompt=prompt, output=2, kernel_engine=engine,
                     quantization="fp8")
    (p, _), = r.prefill
    return p


def quantize_kernels(p) -> int:
    """The fp8 dense GEMMs of a pass that launch their own input-quantize kernel."""
    return sum(t.op.count for t in p.op_times if quantizes_own_input(t.op))


def test_sglang_gdn_prefill_charges_the_chunk_kernels_launches():
    spec = load_engine("sglang")
    launches = dict(spec.prefill_op_launches)["linear_attention"]
    assert launches == 9 and spec.eager_input_quantize   # fused_gdn_gating + fla/chunk.py's 8 Triton kernels
    p = prefill(QWEN35, "sglang")
    gdn_layers = sum(t.op.count for t in p.op_times if t.op.role == OpRole.LINEAR_ATTENTION)
    assert gdn_layers == 45 and quantize_kernels(p) >= 4 * 45   # in/out projections, shared expert, ...
    extra = gdn_layers * (launches - 1) + quantize_kernels(p)
    assert p.launch_s == pytest.approx((p.kernels + extra) * B200_LAUNCH, rel=1e-6)


def test_fp8_gemms_launch_their_input_quantize_kernel_in_an_eager_sglang_prefill():
    p = prefill("Qwen/Qwen3-32B", "sglang")
    assert quantize_kernels(p) == 4 * 64   # qkv, o, gate_up, down of each of the 64 layers (lm_head 16-bit)
    assert p.launch_s == pytest.approx((p.kernels + quantize_kernels(p)) * B200_LAUNCH, rel=1e-6)
    bf16 = api.estimate("Qwen/Qwen3-32B", "dgx-b200", tp=8, batch=1, prompt=1024, output=2,
                        kernel_engine="sglang").prefill[0][0]
    assert quantize_kernels(bf16) == 0 and bf16.launch_s == pytest.approx(bf16.kernels * B200_LAUNCH, rel=1e-6)


def test_decode_passes_keep_one_launch_a_kernel():
    r = api.estimate(QWEN35, "dgx-b200", tp=8, batch=200, prompt=1024, output=2, kernel_engine="sglang",
                     quantization="fp8")   # 200 sequences: above SGLang's largest decode graph, so eager
    d = r.decode   # an eager decode pass: one launch a kernel, its GDN op's recurrence one kernel
    assert d.launch_s == pytest.approx(d.kernels * B200_LAUNCH, rel=1e-6) and d.launch_s > 0


def fake(roles_counts, launches=None, quantize=False):
    times = [SimpleNamespace(op=SimpleNamespace(role=r, part_of=None, count=c, op_class=OpClass.GEMM, dtype="fp8",
                                                input_quantized=r == OpRole.O_PROJ, shape=SimpleNamespace()))
             for r, c in roles_counts]
    spec = SimpleNamespace(prefill_op_launches=launches or (), eager_input_quantize=quantize)
    return SimpleNamespace(engine_spec=spec), times


def test_factors_only_for_the_listed_roles_and_never_below_one():
    ops = [(OpRole.LINEAR_ATTENTION, 45), (OpRole.SHORT_CONV, 45), (OpRole.ATTENTION, 15)]
    setup, times = fake(ops, (("linear_attention", 9.0),))
    assert list(op_launch_factors(setup, times).values()) == [9.0]
    assert op_launch_factors(*fake(ops)) == {}                                  # absent: off
    assert op_launch_factors(*fake(ops, (("ssm_scan", 5.0),))) == {}            # no such op here
    assert op_launch_factors(*fake(ops, (("linear_attention", 1.0),))) == {}    # one: as before
    both = op_launch_factors(*fake(ops + [(OpRole.O_PROJ, 15)], (("linear_attention", 9.0),), quantize=True))
    assert sorted(both.values()) == [2.0, 2.0, 9.0]   # the GDN op's 9; fp8 GEMMs 2, but not o_proj (input fp8)


def test_an_unknown_role_is_a_one_line_error(tmp_path):
    text = (Path(__file__).resolve().parents[1] / "whatif" / "engine_profiles" / "sglang.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("{linear_attention: 9}", "{attention: 9}"))
    with pytest.raises(WhatifError, match="prefill_op_launches: 'attention' is not valid; valid: linear_attention"):
        load_engine(str(bad))


MODERN = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator" / "modern"


@pytest.mark.skipif(not MODERN.is_dir(), reason="shared kernel tables not present")
def test_the_gdn_table_is_graph_timed_so_it_gives_no_host_floor():
    """aiconfigurator's SGLang GDN rows replay a CUDA graph (collect_gdn.py's benchmark_with_power captures one,
    allow_graph_fail False): its chunk_gated_delta_rule floor is the GPU's, far below 8 eager launches, so it
    cannot price the chunk's host time the way the eager module tables price MLA / DSA (module_host.py)."""
    import pandas as pd
    for gpu in ("b200_sxm", "h100_sxm"):
        d = pd.read_parquet(MODERN / gpu / "sglang" / "linear_attention__gdn_perf.parquet")
        floor = d[(d.kernel_source == "chunk_gated_delta_rule") & (d.num_tokens <= 16)].latency.min() * 1e-3
        assert floor < 8 * B200_LAUNCH / 5, gpu   # ~20 us for 8 kernels: ~2.5 us each, graph launches


def test_nvfp4_gemms_launch_their_input_quantize_kernel_in_an_eager_sglang_prefill():
    """SGLang's ModelOptFp4LinearMethod.apply quantizes the activation (scaled_fp4_quant) before its fp4 GEMM."""
    r = api.estimate("Qwen/Qwen3-32B", "dgx-b200", tp=8, batch=1, prompt=1024, output=2, kernel_engine="sglang",
                     quantization="nvfp4")
    (p, _), = r.prefill
    assert quantize_kernels(p) == 4 * 64
    assert p.launch_s == pytest.approx((p.kernels + quantize_kernels(p)) * B200_LAUNCH, rel=1e-6)
