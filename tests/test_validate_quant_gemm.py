"""The weight-only quantized GEMM family beyond the generic reference check: int4 packing round-trips, the
op charges exactly the packed weights + scales the kernel reads, and the sweep fits the runner's budget."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from whatif.validate.kernels import quant_gemm as qg  # noqa: E402


def test_int4_packing_round_trips_every_code():
    q = torch.arange(-8, 8, dtype=torch.int8).repeat(4).reshape(8, 8)
    packed = qg.pack_int4(q)
    assert packed.shape == (4, 8) and packed.dtype == torch.uint8
    assert torch.equal(qg.unpack_int4(packed), q)
    assert int(packed[0, 0]) == (q[0, 0] + 8) | ((q[1, 0] + 8) << 4)   # row 2i low nibble, 2i+1 high


@pytest.mark.parametrize("bits", (4, 8))
def test_op_bytes_are_packed_weights_scales_and_activations(bits):
    shape = {"m": 3, "n": 48, "k": 256, "bits": bits, "group": 64}
    inputs = qg.make_inputs(shape, "fp16", "cpu", torch.Generator().manual_seed(0))
    touched = sum(t.numel() * t.element_size() for t in inputs.values())
    op = qg.whatif_op(shape, "fp16")
    assert op.hbm_bytes == pytest.approx(touched)
    assert op.dtype == "fp16" and op.alu_ops > 0   # priced at the 16-bit peak, plus the dequant work


def test_shapes_the_kernel_cannot_run_are_refused():
    with pytest.raises(ValueError):
        qg.check_shape({"m": 1, "n": 8, "k": 100, "bits": 4, "group": 64})


def test_sweep_fits_the_runner_budget():
    assert len(qg.SHAPES) * len(qg.DTYPES) <= 48
    kernels = set()
    for s in qg.SHAPES + qg.TEST_SHAPES:
        qg.check_shape(s)
        cfg = qg.block_config(s["m"], s["n"], s["k"], s["group"])
        assert s["group"] % cfg.block_k == 0 and cfg.block_k >= 16
        if s in qg.SHAPES:
            kernels |= {(dtype, s["bits"], cfg) for dtype in qg.DTYPES}
    assert len(kernels) <= 12
