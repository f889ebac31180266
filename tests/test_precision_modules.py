"""Precision per module class: --expert-quantization, --quantize-experts-only and a module table (a checkpoint's
ignore list) price each class's weight GEMMs and weights at its own scheme; one scheme for everything is unchanged."""
import pytest

from tests.test_cli import run_error, run_text
from whatif.errors import WhatifError
from whatif.inputs import scenario_from_inputs
from whatif.roofline.config import Parallelism, Precision
from whatif.roofline.estimate import Workload
from whatif.scenario import Scenario
from whatif.specs.models import load_model
from whatif.specs.module_params import layer_module_params

WORK = Workload(4, 512, 4)


def run(precision: Precision, hardware="dgx-b200", model="deepseek-v3"):
    return Scenario(model=model, hardware=hardware, parallel=Parallelism(tp=8),
                    workload=WORK, precision=precision).run(with_max_batch=False)


def ops(e, prefill=True):
    times = e.prefill[0][0].op_times if prefill else e.decode.op_times
    return {t.op.name: t.op for t in times}


def test_one_scheme_named_per_module_is_the_plain_scheme():
    """Naming the experts' scheme equal to the rest's (or a table entry equal to it) changes nothing."""
    plain = run(Precision.of_scheme("fp8-block"))
    same = run(Precision(**{**vars(Precision.of_scheme("fp8-block")), "expert_quantization": "fp8-block",
                            "modules": {"attention": "fp8-block"}}))
    assert same.ttft_s == pytest.approx(plain.ttft_s, rel=1e-12)
    assert same.tpot_s == pytest.approx(plain.tpot_s, rel=1e-12)
    assert same.memory.weights_bytes == pytest.approx(plain.memory.weights_bytes, rel=1e-12)


def test_expert_scheme_prices_the_experts_and_keeps_the_rest():
    """fp8-block layers with W4A16 experts: expert GEMMs run 16-bit with in-kernel dequantization, the attention
    and shared-expert GEMMs stay fp8 with their block-scale quantize; weights follow each class's bytes."""
    base = Precision.of_scheme("fp8-block")
    mixed = Precision(**{**vars(base), "expert_quantization": "w4a16"})
    e, b = run(mixed, "dgx-h100"), run(base, "dgx-h100")
    o = ops(e)
    assert o["experts_gate_up"].dtype == "bf16" and o["experts_gate_up"].alu_ops > 0
    assert o["q_a_proj"].dtype == "fp8" and "q_a_proj_group_quant" in o
    assert o["shared_expert_gate_up"].dtype == "fp8" and "shared_expert_gate_up_group_quant" in o
    assert "experts_gate_up_group_quant" not in o
    model = load_model("deepseek-v3")
    experts = layer_module_params(model, range(model.num_layers))["experts"]
    saved = experts / 8 * ((1 + 4 / 128 ** 2) - (0.5 + 2 / 32))   # fp8-block -> int4 with a bf16 scale per 32
    assert b.memory.weights_bytes - e.memory.weights_bytes == pytest.approx(saved, rel=1e-9)
    whole = ops(run(Precision.of_scheme("w4a16"), "dgx-h100"), prefill=False)   # each class priced as its scheme
    mixed_decode, base_decode = ops(e, prefill=False), ops(b, prefill=False)
    assert mixed_decode["experts_down"] == whole["experts_down"]
    assert mixed_decode["o_proj"] == base_decode["o_proj"]


def test_module_params_sum_to_the_layers():
    for name in ("deepseek-v3", "mixtral-8x7b", "llama-3-8b"):
        m = load_model(name)
        norms = m.norm_params() * 2 * m.num_layers
        total = sum(layer_module_params(m, range(m.num_layers)).values())
        assert total == sum(m.layer_params(i) for i in range(m.num_layers)) - norms


def test_unquantized_attention_runs_16_bit():
    prec = Precision(**{**vars(Precision.of_scheme("nvfp4")), "modules": {"attention": "none"}})
    o = ops(run(prec))
    assert o["q_a_proj"].dtype == "bf16" and o["o_proj"].dtype == "fp4" and o["experts_down"].dtype == "fp4"


def test_quantize_experts_only_from_inputs():
    sc = scenario_from_inputs(None, {"model": "deepseek-v3"}, quantization="nvfp4", quantize_experts_only=True)
    p = sc.precision
    assert (p.weight, p.activation, p.quantization, p.expert_quantization) == ("bf16", "bf16", "", "nvfp4")
    assert p.module("experts").weight == "fp4" and p.module("dense_mlp").weight == "bf16"
    with pytest.raises(WhatifError, match="--quantize-experts-only: needs --quantization"):
        scenario_from_inputs(None, {"model": "deepseek-v3"}, quantize_experts_only=True)


def test_scenario_file_keys(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("model: deepseek-v3\nprecision:\n  quantization: fp8-block\n  expert_quantization: nvfp4\n"
                 "  modules: {attention: none}\n")
    p = scenario_from_inputs(str(f), {}).precision
    assert p.module("experts").quantization == "nvfp4" and p.module("attention").weight == "bf16"
    f.write_text("model: deepseek-v3\nprecision:\n  quantization: nvfp4\n  quantize_experts_only: yes please\n")
    with pytest.raises(WhatifError, match="quantize_experts_only"):
        scenario_from_inputs(str(f), {})
    f.write_text("model: deepseek-v3\nprecision:\n  modules: {mlp: none}\n")
    with pytest.raises(WhatifError, match="unknown module class 'mlp'"):
        scenario_from_inputs(str(f), {})


def test_cli_flags_and_provenance_line(capsys):
    out = run_text(capsys, "estimate", "--model", "deepseek-v3", "--hardware", "dgx-b200", "--tp", "8", "--batch", "2",
                   "--prompt", "256", "--output", "4", "--no-ops", "--quantization", "fp8-block",
                   "--expert-quantization", "nvfp4")
    assert "experts nvfp4 (weights fp4, activations fp4); LM head 16-bit" in out
    assert "quantization nvfp4 (experts): fitted NVFP4 GEMM" in out
    assert "quantization fp8-block (attention, attention out, dense mlp, shared experts)" in out
    err = run_error(capsys, "estimate", "--model", "deepseek-v3", "--expert-quantization", "int3")
    assert "--expert-quantization: unknown quantization 'int3'" in err


def test_api_kwargs():
    import whatif
    r = whatif.estimate("deepseek-v3", "dgx-b200", tp=8, batch=2, prompt=256, output=4, quantization="nvfp4",
                        quantize_experts_only=True, with_max_batch=False)
    assert r.estimate.precision.expert_quantization == "nvfp4"
    assert r.to_dict()["precision"]["modules"]["experts"] == "nvfp4"


@pytest.mark.parametrize("scheme", ["nvfp4", "fp8-block", "fp8"])
def test_the_moe_gate_stays_16_bit_under_every_scheme(scheme):
    """No checkpoint quantizes the router (gate) GEMM: it runs bf16 on the 16-bit hidden state, 2-byte weights."""
    router = ops(run(Precision.of_scheme(scheme)), prefill=False)["router"]
    assert router.dtype == "bf16"
    assert router.bytes["hbm"] >= 2 * 7168 * 256           # DeepSeek-V3's 256-expert gate, 2 bytes per weight
