"""The attention kernel models on plain floats equal their numpy evaluation bit for bit
(kernel_models/elementwise.py: the simulator and the estimate take the float path, the fitters numpy)."""
import random

import numpy as np
import pytest

from whatif.roofline.kernel_models import decode_attention as dec
from whatif.roofline.kernel_models import prefill_attention as pre
from whatif.roofline.kernel_models.elementwise import Arrays, Floats, evaluate
from whatif.roofline.kernel_models.params import Ceilings, DecodeParams, PrefillParams


def shapes(seed: int, n: int = 3000):
    rng = random.Random(seed)
    for _ in range(n):
        kv_heads = rng.choice([1, 2, 4, 8, 16])
        yield (float(rng.choice([1, 2, 3, 7, 64, 300])) if rng.random() < 0.5 else rng.uniform(0.5, 500.0),
               rng.choice([1.0, 17.0, 128.0, 4096.0]) if rng.random() < 0.3 else rng.uniform(0.5, 40000.0),
               float(kv_heads * rng.choice([1, 2, 4, 8, 16])), float(kv_heads), float(rng.choice([64, 96, 128, 256])),
               rng.choice([0.5, 1.0, 2.0]), rng.choice([0, 0, 0, 512, 4096]),
               rng.choice([989e12, 1979e12, 312e12]), rng.choice([132.0, 108, 148]), rng.choice([3.35e12, 2.0e12]))


def same(a, b) -> bool:
    return all(float(x) == float(y) for x, y in zip(a, b))


def test_prefill_parts_floats_equal_numpy():
    p = PrefillParams(compute_eff=0.63, mem_eff=0.71, tile_s=3.1e-8, cta_s=1.7e-6, token_s=2.3e-8, kv_splits=2.7)
    checked = 0
    for b, seq, h, kvh, d, kvb, win, peak, sms, bw in shapes(1):
        c = Ceilings("g", "a", {}, bw, sms, 0.0)
        args = (b, seq, h, kvh, d, kvb, win, peak, c, p)
        fast = pre.prefill_parts(*args)
        assert all(type(x) is float for x in fast)   # the float path was taken
        assert same(fast, pre._prefill_parts(Arrays, *args))
        checked += 1
    assert checked == 3000


def test_decode_parts_floats_equal_numpy():
    p = DecodeParams(mem_eff=0.83, compute_eff=0.41, kv_splits=11.5, seq_s=1.3e-7, floor_s=6e-6)
    for b, ctx, h, kvh, d, kvb, win, peak, sms, bw in shapes(2):
        c = Ceilings("g", "a", {}, bw, sms, 0.0)
        args = (b, ctx, h, kvh, d, kvb, win, peak, c, p)
        fast = dec.decode_parts(*args)
        assert all(type(x) is float for x in fast)
        assert same(fast, dec._decode_parts(Arrays, *args))


def test_columns_equal_each_row():
    """The fitters' columns: one numpy call over all shapes gives each row's float result."""
    p = PrefillParams()
    rows = list(shapes(3, 500))
    cols = [np.array([r[i] for r in rows]) for i in range(10)]
    c = Ceilings("g", "a", {}, cols[9], cols[8], 0.0)
    t_c, t_m, fixed = pre.prefill_parts(*cols[:8], c, p)
    for i, r in enumerate(rows):
        one = pre.prefill_parts(*r[:8], Ceilings("g", "a", {}, r[9], r[8], 0.0), p)
        assert (one[0], one[1], one[2]) == (t_c[i], t_m[i], fixed[i])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_edge_cases_fall_back_to_numpy():
    """A zero-length prefill or an infinite context: the float path would raise, numpy's answer is kept."""
    c = Ceilings("g", "a", {}, 3.35e12, 132.0, 0.0)
    zero = pre.prefill_parts(2.0, 0.0, 32.0, 8.0, 128.0, 2.0, 0, 989e12, c, PrefillParams())
    assert not all(type(x) is float for x in zero)
    assert same(zero, pre._prefill_parts(Arrays, 2.0, 0.0, 32.0, 8.0, 128.0, 2.0, 0, 989e12, c, PrefillParams()))
    inf = dec.decode_parts(1.0, float("inf"), 32.0, 8.0, 128.0, 2.0, 0, 989e12, c, DecodeParams())
    assert np.isinf(inf[1])
    assert evaluate(lambda xp, x: (xp.ceil(x),), (2.5,), (2.5,)) == (3.0,)
    assert Floats.where(True, 1.0, 2.0) == 1.0
