"""The elementwise functions the kernel models are written in, for numpy columns or plain floats.

A model is written once over `xp` (one of the two namespaces below): the fitters pass numpy columns, the
estimate and the simulator pass Python floats, for which numpy's per-call overhead (~1-5 us an op, ~50 us
a model) is most of the cost. Both namespaces compute the same IEEE operations (+ - * /, ceil, floor,
min, max, a choice), so a plain-float evaluation equals the numpy one bit for bit; `evaluate` falls back
to numpy wherever floats would raise or leave a non-finite value (a division by zero, an infinite ceil),
so those edge cases keep numpy's answers too (tests/test_sim_kernel_scalar.py checks equality).
"""
from __future__ import annotations

import math
from functools import reduce

_PLAIN = frozenset((float, int))


class Floats:
    """numpy's functions on plain floats (inputs already `asfloat`)."""

    inf = math.inf

    @staticmethod
    def asfloat(x):
        return float(x)

    @staticmethod
    def ceil(x):
        return float(math.ceil(x))

    @staticmethod
    def floor(x):
        return float(math.floor(x))

    @staticmethod
    def minimum(a, b):
        return b if b < a else a

    @staticmethod
    def maximum(a, b):
        return b if b > a else a

    @staticmethod
    def where(cond, a, b):
        return a if cond else b

    log2 = staticmethod(math.log2)   # (exact at powers of two, as numpy's; models only take its ceil)

    @staticmethod
    def both(a, b):
        return a and b

    @staticmethod
    def either(a, b):
        return a or b

    @staticmethod
    def least(values):
        """The smallest of several values (numpy.minimum over them)."""
        return reduce(Floats.minimum, values)


class _Numpy:
    """numpy itself (columns broadcast), imported at the first use: the estimate's float path never needs it
    (a cold CLI process is ~0.2 s faster without it)."""

    def __getattr__(self, name):
        import numpy as np
        space = {"inf": np.inf, "ceil": np.ceil, "floor": np.floor, "minimum": np.minimum, "maximum": np.maximum,
                 "where": np.where, "log2": np.log2, "both": np.logical_and, "either": np.logical_or,
                 "asfloat": lambda x: np.asarray(x, dtype=float),
                 "least": lambda values: np.minimum.reduce(np.broadcast_arrays(*values))}
        self.__dict__.update(space)
        if name not in space:
            raise AttributeError(name)
        return space[name]


Arrays = _Numpy()


def plain(*values) -> bool:
    """Whether every value is a Python float or int (not a numpy scalar or array, not a bool)."""
    return _PLAIN.issuperset(map(type, values))


def evaluate(model, args: tuple, numbers: tuple):
    """model(xp, *args): with Floats when every one of `numbers` (all the numbers the model reads) is a
    plain float and the result is finite, else with numpy."""
    if plain(*numbers):
        try:
            out = model(Floats, *args)
        except (ArithmeticError, ValueError):   # 1/0, ceil(inf), ceil(nan): numpy's inf/nan answers instead
            out = None
        if out is not None and math.isfinite(sum(out)):   # any inf or nan (or an overflowing sum): numpy's
            return out
    return model(Arrays, *args)
