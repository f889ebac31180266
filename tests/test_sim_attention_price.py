"""The simulator's lean attention pricing (roofline/step_price/attention.py) is kernel_timing's to the bit:
the same seconds as kernel_timing.op_seconds on the Op roofline.attention builds, for decode batches,
prefill chunks over a cache and mixed batches, bf16 and fp8 caches and activations."""
from __future__ import annotations

import random

import pytest

from whatif.roofline import kernel_timing
from whatif.roofline.attention import attention_op
from whatif.roofline.config import Parallelism, Precision
from whatif.roofline.pass_setup import pass_setup
from whatif.scenario import Scenario
from whatif.roofline.step_price.attention import KernelAttention, probes
from whatif.roofline.step_price.parts import PassParts


def batches(seed: int, n: int) -> list[tuple]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        groups = [(1, rng.randint(1, 20000), rng.randint(1, 256))] if rng.random() < 0.7 else []
        groups += [(rng.randint(1, 8192), rng.choice([0, rng.randint(1, 30000)]), 1) for _ in range(rng.randint(0, 4))]
        out.append(tuple(groups) or ((rng.randint(1, 16), rng.randint(0, 9000), rng.randint(1, 64)),))
    return out


SCENARIOS = [Scenario(), Scenario(model="llama-3-70b", hardware="dgx-h100", parallel=Parallelism(tp=4)),
             Scenario(precision=Precision(weight="fp8", activation="fp8", kv="fp8")),
             Scenario(precision=Precision(weight="fp8", activation="fp8")),
             Scenario(hardware="dgx-a100-80gb"), Scenario(hardware="dgx-b200"),
             Scenario(hardware="dgx-b200", precision=Precision(weight="fp8", activation="fp8", kv="fp8"))]


def label(s: Scenario) -> str:
    return f"{s.model}-{s.hardware}-{s.precision.activation}-{s.precision.kv}"


@pytest.mark.parametrize("sc", SCENARIOS, ids=label)
def test_lean_attention_seconds_equal_kernel_timing_bit_for_bit(sc):
    model, system, par, eff = sc.resolve()
    setup = pass_setup(model, system, par, sc.precision, eff, sc.utilization(), sc.technique_set(), sc.placement(),
                       engine_spec=sc.engine_spec())
    parts = PassParts(setup)
    parts.time_s(((64, 0, 1),), 0, True)
    old = next(iter(parts.bodies.values()))[0].attention[0]
    prec, sh, gpu = setup.precision, old.shape, setup.system.gpu
    kv_dtype = kernel_timing.kv_fit_dtype(probes(old, prec.act_bytes, prec.kv_bytes, parts.kv_width)[0])
    fits = kernel_timing.attention_fits(gpu, eff.engine, kv_dtype, sh.heads, sh.kv_heads)
    pricer = KernelAttention.of(old, gpu, fits, prec.act_bytes, prec.kv_bytes, parts.kv_width, eff.engine)
    assert pricer is not None
    prefills = 0
    for groups in batches(7, 400):
        op = attention_op(groups, heads=int(sh.heads), kv_heads=int(sh.kv_heads), d_qk=int(sh.d_qk), d_v=int(sh.d_v),
                          act_bytes=prec.act_bytes, kv_bytes=prec.kv_bytes, kv_width=parts.kv_width, count=1,
                          dtype=old.dtype, role=old.role)
        assert kernel_timing.covers(op, gpu)
        expected = kernel_timing.op_seconds(op, gpu, eff.engine)[0]
        assert pricer.seconds(groups) == expected, groups
        prefills += op.op_class.name == "ATTENTION_PREFILL"
    assert 100 < prefills < 400   # both kernels exercised


def test_prefill_tiles_are_the_models_terms_on_plain_floats():
    """PrefillTiles (the prefill model with its per-op factors resolved once) is _prefill_parts(Floats, ...)
    to the bit, over GQA and MHA shapes, bf16 and fp8 caches, and a head wide enough to split (d_split)."""
    from whatif.roofline.kernel_models.elementwise import Floats
    from whatif.roofline.kernel_models.prefill_attention import _prefill_parts
    from whatif.roofline.step_price.attention import PrefillTiles
    rng = random.Random(3)
    sc = Scenario()
    gpu = sc.resolve()[1].gpu
    fits = kernel_timing.attention_fits(gpu, sc.resolve()[3].engine, "bf16", 32, 8)
    small = kernel_timing.parts_ceilings(fits[0].hbm_bw, fits[0].sms)
    for heads, kv_heads, d, kv_bytes in ((32, 8, 128, 2.0), (64, 8, 128, 1.0), (16, 16, 64, 2.0), (28, 4, 128, 2.0),
                                        (32, 4, 512, 2.0)):   # (512: two output passes a query tile)
        peak = fits[0].peak_flops("bf16")
        tiles = PrefillTiles(heads, kv_heads, d, kv_bytes, peak, small, fits[1])
        for _ in range(500):
            b, length = rng.randint(1, 300), rng.uniform(0.5, 40000.0)
            assert tiles.parts(b, length) == _prefill_parts(Floats, b, length, heads, kv_heads, d, kv_bytes, 0, peak,
                                                            small, fits[1])


def test_decode_tiles_are_kernel_timings_decode_terms():
    """DecodeTiles (the decode model with its per-op factors resolved once) is kernel_timing.decode_terms to
    the bit, over GQA and MHA shapes, bf16 and fp8 caches, both peaks, integer and float contexts."""
    from whatif.roofline.step_price.attention import DecodeTiles
    rng = random.Random(5)
    sc = Scenario()
    gpu = sc.resolve()[1].gpu
    c, _, p = kernel_timing.attention_fits(gpu, sc.resolve()[3].engine, "bf16", 32, 8)
    for heads, kv_heads, d, kv_bytes in ((32, 8, 128, 2.0), (64, 8, 128, 1.0), (16, 16, 64, 2.0), (28, 4, 128, 2.0),
                                        (32, 4, 512, 2.0)):   # (Gemma 4's global heads)
        tiles = DecodeTiles(heads, kv_heads, d, kv_bytes, c.hbm_bw, c.sms, p)
        for _ in range(500):
            b = rng.randint(1, 600)
            ctx = rng.choice([rng.randint(1, 130000), rng.uniform(1.0, 9000.0), 1.0])
            peak = rng.choice([c.peak_flops("bf16"), c.peak_flops("fp8")])
            assert tiles.parts(b, ctx, peak) == kernel_timing.decode_terms(b, ctx, heads, kv_heads, d, kv_bytes, peak,
                                                                             c.hbm_bw, c.sms, p)
