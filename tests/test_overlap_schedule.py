"""The scenario's overlap_schedule: an engine's host work beside the GPU's step (its spec's cpu.overlapped) or after
it, as SGLang's --disable-overlap-schedule (or its V1 speculative workers) runs it."""
from __future__ import annotations

import pytest

from whatif.errors import WhatifError
from whatif.scenario import Scenario, build_scenario


def sglang(**kw) -> Scenario:
    return Scenario(model="llama-3.1-8b", hardware="h100-sxm", kernel_engine="sglang", **kw)


def test_the_default_is_the_spec_s_own_loop():
    assert sglang().engine_spec().cpu.overlapped is True
    assert sglang(overlap_schedule=True).engine_spec() == sglang().engine_spec()


def test_off_adds_the_host_s_step_after_the_gpu_s():
    on, off = sglang().engine_spec(), sglang(overlap_schedule=False).engine_spec()
    assert off.cpu.overlapped is False
    assert off.cpu.per_step_s == on.cpu.per_step_s
    gpu_s = 0.010
    assert on.step_seconds(gpu_s, 64) == pytest.approx(gpu_s)
    assert off.step_seconds(gpu_s, 64) == pytest.approx(gpu_s + on.cpu.seconds(64))


def test_a_bad_value_names_the_field():
    with pytest.raises(WhatifError, match="overlap_schedule: 'no' must be true or false"):
        build_scenario({"overlap_schedule": "no"}, {})


def test_the_cli_flag_turns_the_overlap_loop_off():
    from whatif.cli import build_parser
    from whatif.cli.scenario_flags import scenario_from_args
    base = ["estimate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--engine", "sglang"]
    on = scenario_from_args(build_parser().parse_args(base)).engine_spec()
    off = scenario_from_args(build_parser().parse_args(base + ["--disable-overlap-schedule"])).engine_spec()
    assert on.cpu.overlapped is True and off.cpu.overlapped is False
