"""An engine that keeps the previous step's cache alive while a decode step builds the next (Hugging Face
generate before transformers 4.42): the peak holds the cache twice, which both the memory total and the
largest batch see."""
from dataclasses import replace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import Precision
from whatif.roofline.memory import plan_memory
from whatif.roofline.pass_setup import pass_setup
from whatif.scenario import Scenario
from whatif.specs.engines import engine_from_mapping, load_engine
from whatif.specs.profiles import PACKAGE_DIR, read_yaml

FP16 = Precision(weight="fp16", activation="fp16", kv="fp16")


def _plan(engine, batch=32, tokens=2048):
    sc = Scenario(model="llama-2-7b", hardware="a100-sxm-80gb", kernel_engine="hf-transformers", precision=FP16)
    model, system, par, eff = sc.resolve()
    return plan_memory(pass_setup(model, system, par, FP16, eff, 0.95, engine_spec=engine), batch, tokens, 512)


def test_only_the_hf_profile_holds_the_previous_cache():
    assert load_engine("hf-transformers").holds_previous_cache
    assert not load_engine("vllm").holds_previous_cache


def test_the_peak_counts_the_cache_twice():
    hf = load_engine("hf-transformers")
    held, single = _plan(hf), _plan(replace(hf, holds_previous_cache=False))
    assert held.kv_cache_bytes == pytest.approx(single.kv_cache_bytes)   # the cache itself is unchanged
    assert held.kv_copy_bytes == pytest.approx(held.kv_cache_bytes)
    assert held.total_bytes - single.total_bytes == pytest.approx(held.kv_cache_bytes)
    assert held.hbm_bytes - single.hbm_bytes == pytest.approx(held.kv_cache_bytes)


def test_the_largest_batch_halves_what_the_cache_may_take():
    hf = load_engine("hf-transformers")
    held, single = _plan(hf), _plan(replace(hf, holds_previous_cache=False))
    assert held.free_for_kv == pytest.approx(single.free_for_kv / 2)
    assert held.max_sequences(2048) in (single.max_sequences(2048) // 2, single.max_sequences(2048) // 2 - 1)


def test_cache_section_wants_a_boolean():
    data = read_yaml(PACKAGE_DIR / "engine_profiles" / "versions" / "hf-transformers.yaml")
    data["cache"]["previous_step_held"] = dict(data["cache"]["previous_step_held"], value="twice")
    with pytest.raises(WhatifError, match="previous_step_held"):
        engine_from_mapping(data, "test")
