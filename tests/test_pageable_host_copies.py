"""An engine whose own offload copies from pageable host memory (Hugging Face Accelerate): its placed
shares cross the link at the measured pageable rate; techniques that pin their buffers keep the link's."""
from dataclasses import replace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import Precision
from whatif.roofline.context import HostPath
from whatif.specs.op_kinds import OpClass
from whatif.roofline.pass_setup import pass_setup
from whatif.roofline.placement import parse_place
from whatif.roofline.techniques.registry import technique_set
from whatif.roofline.tiers import PAGEABLE_H2D_BYTES_PER_S, pageable_paths
from whatif.scenario import Scenario
from whatif.specs.engines import engine_from_mapping, load_engine
from whatif.specs.profiles import PACKAGE_DIR, read_yaml


def test_engine_specs_say_how_their_offload_holds_host_tensors():
    assert load_engine("hf-transformers").pageable_host_copies
    assert not load_engine("vllm").pageable_host_copies   # absent section: pinned


def test_offload_section_rejects_an_unknown_mode():
    data = read_yaml(PACKAGE_DIR / "engine_profiles" / "versions" / "hf-transformers.yaml")
    data["offload"]["host_memory"] = dict(data["offload"]["host_memory"], value="mapped")
    with pytest.raises(WhatifError, match="host_memory"):
        engine_from_mapping(data, "test")


def test_pageable_paths_cap_host_to_gpu_only():
    fast = HostPath("fast", 50e9, 1e-6, bandwidth_d2h=40e9)
    slow = HostPath("slow", 2e9, 80e-6)
    out = pageable_paths({"fast": fast, "slow": slow}, 0.8)
    assert out["fast"].rate("h2d") == pytest.approx(PAGEABLE_H2D_BYTES_PER_S / 0.8)
    assert out["fast"].rate("d2h") == 40e9
    assert out["slow"] == slow   # already slower than staging: unchanged


def _setup(engine, techniques=(), place=("weights=host:1",)):
    sc = Scenario(model="opt-6.7b", hardware="gcp-t4-flexgen", kernel_engine="hf-transformers",
                  precision=Precision(weight="fp16", activation="fp16", kv="fp16"))
    model, system, par, eff = sc.resolve()
    return pass_setup(model, system, par, sc.precision, eff, 0.9, technique_set(list(techniques)),
                      parse_place(list(place)), engine_spec=engine)


def test_user_placement_under_a_pageable_engine_is_staged():
    hf = load_engine("hf-transformers")
    paged, pinned = _setup(hf), _setup(replace(hf, pageable_host_copies=False))
    tier = next(iter(paged.paths))
    eff = paged.efficiency.params(OpClass.TRANSFER).memory_eff
    assert paged.paths[tier].rate("h2d") * eff == pytest.approx(PAGEABLE_H2D_BYTES_PER_S)
    assert pinned.paths[tier].rate("h2d") > paged.paths[tier].rate("h2d")


def test_a_technique_with_its_own_pinned_buffers_keeps_the_link_rate():
    hf = load_engine("hf-transformers")
    zero = _setup(hf, techniques=["zero_inference"], place=())
    pinned = _setup(replace(hf, pageable_host_copies=False), techniques=["zero_inference"], place=())
    assert zero.paths == pinned.paths
