"""validate/ attention kernels beyond the generic reference check: the paged cache gives the contiguous cache's
output on the same K/V, the split plan covers the context in whole tiles, and whatif_op is exactly the op
`whatif kernel attention` prices."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from whatif.specs.hardware import load_system  # noqa: E402
from whatif.roofline.efficiency import IDEAL  # noqa: E402
from whatif.roofline.kernels import attention_kernel  # noqa: E402
from whatif.validate.kernels import decode_attention, flash_prefill  # noqa: E402
from whatif.validate.kernels.common import TOLERANCE, relative_error  # noqa: E402


def _decode_shape(heads, kv_heads, context, layout="paged", page=16, batch=2, head_dim=16):
    return {"batch": batch, "heads": heads, "kv_heads": kv_heads, "context": context, "head_dim": head_dim,
            "layout": layout, "page": page}


@pytest.mark.parametrize("heads,kv_heads", [(2, 2), (4, 1)])
def test_paged_and_contiguous_caches_give_the_same_output(heads, kv_heads):
    """Context 100: not a multiple of the 16-token page nor of the 64-token chunk; the pages are scattered."""
    paged = _decode_shape(heads, kv_heads, 100)
    inputs = decode_attention.make_inputs(paged, "fp16", "cpu", torch.Generator().manual_seed(7))
    assert not torch.equal(inputs["block_table"].flatten().sort().values, inputs["block_table"].flatten())
    decode_attention.launch(inputs, paged)

    contiguous = {**paged, "layout": "contiguous"}
    k, v = decode_attention.contiguous_kv(inputs, paged)
    same = decode_attention.make_inputs(contiguous, "fp16", "cpu", torch.Generator().manual_seed(8))
    same.update(q=inputs["q"], k=k.contiguous(), v=v.contiguous())
    decode_attention.launch(same, contiguous)

    assert torch.equal(inputs["out"], same["out"])
    assert relative_error(same["out"], decode_attention.reference(same, contiguous)) <= TOLERANCE["fp16"]


@pytest.mark.parametrize("batch,kv_heads,context", [(1, 8, 1), (1, 8, 512), (1, 8, 32768), (8, 8, 32768),
                                                    (16, 8, 2049), (256, 8, 1024), (3, 2, 300)])
def test_split_plan_covers_the_context_in_whole_tiles(batch, kv_heads, context):
    shape = _decode_shape(8 * kv_heads, kv_heads, context, batch=batch, head_dim=128)
    chunk, splits = decode_attention.split_plan(shape)
    tile = decode_attention.block_n(128)
    assert chunk % tile == 0
    assert (splits - 1) * chunk < context <= splits * chunk   # every split holds tokens
    # the SMs are filled, or the context is too short to cut further
    assert batch * kv_heads * splits >= decode_attention.SMS or chunk <= 2 * decode_attention.MIN_CHUNK_TILES * tile


def test_prefill_reference_in_query_chunks_is_causal_attention(monkeypatch):
    shape = {"batch": 2, "heads": 4, "kv_heads": 2, "seq": 50, "head_dim": 16}
    inputs = flash_prefill.make_inputs(shape, "fp32", "cpu", torch.Generator().manual_seed(3))
    monkeypatch.setattr(flash_prefill, "REF_SCORES", 4 * 50 * 7)   # 7 query rows at a time
    k, v = (inputs[n].repeat_interleave(2, dim=1) for n in ("k", "v"))
    sdpa = torch.nn.functional.scaled_dot_product_attention(inputs["q"], k, v, is_causal=True)
    assert relative_error(flash_prefill.reference(inputs, shape), sdpa) < 1e-5


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
def test_whatif_ops_are_what_whatif_kernel_attention_prices(dtype):
    h100 = load_system("h100-sxm")
    prefill = flash_prefill.SHAPES[-1]
    priced = attention_kernel(h100, IDEAL, "prefill", prefill["batch"], prefill["heads"], prefill["kv_heads"],
                              prefill["head_dim"], prefill["seq"], dtype)
    assert flash_prefill.whatif_op(prefill, dtype) == priced.op
    for shape in decode_attention.SHAPES[-2:]:   # one shape in both layouts
        priced = attention_kernel(h100, IDEAL, "decode", shape["batch"], shape["heads"], shape["kv_heads"],
                                  shape["head_dim"], shape["context"], dtype)
        assert decode_attention.whatif_op(shape, dtype) == priced.op
