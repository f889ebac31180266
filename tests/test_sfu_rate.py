"""The special-function units' exp2 rate as a hardware property (specs/sfu.py): 16 results an SM a clock by
architecture, 32 on Blackwell Ultra (B300, GB300), carried by Ceilings into the attention models."""
from dataclasses import replace
from pathlib import Path

import pytest

from whatif.errors import WhatifError
from whatif.roofline.kernel_models.params import ceilings
from whatif.roofline.kernel_models.prefill_attention import exp_seconds, prefill_attention_time, prefill_parts
from whatif.roofline.kernel_timing import fitted
from whatif.specs import hardware
from whatif.specs.sfu import ARCH_EXP2_PER_SM_CLOCK, DEFAULT_EXP2_PER_SM_CLOCK

BLACKWELL_ULTRA = ("b300", "gb300")
CALIBRATION_GPUS = ("a100-sxm-80gb", "h100-sxm", "b200", "l40s")   # the fitted tables' GPUs


def test_every_gpu_has_a_sourced_exp2_rate_by_architecture():
    """Every shipped GPU profile gets a rate; only Blackwell Ultra's differs from the CUDA guide's 16."""
    for name in hardware.list_components("gpu"):
        gpu = hardware.load_component(name, "gpu")
        q = gpu.sfu_exp2 or ARCH_EXP2_PER_SM_CLOCK[gpu.arch]
        assert q.unit == "1/clk/SM" and q.source and q.provenance in ("datasheet", "assumed")
        assert gpu.exp2_per_sm_clock == (32.0 if name in BLACKWELL_ULTRA else 16.0), name
    assert set(ARCH_EXP2_PER_SM_CLOCK) == set(hardware.ARCHS)


def test_blackwell_ultra_doubles_b200s_rate_and_the_calibration_gpus_keep_todays_constant():
    for name in BLACKWELL_ULTRA:
        gpu = hardware.load_component(name, "gpu")
        assert gpu.sfu_exp2.provenance == "datasheet" and "Blackwell Ultra" in gpu.sfu_exp2.source
        assert ceilings(gpu).exp2_per_clock == 2 * ceilings(hardware.load_component("b200", "gpu")).exp2_per_clock
    for name in CALIBRATION_GPUS:   # the fits were made at 16: their prices must not move
        assert ceilings(hardware.load_component(name, "gpu")).exp2_per_clock == DEFAULT_EXP2_PER_SM_CLOCK == 16.0


def test_exp_seconds_follow_the_rate():
    assert exp_seconds(2e9) == pytest.approx(128 * 128 / (16 * 2e9))
    assert exp_seconds(2e9, per_clock=32.0) == pytest.approx(exp_seconds(2e9) / 2)
    assert exp_seconds(0.0, per_clock=32.0) == 0.0


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_b300_prefill_attention_gains_only_the_exp_bound_share(engine):
    """The doubled SFU rate speeds a prefill only where its tile pairs were exp-bound: 64-dim heads (gpt-oss),
    never below the MMA-only price; 128-dim GQA and MLA's 160-dim form (MMA-bound) and the memory term do not move."""
    b300 = hardware.load_component("b300", "gpu")
    ultra = ceilings(b300)
    as_b200 = replace(ultra, exp2_per_clock=16.0)   # the same chip at B200's SFU rate (today's constant)
    mma_only = replace(ultra, clock=0.0)             # no exponential floor at all
    p = fitted("prefill_attention", b300, "bf16", engine)
    for seq in (1024, 8192, 32768):
        t_ultra, t_b200, t_mma = (prefill_attention_time(1, seq, 16, 2, 64, "bf16", "bf16", c, p)
                                  for c in (ultra, as_b200, mma_only))
        assert t_mma <= t_ultra <= t_b200
        for d, model in ((128, "prefill_attention"), (160, "mla_prefill")):
            q = fitted(model, b300, "bf16", engine)
            heads, kv = (16, 2) if d == 128 else (16, 16)
            assert prefill_attention_time(1, seq, heads, kv, d, "bf16", "bf16", ultra, q) == \
                prefill_attention_time(1, seq, heads, kv, d, "bf16", "bf16", as_b200, q)
        _, m_ultra, f_ultra = prefill_parts(1, seq, 16, 2, 64, 2.0, 0, ultra.peak_flops("bf16"), ultra, p)
        _, m_b200, f_b200 = prefill_parts(1, seq, 16, 2, 64, 2.0, 0, ultra.peak_flops("bf16"), as_b200, p)
        assert (m_ultra, f_ultra) == (m_b200, f_b200)
    t_long = [prefill_attention_time(1, 32768, 16, 2, 64, "bf16", "bf16", c, p) for c in (ultra, as_b200)]
    assert t_long[0] < 0.95 * t_long[1]   # long 64-dim prefills were exp-bound: they gain


def test_a_profiles_rate_is_checked_in_one_line(tmp_path):
    text = (Path(hardware.HARDWARE_DIR) / "b300.yaml").read_text()
    bad = text.replace("sfu_exp2: {value: 32, unit: results/clk/SM", "sfu_exp2: {value: 32, unit: count")
    (tmp_path / "bad.yaml").write_text(bad)
    with pytest.raises(WhatifError, match=r"sfu_exp2\.unit.*results/clk/SM"):
        hardware.load_component(str(tmp_path / "bad.yaml"), "gpu")
    (tmp_path / "zero.yaml").write_text(text.replace("sfu_exp2: {value: 32,", "sfu_exp2: {value: 0,"))
    with pytest.raises(WhatifError, match=r"sfu_exp2\.value.*1 to 1,024"):
        hardware.load_component(str(tmp_path / "zero.yaml"), "gpu")


@pytest.mark.parametrize("model", ["gpt-oss-20b", "llama-3-70b"])
def test_the_simulators_attention_price_is_kernel_timings_on_blackwell_ultra(model):
    """The simulator's lean pricer (PrefillTiles) carries B300's rate to the bit, 64-dim heads (exp-bound) too."""
    from tests.test_sim_attention_price import test_lean_attention_seconds_equal_kernel_timing_bit_for_bit as same
    from whatif.roofline.config import Parallelism
    from whatif.scenario import Scenario
    same(Scenario(model=model, hardware="b300", parallel=Parallelism(tp=2 if "70b" in model else 1)))
