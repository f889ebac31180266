"""Every validate/ kernel against its torch reference on small shapes, on the CPU (TRITON_INTERPRET=1, set in
conftest.py): outputs are poisoned with NaN first, so an element the kernel does not write fails."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from whatif.roofline.ops import Op  # noqa: E402
from whatif.validate.kernels import FAMILIES, load  # noqa: E402
from whatif.validate.kernels.common import TOLERANCE, interpreting, relative_error  # noqa: E402


def _cases():
    for family in FAMILIES:
        try:
            mod = load(family)
        except ImportError:   # a family not written yet fails its own test below, not collection
            yield pytest.param(family, None, None, id=f"{family}-missing")
            continue
        for dtype in mod.DTYPES:
            for i, shape in enumerate(mod.TEST_SHAPES):
                yield pytest.param(family, shape, dtype, id=f"{family}-{dtype}-{i}")


@pytest.mark.parametrize("family,shape,dtype", list(_cases()))
def test_kernel_matches_reference(family, shape, dtype):
    mod = load(family)
    if dtype == "bf16" and mod.USES_DOT and interpreting():
        pytest.skip("Triton's interpreter multiplies bf16 tl.dot operands as raw bits (triton-lang/triton#11584); "
                    "bf16 is checked on the GPU by the runner")
    gen = torch.Generator().manual_seed(1234)
    inputs = mod.make_inputs(shape, dtype, "cpu", gen)
    assert torch.isnan(inputs["out"].float()).all(), "the output must start poisoned"
    mod.launch(inputs, shape)
    err = relative_error(inputs["out"], mod.reference(inputs, shape))
    assert err <= TOLERANCE[dtype], f"{family} {mod.label(shape)} {dtype}: relative error {err:.3g}"


@pytest.mark.parametrize("family", FAMILIES)
def test_family_interface(family):
    mod = load(family)
    assert mod.FAMILY == family
    assert set(mod.DTYPES) <= set(TOLERANCE)
    assert mod.TEST_SHAPES and mod.SHAPES
    for shape in mod.SHAPES[:3]:
        for dtype in mod.DTYPES:
            op = mod.whatif_op(shape, dtype)
            assert isinstance(op, Op) and op.hbm_bytes > 0
        assert mod.label(shape)


def test_a_broken_kernel_fails_the_check():
    """The check can fail: a launch that skips the last elements leaves NaN, and a wrong value shows."""
    mod = load("copy")
    gen = torch.Generator().manual_seed(1)
    shape = {"elements": 3 * mod.BLOCK + 17}
    inputs = mod.make_inputs(shape, "fp32", "cpu", gen)
    mod._copy_kernel[(3,)](inputs["x"], inputs["out"], shape["elements"], BLOCK=mod.BLOCK)   # one block short
    assert relative_error(inputs["out"], mod.reference(inputs, shape)) == float("inf")
    inputs["out"] = inputs["x"] * 1.01
    assert relative_error(inputs["out"], mod.reference(inputs, shape)) > TOLERANCE["fp32"]
