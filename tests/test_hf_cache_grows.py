"""An engine that grows its KV cache as it goes (Hugging Face generate: no pool reserved up front): the prompt
pass's activations and the final cache never coexist, so the memory peak is the larger of the prompt pass's and the
last decode step's (memory.grown_cache_peak_extra); engines with a KV pool keep their profile-run activations."""
from dataclasses import replace

import pytest

from whatif.roofline.config import Precision
from whatif.roofline.memory import activation_bytes, plan_memory
from whatif.roofline.pass_setup import pass_setup
from whatif.scenario import Scenario
from whatif.specs.engines import load_engine

FP16 = Precision(weight="fp16", activation="fp16", kv="fp16")


def _plan(engine, batch, prompt, output, prompt_known=True):
    sc = Scenario(model="llama-2-7b", hardware="a100-sxm-80gb", kernel_engine="hf-transformers", precision=FP16)
    model, system, par, eff = sc.resolve()
    setup = pass_setup(model, system, par, FP16, eff, 0.95, engine_spec=engine)
    plan = plan_memory(setup, batch, prompt + output, batch * prompt, prompt if prompt_known else None)
    return plan, model, par


def test_only_the_hf_profiles_grow_their_cache():
    assert load_engine("hf-transformers").cache_grows and load_engine("hf-transformers-4.35").cache_grows
    assert not load_engine("vllm").cache_grows and not load_engine("sglang").cache_grows


def test_a_long_decode_peaks_at_its_last_step():
    hf = load_engine("hf-transformers")
    plan, model, par = _plan(hf, 32, 128, 2048)
    decode_act = activation_bytes(model, 32, 32, par, FP16)
    assert plan.activation_bytes == pytest.approx(decode_act)
    old, _, _ = _plan(hf, 32, 128, 2048, prompt_known=False)   # the profile-run rule, as before
    assert old.activation_bytes > 10 * plan.activation_bytes
    assert old.total_bytes - plan.total_bytes == pytest.approx(old.activation_bytes - decode_act)


def test_a_long_prompt_peaks_in_its_prompt_pass():
    hf = replace(load_engine("hf-transformers"), holds_previous_cache=False)
    plan, model, par = _plan(hf, 8, 4096, 1)
    # every position's logits: Llama's forward upcasts them before 4.45 (fp16 output + its fp32 copy, 6 B a logit)
    prefill_act = activation_bytes(model, 8 * 4096, 8 * 4096, par, FP16, 2.0 + 4.0)
    prompt_kv = plan.sequence_kv_bytes(4096) * 8
    prefill_peak = plan.weights_bytes + plan.workspace_bytes + prompt_kv + prefill_act
    assert plan.total_bytes == pytest.approx(prefill_peak)
    assert plan.activation_bytes > activation_bytes(model, 8, 8, par, FP16)


def test_a_pooled_engine_keeps_its_profile_run():
    vllm = load_engine("vllm")
    known, _, _ = _plan(vllm, 32, 128, 2048)
    unknown, _, _ = _plan(vllm, 32, 128, 2048, prompt_known=False)
    assert known.total_bytes == unknown.total_bytes
