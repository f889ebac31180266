"""The sweep: which (family, dtype, shape) cases a run times, how each is split, and its regime.

Every third shape of a family's sweep (positions 2, 5, 8, ...) is held out of calibration, for all its dtypes
together, so the held-out error is measured on shapes the fit never saw. The regime comes from the op at the
GPU's datasheet ceilings (validate/regime.py, the one definition), so it does not move when the efficiency model
is recalibrated.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from ..roofline.ops import Op
from .kernels import FAMILIES, interpreting, load
from .regime import regime  # noqa: F401 (re-exported: the runner and the tests take it from here)

HELD_OUT_EVERY = 3          # every third shape of a sweep is held out


@dataclass(frozen=True)
class Case:
    family: str
    dtype: str
    shape: dict
    position: int           # the shape's place in its family's sweep

    @property
    def split(self) -> str:
        return "held-out" if self.position % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 else "train"

    @property
    def shape_json(self) -> str:
        return json.dumps(self.shape, sort_keys=True)

    def module(self):
        return load(self.family)

    def op(self) -> Op:
        return self.module().whatif_op(self.shape, self.dtype)

    @property
    def kernel(self) -> str:
        return f"{self.family} {self.dtype} {self.module().label(self.shape)}"


def gpu_has(gpu, dtype: str) -> bool:
    """Whether `gpu` runs `dtype` on its tensor cores (fp8 needs Ada or Hopper and later)."""
    return dtype in gpu.peak


def family_cases(family: str, gpu, test_shapes: bool = False) -> list[Case]:
    mod = load(family)
    out = []
    for dtype in mod.DTYPES:
        if not gpu_has(gpu, dtype) or (test_shapes and dtype == "bf16" and mod.USES_DOT and interpreting()):
            continue   # the interpreter multiplies bf16 tl.dot operands as raw bits (triton-lang/triton#11584)
        shapes = mod.TEST_SHAPES if test_shapes else getattr(mod, "SHAPES_BY_DTYPE", {}).get(dtype, mod.SHAPES)
        out += [Case(family, dtype, shape, i) for i, shape in enumerate(shapes)]
    return out


def sweep(families=FAMILIES, gpu=None, test_shapes: bool = False) -> list[Case]:
    """All cases of `families` that `gpu` can run; `test_shapes`: the small CPU shapes (a dry run).

    Families are interleaved shape by shape, so a run cut short by its time budget loses the last shapes of
    every family rather than whole families."""
    in_family_order = [c for f in families for c in family_cases(f, gpu, test_shapes)]
    return sorted(in_family_order, key=lambda c: c.position)   # stable: families, then dtypes, within a position
