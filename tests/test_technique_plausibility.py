"""Technique models that must be physically plausible (issue 21, item 3; issue 19's warnings): expert
offloading takes the experts out of HBM and has a cache, FlexGen's CPU speed comes from the system,
a cacheless diffusion decoder refuses KV techniques, SkipDecode starts at the workload's prompt, the
Hugging Face cache copy costs what it moves, and a technique that cannot act says so."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline.techniques.offload_weights import FlexGen, host_dram_bandwidth
from whatif.roofline.techniques.registry import technique_set
from whatif.roofline.tiers import host_path
from whatif.scenario import build_scenario
from whatif.specs.hardware import load_system
from whatif.specs.models import load_model

FP16 = {"weight": "fp16", "activation": "fp16", "kv": "fp16"}


def run(techniques, model="llama-3.1-8b", hardware="h100-sxm", batch=1, prompt=512, output=64, **top):
    return build_scenario({"model": model, "hardware": hardware, "techniques": list(techniques), **top},
                          {"workload": {"batch": batch, "prompt": prompt, "output": output}}).run()


def link_bytes(e, word):
    return sum(v for t in e.decode.op_times if word in t.op.name for k, v in t.op.bytes.items() if ":" in k)


# ---------------------------------------------------------------- expert_offload
def test_offloaded_experts_leave_hbm_so_a_model_too_big_for_it_runs():
    kw = dict(model="mixtral-8x7b", hardware="h100-pcie-host", prompt=256, output=16)
    plain, off = run([], **kw), run(["expert_offload"], **kw)
    assert not plain.memory.fits and off.memory.fits
    m = load_model("mixtral-8x7b")
    experts = m.moe.num_experts * m.dense_mlp_params(m.moe.expert_intermediate_size) * m.num_moe_layers * 2
    assert plain.memory.weights_bytes - off.memory.weights_bytes == pytest.approx(experts)


def test_an_expert_cache_trades_hbm_for_link_bytes():
    kw = dict(model="mixtral-8x7b", hardware="h100-pcie-host", prompt=256, output=16)
    none, half = run(["expert_offload"], **kw), run(["expert_offload:cached=4"], **kw)
    assert half.memory.weights_bytes > none.memory.weights_bytes
    assert link_bytes(half, "expert") == pytest.approx(0.5 * link_bytes(none, "expert"))
    assert half.tpot_s < none.tpot_s
    with pytest.raises(WhatifError, match="cached=8: must be below"):
        run(["expert_offload:cached=8"], **kw)


def test_expert_offload_refuses_a_weights_placement_that_would_stream_the_experts_twice():
    with pytest.raises(WhatifError, match="every expert would cross the link twice"):
        run(["expert_offload"], model="mixtral-8x7b", hardware="h100-pcie-host", place=["weights=host:0.5"])


# ---------------------------------------------------------------- FlexGen's CPU
def test_flexgen_cpu_speed_comes_from_the_host():
    t4, h100 = (host_path(load_system(name)) for name in ("gcp-t4-flexgen", "h100-pcie-host"))
    dram, flops = FlexGen().cpu_rates(t4)
    assert dram == pytest.approx(60e9) and flops == pytest.approx(0.0123e12)   # FlexGen's own host
    assert host_dram_bandwidth(h100) == pytest.approx(8 * 38.4e9, rel=0.01)     # 8 channels of DDR5-4800
    kw = dict(model="opt-30b", hardware="h100-pcie-host", batch=144, output=32, precision=FP16)
    own = run(["flexgen"], **kw)
    t4_cpu = run(["flexgen:cpu_tflops=0.0123,cpu_bandwidth=60"], **kw)
    assert own.tpot_s < t4_cpu.tpot_s / 2


# ---------------------------------------------------------------- diffusion without a cache
@pytest.mark.parametrize("kv", ["kivi", "h2o", "quest"])
def test_a_cacheless_diffusion_decoder_refuses_kv_techniques(kv):
    with pytest.raises(WhatifError, match=f"{kv}: acts on the KV cache, but diffusion keeps none"):
        run(["diffusion", kv], model="llada-8b")
    assert run(["diffusion:cache=dual", kv], model="llada-8b").tpot_s > 0
    assert run(["diffusion", "int4"], model="llada-8b").tpot_s > 0     # weights are still there to compress


# ---------------------------------------------------------------- SkipDecode's start
def test_skip_decode_starts_at_the_workloads_prompt():
    kw = dict(model="opt-1.3b", hardware="a100-sxm-80gb", batch=16, prompt=512, output=128)
    assert run(["skip_decode"], **kw).tpot_s == pytest.approx(run(["skip_decode:prompt=512"], **kw).tpot_s)
    assert run(["skip_decode"], **kw).tpot_s < run(["skip_decode:prompt=2048"], **kw).tpot_s


# ---------------------------------------------------------------- Hugging Face's cache copy
def test_kv_concat_reads_and_writes_the_cache_as_stored_in_decode_only():
    kw = dict(model="llama-2-7b", hardware="a100-sxm-80gb", batch=8, prompt=2048, output=64)

    def copy(e):
        ops = [t.op for t in e.decode.op_times if t.op.name == "kv_concat"]
        return sum(op.bytes["hbm"] * op.count for op in ops)
    plain, quant = run(["kv_concat"], **kw), run(["kv_concat", "kivi"], **kw)
    cached = 8 * 2048 * 32 * 2 * 4096 * 2          # batch x tokens x layers x K+V x width x 2 B
    assert copy(plain) == pytest.approx(2 * cached, rel=0.05)
    assert copy(quant) < copy(plain) / 3
    assert not any(t.op.name == "kv_concat" for p, _ in plain.prefill for t in p.op_times)
    assert plain.tpot_s > run([], **kw).tpot_s


# ---------------------------------------------------------------- warnings and assumptions shown
def test_a_technique_that_cannot_act_says_why():
    m = load_model("llama-3.1-8b")
    (quest,) = [w for w in technique_set(["h2o", "quest"]).warnings(m, 4096, 128) if w.startswith("quest")]
    assert "h2o keeps" in quest and "changes nothing" in quest
    assert technique_set(["quest"]).warnings(m, 512, 128)[0].startswith("quest changes nothing")
    assert not technique_set(["h2o", "kivi"]).warnings(m, 4096, 128)


def test_assumed_acceptance_and_the_chosen_draft_are_shown():
    notes = technique_set(["speculative"]).notes(load_model("llama-3.1-8b"))
    assert any("alpha=0.8 is assumed" in n for n in notes)
    assert any("draft=auto chose llama-3.2-1b" in n for n in notes)
    assert not any("alpha=" in n for n in technique_set(["speculative:alpha=0.7"]).notes(load_model("llama-3.1-8b")))
