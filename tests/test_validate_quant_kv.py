"""quant_kv_attention beyond the generic check: the torch quantizers round-trip within half a step, packing is
lossless, the split-K merge handles more chunks than one step reads, and the op's cache bytes are the bytes of
the cache tensors the kernel reads."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from whatif.validate.kernels import quant_kv_attention as qkv  # noqa: E402
from whatif.validate.kernels.common import relative_error  # noqa: E402

CACHE = ("k", "v", "k_scale", "v_scale", "k_zero", "v_zero")


def _float_kv(gen, kv_heads=2, tokens=64, d=32):
    return torch.randn((kv_heads, tokens, d), generator=gen), torch.randn((kv_heads, tokens, d), generator=gen)


@pytest.mark.parametrize("bits", [4, 2])
def test_pack_unpack_is_lossless(bits):
    gen = torch.Generator().manual_seed(0)
    codes = torch.randint(0, 2 ** bits, (3, 8, 16), generator=gen, dtype=torch.int32)
    for dim in (1, 2):
        grouped = codes.unflatten(dim, (-1, qkv.per_byte(bits)))
        assert torch.equal(qkv.unpack(qkv.pack(grouped, bits, dim + 1), bits, dim), codes)


@pytest.mark.parametrize("bits,group", [(8, 32), (4, 16), (2, 8), (2, 32)])
def test_quantize_round_trip_within_half_a_step(bits, group):
    """|x - dequant(quant(x))| <= half a step (plus the fp16 rounding of scales and zeros) for every element."""
    gen = torch.Generator().manual_seed(1)
    k, v = _float_kv(gen)
    cache = qkv.quantize(k, v, bits, group)
    dk, dv = qkv.dequantize(cache, bits, group)
    if bits == 8:   # symmetric: steps are the per-token scales
        k_step, v_step = cache["k_scale"].float()[..., None], cache["v_scale"].float()[..., None]
        slack = 0.07    # amax / scale may pass 127 by the fp16 rounding of the scale: clamped
    else:
        k_step = cache["k_scale"].float().repeat_interleave(group, 1)              # per channel, token groups
        v_step = cache["v_scale"].float().repeat_interleave(group, 2)              # per token, channel groups
        slack = 0.02    # fp16 scale times up to 2^bits - 1 codes, fp16 zero point
    assert ((k - dk).abs() <= (0.5 + slack) * k_step + 1e-3).all()
    assert ((v - dv).abs() <= (0.5 + slack) * v_step + 1e-3).all()
    assert relative_error(dk, k) < {8: 0.01, 4: 0.15, 2: 0.6}[bits]


def test_combine_merges_many_chunks():
    """More chunks than the merge kernel reads per step: out = sum 2^m_c acc_c / sum 2^m_c l_c."""
    gen = torch.Generator().manual_seed(2)
    rows, chunks, d = 3, 2 * qkv.COMBINE_CHUNKS + 5, 16
    m = torch.randn((rows, chunks), generator=gen) * 4
    sums = torch.rand((rows, chunks), generator=gen) + 0.5
    acc = torch.randn((rows, chunks, d), generator=gen)
    inputs = {"part_acc": acc.reshape(-1, d).clone(), "part_max": m.flatten().clone(),
              "part_sum": sums.flatten().clone(), "out": torch.full((rows, d), float("nan"))}
    qkv.combine(inputs, rows, d, chunks)
    w = torch.exp2(m - m.amax(1, keepdim=True))
    expect = (acc * w[..., None]).sum(1) / (sums * w).sum(1, keepdim=True)
    assert relative_error(inputs["out"], expect) < 1e-5


@pytest.mark.parametrize("shape", qkv.TEST_SHAPES + qkv.SHAPES[:3], ids=qkv.label)
def test_op_reads_the_cache_tensors_bytes(shape):
    """The op's cached bytes (KVFormat.token_bytes of the context) are the nbytes of the quantized cache tensors."""
    op = qkv.whatif_op(shape, "fp16")
    elements = shape["batch"] * shape["context"] * 2 * shape["kv_heads"] * shape["head_dim"]
    assert op.alu_ops == pytest.approx(4.0 * elements)
    if shape in qkv.TEST_SHAPES:
        inputs = qkv.make_inputs(shape, "fp16", "cpu", torch.Generator().manual_seed(3))
        stored = sum(inputs[name].nbytes for name in CACHE if name in inputs)
        assert op.shape.kv_bytes == pytest.approx(stored)
    per_element = 1 + 2 / shape["head_dim"] if shape["bits"] == 8 else shape["bits"] / 8 + 4 / shape["group"]
    assert op.shape.kv_bytes == pytest.approx(elements * per_element)
