"""Which rows of a prompt pass's logits the memory plan holds (specs/engines.py PREFILL_LOGITS): a serving engine's
profile run (max_num_seqs rows), every position (transformers' CausalLM forward before num_logits_to_keep, 4.45, and
TidalDecode's copy of it), or the last position (DuoAttention's patched forward); and in which dtype (the families
whose forward runs logits.float())."""
from dataclasses import replace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import Precision
from whatif.roofline.memory import activation_bytes, plan_memory, prefill_logit_bytes, prefill_logit_rows
from whatif.roofline.pass_setup import pass_setup
from whatif.scenario import Scenario
from whatif.specs.engines import VERSION_DIR, engine_from_mapping, engine_mapping, load_engine
from whatif.specs.profiles import profile_index

FP16 = Precision(weight="fp16", activation="fp16", kv="fp16")


def _setup(engine, model="llama-2-7b"):
    sc = Scenario(model=model, hardware="a100-sxm-80gb", kernel_engine="hf-transformers", precision=FP16)
    m, system, par, eff = sc.resolve()
    return pass_setup(m, system, par, FP16, eff, 0.95, engine_spec=engine), m, par


def test_each_profile_says_which_logits_its_prompt_pass_holds():
    assert load_engine("vllm").prefill_logits == "profile_run"
    assert load_engine("hf-transformers").prefill_logits == "every_position"
    assert load_engine("hf-transformers-4.35").prefill_logits == "every_position"
    assert load_engine("tidaldecode-bench").prefill_logits == "every_position"
    assert load_engine("duoattention-bench").prefill_logits == "last_position"


def test_rows_follow_the_rule():
    hf, duo, vllm = load_engine("hf-transformers"), load_engine("duoattention-bench"), load_engine("vllm")
    assert prefill_logit_rows(hf, 4, 32000, 32000) == 32000
    assert prefill_logit_rows(duo, 4, 32000, 32000) == 4
    assert prefill_logit_rows(vllm, 4, 2048, 8192) == min(vllm.max_num_seqs, 8192)


def test_llama_logits_upcast_opt_and_mpt_stay_16_bit():
    hf = load_engine("hf-transformers-4.35")
    llama, _, _ = _setup(hf)
    opt, _, _ = _setup(hf, "opt-6.7b")
    assert prefill_logit_bytes(hf, llama.model, FP16) == 6.0      # fp16 output and its fp32 copy
    assert prefill_logit_bytes(hf, opt.model, FP16) == 2.0
    assert prefill_logit_bytes(load_engine("duoattention-bench"), llama.model, FP16) == 2.0
    assert prefill_logit_bytes(load_engine("vllm"), llama.model, FP16) == 4.0


def test_a_last_position_harness_holds_one_row_a_sequence():
    """A non-growing harness: DuoAttention's 32000-token chunk holds one row, not 32000 (16.4 GB for Llama-3)."""
    duo = load_engine("duoattention-bench")
    every = replace(duo, prefill_logits="every_position")
    last_setup, model, par = _setup(duo)
    every_setup, _, _ = _setup(every)
    last = plan_memory(last_setup, 1, 40000, 32000)
    full = plan_memory(every_setup, 1, 40000, 32000)
    assert full.activation_bytes - last.activation_bytes == pytest.approx((32000 - 1) * model.vocab_size * 2.0)
    assert last.activation_bytes == pytest.approx(activation_bytes(model, 32000, 1, par, FP16, 2.0))


def test_a_bad_value_names_the_field(tmp_path):
    data = engine_mapping(profile_index(VERSION_DIR)["duoattention-bench"])
    data["cache"] = {**data["cache"], "prefill_logits": {"value": "all", "unit": "mode", "provenance": "assumed",
                                                         "source": "test"}}
    with pytest.raises(WhatifError, match="cache.prefill_logits"):
        engine_from_mapping(data, "bad.yaml")
