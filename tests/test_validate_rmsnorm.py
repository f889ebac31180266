"""RMSNorm's chunked path (rows wider than MAX_BLOCK, walked twice) on the CPU: the generic test's small rows
never reach it, so force a small block."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from whatif.validate.kernels import rmsnorm  # noqa: E402
from whatif.validate.kernels.common import TOLERANCE, relative_error  # noqa: E402


@pytest.mark.parametrize("hidden", [256, 300])   # a whole number of chunks, and a partial last chunk
def test_chunked_rows_match_reference(hidden):
    shape = {"tokens": 3, "hidden": hidden}
    inputs = rmsnorm.make_inputs(shape, "fp16", "cpu", torch.Generator().manual_seed(7))
    rmsnorm.launch(inputs, shape, max_block=64)
    assert relative_error(inputs["out"], rmsnorm.reference(inputs, shape)) <= TOLERANCE["fp16"]


def test_block_size_caps_at_max_block():
    assert rmsnorm.block_size(100) == 128
    assert rmsnorm.block_size(5120) == 8192
    assert rmsnorm.block_size(16384) == rmsnorm.MAX_BLOCK
