"""The dense GEMM family beyond the generic reference check: its op counts the bytes the kernel moves, and its
sweep stays inside the runner's budget."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from whatif.validate.kernels import gemm  # noqa: E402


def _sweep(dtype):
    return gemm.SHAPES_BY_DTYPE.get(dtype, gemm.SHAPES)


@pytest.mark.parametrize("dtype", gemm.DTYPES)
def test_op_bytes_are_the_tensors_the_kernel_reads_and_writes(dtype):
    shape = gemm.TEST_SHAPES[2]
    inputs = gemm.make_inputs(shape, dtype, "cpu", torch.Generator().manual_seed(0))
    touched = sum(t.numel() * t.element_size() for t in inputs.values())
    op = gemm.whatif_op(shape, dtype)
    assert op.hbm_bytes == touched
    assert op.flops == 2 * shape["m"] * shape["n"] * shape["k"]


def test_sweep_fits_the_runner_budget():
    runs = [(dtype, s) for dtype in gemm.DTYPES for s in _sweep(dtype)]
    assert len(runs) <= 48
    kernels = {(dtype, gemm.block_config(s["m"], s["n"], s["k"], 1 if dtype == "fp8" else 2)) for dtype, s in runs}
    assert len(kernels) <= 12
    assert all(s in gemm.SHAPES for s in gemm.SHAPES_BY_DTYPE["fp8"])


def test_block_config_is_tensor_core_sized():
    for s in gemm.SHAPES + gemm.TEST_SHAPES:
        for elem_bytes in (1, 2):
            cfg = gemm.block_config(s["m"], s["n"], s["k"], elem_bytes)
            assert min(cfg.block_m, cfg.block_n, cfg.block_k) >= 16
