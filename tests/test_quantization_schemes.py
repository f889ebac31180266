"""--quantization: schemes named as the engines name them, each printed as weights / activations / KV, priced by a
fitted kernel where one exists and by its mechanism where none does, and swept by `search --quantizations`."""
import pytest

from tests.test_cli import run_error, run_text
from whatif.config_search.space import SearchSpace, replica_setups
from whatif.errors import WhatifError
from whatif.roofline.config import Precision
from whatif.roofline.estimate import Workload
from whatif.scenario import Scenario
from whatif.specs.quantization import SCHEMES

WORK = Workload(8, 2048, 16)


def run(hardware="h100-sxm", **precision):
    return Scenario(model="llama-3.1-8b", hardware=hardware, workload=WORK,
                    precision=Precision(**precision)).run(with_max_batch=False)


def gemm(e, name, prefill=True):
    times = e.prefill[0][0].op_times if prefill else e.decode.op_times
    return next(t.op for t in times if t.op.name == name)


def test_fp8_scheme_is_w8a8_and_prices_as_the_fp8_dtypes():
    """`--quantization fp8` is what `--dtype fp8 --kv-dtype bf16` runs (the fitted fp8 GEMMs), not W8A16."""
    scheme = run(**vars(Precision.of_scheme("fp8")))
    dtypes = run(weight="fp8", activation="fp8", kv="bf16")
    w8a16 = run(weight="fp8")
    assert scheme.ttft_s == pytest.approx(dtypes.ttft_s) and scheme.tpot_s == pytest.approx(dtypes.tpot_s)
    assert gemm(scheme, "mlp_gate_up").dtype == "fp8" and gemm(w8a16, "mlp_gate_up").dtype == "bf16"
    assert scheme.ttft_s < w8a16.ttft_s      # fp8 tensor cores in prefill, where W8A16 runs 16-bit


@pytest.mark.parametrize("name, expected", [("fp8", 1.0), ("fp8-block", 1.0 + 4 / 128 ** 2),
                                            ("nvfp4", 0.5 + 1 / 16), ("mxfp4", 0.5 + 1 / 32),
                                            ("awq", 0.5 + 2.5 / 128), ("gptq", 0.5 + 2.5 / 128),
                                            ("w4a16", 0.5 + 2 / 32),
                                            ("w8a16", 1.0 + 2 / 128)])
def test_scheme_weight_bytes_carry_their_scales(name, expected):
    assert Precision.of_scheme(name).weight_bytes == pytest.approx(expected)


def test_fp8_block_is_priced_by_its_mechanism():
    """Block scales: a per-token-group quantize op before each fp8 weight GEMM (not the fitted per-tensor one) and
    promotion work per K-block; the LM head stays 16-bit."""
    block, tensor = run(**vars(Precision.of_scheme("fp8-block"))), run(**vars(Precision.of_scheme("fp8")))
    op = gemm(block, "mlp_gate_up")
    assert op.input_quantized and op.alu_ops == pytest.approx(op.shape.m * op.shape.n * (op.shape.k // 128) * 2)
    names = {t.op.name for t in block.prefill[0][0].op_times}
    assert "mlp_gate_up_group_quant" in names and "lm_head_group_quant" not in names
    assert block.ttft_s != tensor.ttft_s


def test_weight_only_schemes_dequantize_in_the_kernel():
    for name in ("mxfp4", "awq"):
        op = gemm(run(**vars(Precision.of_scheme(name))), "mlp_down", prefill=False)
        assert op.dtype == "bf16" and op.alu_ops > 0, name


def test_header_says_weights_activations_kv(capsys):
    base = ("estimate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--batch", "4", "--no-ops")
    text = run_text(capsys, *base, "--quantization", "fp8-block")
    assert "quantization fp8-block: fp8 GEMM fit plus the mechanism" in text   # how it is priced, said
    scheme = run_text(capsys, *base, "--quantization", "fp8").splitlines()[0]
    assert scheme.endswith("quantization fp8 (W8A8 FP8, per-tensor scales): weights fp8, activations fp8, KV bf16")
    w8a16 = run_text(capsys, *base, "--weight-dtype", "fp8").splitlines()[0]
    assert w8a16.endswith("weights fp8, activations bf16, KV bf16")
    technique = run_text(capsys, *base, "--technique", "fp8").splitlines()[0]
    assert technique.endswith("weights fp8, activations fp8, KV bf16")   # W8A8, as it runs


def test_bad_or_contradicting_scheme_is_one_line(capsys):
    base = ("estimate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm")
    assert "valid: fp8, fp8-block, nvfp4" in run_error(capsys, *base, "--quantization", "fp9")
    assert "not both" in run_error(capsys, *base, "--quantization", "fp8", "--weight-dtype", "int4")
    with pytest.raises(WhatifError, match="--quantization"):
        Precision(quantization="awq")          # a scheme whose dtypes are not given is refused, not guessed


def test_nvfp4_needs_an_fp4_peak():
    assert run(hardware="b200", **vars(Precision.of_scheme("nvfp4"))).tpot_s > 0
    with pytest.raises(WhatifError):
        run(hardware="h100-sxm", **vars(Precision.of_scheme("nvfp4")))


def test_search_sweeps_schemes():
    space = SearchSpace(model="llama-3.1-8b", hardware=("h100-sxm",), gpu_budget=1, quantizations=("none", "fp8"))
    keys = replica_setups(space, moe=False)
    assert [(k.weight, k.quantization) for k in keys] == [("bf16", ""), ("fp8", "fp8")]
    assert "qfp8" in keys[1].label()
    with pytest.raises(WhatifError, match="--quantizations"):
        SearchSpace(model="llama-3.1-8b", hardware=("h100-sxm",), gpu_budget=1, quantizations=("int3",))


def test_every_scheme_is_documented():
    for s in SCHEMES.values():
        assert s.label and s.pricing and ("fit" in s.pricing)


def test_nvfp4_on_hopper_names_the_weight_only_schemes_that_run_there():
    import whatif
    from whatif.errors import WhatifError
    with pytest.raises(WhatifError, match="no tensor-core peak on h100-sxm.*--quantization mxfp4, awq, gptq or w4a16"):
        whatif.estimate("openai/gpt-oss-120b", "h100-sxm", quantization="nvfp4", with_max_batch=False)


def test_nvfp4_attention_runs_fp8_over_an_fp8_cache_else_16_bit():
    """NVFP4 quantizes only the GEMMs' inputs: attention (MLA's expanded prefill and absorbed decode) runs fp8 over
    an fp8 cache (TensorRT-LLM's mFP8ContextMLA / mFP8GenerationMLA), else 16-bit, never at the fp4 peak; so the
    MLA fits, not the per-class model at fp4, price it."""
    from whatif.roofline.config import Parallelism
    from whatif.roofline.kernel_timing import covers
    assert Precision.of_scheme("nvfp4", kv="fp8").attention_dtype == "fp8"
    assert Precision.of_scheme("nvfp4").attention_dtype == "bf16"
    assert Precision.of_scheme("fp8-block", kv="fp8").attention_dtype == "fp8"   # (unchanged: the activations')
    s = Scenario(model="deepseek-v3", hardware="b200", kernel_engine="trtllm", parallel=Parallelism(tp=8, ep=8),
                 workload=Workload(1, 4096, 4), precision=Precision.of_scheme("nvfp4", kv="fp8"))
    gpu, e = s.resolved().system.gpu, s.run(with_max_batch=False)
    pre = gemm(e, "attention_mla")
    dec = gemm(e, "attention_mla", prefill=False)
    assert pre.dtype == dec.dtype == "fp8" and covers(pre, gpu, "trtllm") and covers(dec, gpu, "trtllm")
    assert gemm(e, "o_proj").dtype == "fp4"    # the GEMMs stay NVFP4
