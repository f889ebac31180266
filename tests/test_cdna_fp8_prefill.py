"""Why MI300X prices a per-tensor fp8 prefill slower than bf16 (session 75 Q, issue 38): the flip is the engines'
dynamic per-tensor activation quantize in front of the scaled GEMM, measured on H100 (aiconfigurator vLLM 0.24.0,
/work/shared/reference/aiconfigurator/gemm.parquet) and carried to CDNA 3 by the stand-in rescaling; the fp8 MFMA
term itself is faster than bf16 as AMD's MAF figures say."""
from whatif.roofline.kernel_models.gemm import gemm_parts, gemm_time
from whatif.roofline.kernel_models.params import DTYPE_BYTES, ceilings, params_for
from whatif.specs.hardware import load_system

SHARD = (8192, 1024, 4096)    # a TP-8 attention / dense shard at an 8192-token prefill step
SQUARE = (8192, 4096, 4096)


def _price(system: str, arch: str, dtype: str, shape):
    gpu = load_system(system).gpu
    c = ceilings(gpu)
    p = params_for("gemm", arch, dtype, "vllm").params
    t_c, _, t_q = gemm_parts(*shape, DTYPE_BYTES[dtype], c.peak_flops(dtype), c, p)
    return gemm_time(*shape, dtype, gpu, p), t_c, t_q


def test_hopper_fit_keeps_the_measured_order():
    # measured H100 vLLM 0.24.0: SHARD fp8 141.96 us vs bf16 87.12 us; SQUARE fp8 299.4 us vs bf16 347.0 us
    assert _price("dgx-h100", "hopper", "fp8", SHARD)[0] > 1.3 * _price("dgx-h100", "hopper", "bf16", SHARD)[0]
    assert _price("dgx-h100", "hopper", "fp8", SQUARE)[0] < _price("dgx-h100", "hopper", "bf16", SQUARE)[0]


def test_cdna3_flip_is_the_activation_quantize_only():
    fp8, fp8_compute, fp8_quant = _price("mi300x-8x", "cdna3", "fp8", SHARD)
    bf16, bf16_compute, _ = _price("mi300x-8x", "cdna3", "bf16", SHARD)
    assert fp8_compute < 0.65 * bf16_compute          # MI300X fp8 MAF 1273 vs bf16 668 TFLOP/s
    assert fp8 > bf16 > fp8 - fp8_quant               # slower only with the quantize pass and its per-row term
    assert _price("mi300x-8x", "cdna3", "fp8", SQUARE)[0] < _price("mi300x-8x", "cdna3", "bf16", SQUARE)[0]
