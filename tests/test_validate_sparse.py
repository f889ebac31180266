"""sparse_attention beyond the generic check: selecting every token or page is dense attention over the cache,
the selection is sorted and distinct, and the op reads the selected K/V plus the indices."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from whatif.validate.kernels import sparse_attention as sp  # noqa: E402
from whatif.validate.kernels.common import TOLERANCE, relative_error  # noqa: E402
from whatif.validate.kernels.quant_kv_attention import attention  # noqa: E402


@pytest.mark.parametrize("unit,page", [("token", 16), ("page", 8)])
def test_selecting_everything_is_dense_attention(unit, page):
    shape = sp._shape(2, 96, 96, unit, 4, 2, 16, page=page)
    inputs = sp.make_inputs(shape, "fp16", "cpu", torch.Generator().manual_seed(0))
    assert torch.equal(sp.token_positions(inputs["idx"], sp.page_size(shape))[0, 0], torch.arange(96))
    sp.launch(inputs, shape)
    dense = torch.stack([attention(inputs["q"][b], inputs["k"][b], inputs["v"][b]) for b in range(2)])
    assert relative_error(inputs["out"], dense) <= TOLERANCE["fp16"]


@pytest.mark.parametrize("shape", sp.TEST_SHAPES, ids=sp.label)
def test_selection_is_sorted_distinct_and_in_range(shape):
    idx = sp.make_inputs(shape, "fp16", "cpu", torch.Generator().manual_seed(1))["idx"]
    assert idx.dtype == torch.int32 and idx.shape[-1] == sp.units(shape)
    assert (idx.diff(dim=-1) > 0).all() and idx.min() >= 0
    assert idx.max() < shape["context"] // sp.page_size(shape)


@pytest.mark.parametrize("shape", sp.TEST_SHAPES + sp.SHAPES[:4], ids=sp.label)
def test_op_reads_selected_kv_and_indices(shape):
    """Q in and O out, the K and V of selected + 1 tokens (whatif counts the new token), and the int32 indices."""
    op = sp.whatif_op(shape, "bf16")
    b, h, kvh, d = shape["batch"], shape["heads"], shape["kv_heads"], shape["head_dim"]
    index = b * kvh * sp.units(shape) * 4
    assert op.shape.kv_bytes == b * shape["selected"] * 2 * kvh * d * 2
    assert op.hbm_bytes == b * h * 2 * d * 2 + b * (shape["selected"] + 1) * 2 * kvh * d * 2 + index
    if shape in sp.TEST_SHAPES:
        assert index == sp.make_inputs(shape, "bf16", "cpu", torch.Generator().manual_seed(2))["idx"].nbytes
