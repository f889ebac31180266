"""Family I, weight side: FlexGen, ZeRO-Inference, LLM in a flash and M2R2 expert offload move the
costs the way their mechanisms say (block amortization, link sensitivity, fewer bytes, overlap)."""
import pytest

from whatif.claims.claim import evaluate
from whatif.claims.family_i_weights import CLAIMS
from whatif.errors import WhatifError
from whatif.roofline.config import Parallelism, Precision
from whatif.roofline.estimate import Workload
from whatif.roofline.memory import layer_weight_bytes
from whatif.roofline.techniques.registry import parse_technique
from whatif.scenario import Scenario

FP16 = Precision("fp16", "fp16", "fp16")
SMALL = Workload(8, 512, 32)
NAIVE = "llm_in_a_flash:sparsity=false,window=0,bundling=false,resident_attention=false"


def run(techniques, model="opt-30b", hardware="gcp-t4-flexgen", workload=SMALL, precision=FP16, **kw):
    return Scenario(model=model, hardware=hardware, workload=workload, precision=precision,
                    techniques=tuple(techniques), **kw).run(with_max_batch=False)


def link_bytes(e, prefix: str) -> float:
    """Bytes the decode step moves in transfer ops whose name starts with `prefix`."""
    return sum(sum(t.op.bytes.values()) * t.op.count for t in e.decode.op_times
               if t.op.op_class == "transfer" and t.op.name.startswith(prefix))


# ---------------------------------------------------------------- FlexGen
def test_flexgen_throughput_rises_with_the_block_while_weight_streaming_dominates():
    # KV on the GPU, attention on the GPU: each step streams 80% of the weights once for the whole block.
    spec = "flexgen:cg=100,cc=0,cpu_attention=false,gpu_batch=8"
    steps = []
    for block in (1, 4, 16):
        e = run([spec], workload=Workload(block, 512, 32, prefill_chunk=block * 512))
        streamed = link_bytes(e, "weights_fetch")
        steps.append((block, e.throughput_tok_s, streamed / block))
    for (_, thr_small, per_tok_small), (_, thr_big, per_tok_big) in zip(steps, steps[1:]):
        assert thr_big > 1.5 * thr_small, steps
        assert per_tok_big < per_tok_small / 2, steps     # weight bytes per generated token fall with the block


def test_flexgen_micro_batches_reread_staged_weights_from_hbm():
    one = run(["flexgen:gpu_batch=16"], workload=Workload(16, 512, 32))
    three = run(["flexgen:gpu_batch=6"], workload=Workload(16, 512, 32))
    gemm = {t.op.name: t.op.hbm_bytes for t in one.decode.op_times if t.op.op_class == "gemm"}
    gemm3 = {t.op.name: t.op.hbm_bytes for t in three.decode.op_times if t.op.op_class == "gemm"}
    assert gemm3["mlp_up"] > 2.5 * gemm["mlp_up"]
    assert link_bytes(three, "weights_fetch") == pytest.approx(link_bytes(one, "weights_fetch"))


def test_flexgen_cpu_attention_keeps_the_kv_off_the_link():
    gpu = run(["flexgen:cpu_attention=false"])
    cpu = run(["flexgen"])
    assert link_bytes(gpu, "kv_fetch") > 0 and link_bytes(cpu, "kv_fetch") == 0
    names = {t.op.name for t in cpu.decode.op_times}
    assert {"flexgen_cpu_attention", "flexgen_qkv_to_cpu", "flexgen_attention_out"} <= names
    assert not any(t.op.op_class == "attention_decode" for t in cpu.decode.op_times)
    # a faster CPU makes CPU attention (FLOP bound at FlexGen's measured rate) faster
    block = Workload(144, 512, 32)
    fast, slow = run(["flexgen:cpu_tflops=1"], workload=block), run(["flexgen"], workload=block)
    assert fast.tpot_s < slow.tpot_s / 2


def test_flexgen_cpu_attention_runs_in_line_with_the_gpu_kernels():
    # The release's mha_gen computes it between the micro-batch's GEMMs with blocking copies (flex_opt.py /
    # pytorch_backend.py), so the step pays CPU attention plus the kernels; only the weight stream hides.
    e = run(["flexgen:wg=0,wc=100,gpu_batch=52"], workload=Workload(416, 512, 32, prefill_chunk=416 * 512))
    cpu = sum(t.total_s for t in e.decode.op_times if t.op.name.startswith("flexgen_"))
    kernels = sum(t.total_s for t in e.decode.op_times if t.op.op_class != "transfer")
    weights = sum(t.total_s for t in e.decode.op_times if t.op.name.startswith("weights_fetch"))
    assert cpu > weights > 0
    assert e.decode.gpu_s >= cpu + kernels
    assert e.decode.gpu_s < cpu + kernels + weights    # the weight stream still runs beside them


def test_flexgen_places_its_percentages_in_the_tiers():
    e = run(["flexgen:wg=10,wc=60,cg=0,cc=100,hg=0,hc=100"])
    shares = {(c, t): f for c, t, f in e.placement.shares}
    assert shares[("weights", "gcp-n1-dram-208gb")] == pytest.approx(0.6)
    assert shares[("weights", "gcp-local-ssd-1.5tb")] == pytest.approx(0.3)
    assert shares[("kv", "gcp-n1-dram-208gb")] == pytest.approx(1.0)
    assert link_bytes(e, "weights_fetch[gcp-local-ssd") > 0


def test_flexgen_disk_share_on_a_system_without_nvme_names_the_technique():
    with pytest.raises(WhatifError, match="flexgen placing weights=nvme"):
        run(["flexgen:wg=0,wc=50"], model="llama-3.1-8b", hardware="gh200-superchip", precision=Precision())


# ---------------------------------------------------------------- ZeRO-Inference
def test_zero_inference_tpot_is_bounded_by_weights_over_the_link_and_follows_the_link():
    wl = Workload(4, 512, 32)
    gen5 = run(["zero_inference"], model="llama-2-13b", hardware="h100-pcie-host", workload=wl, precision=Precision())
    gen4 = run(["zero_inference"], model="llama-2-13b", hardware="h100-pcie-host", workload=wl, precision=Precision(),
               host_link="pcie-gen4-x16")
    model = Scenario(model="llama-2-13b").resolve()[0]
    weights = layer_weight_bytes(model, Parallelism(), Precision(), 0)
    assert gen5.tpot_s >= weights / 64e9
    assert gen4.tpot_s >= weights / 32e9
    assert gen4.tpot_s > 1.7 * gen5.tpot_s     # streaming-bound: half the link, about twice the step


def test_zero_inference_prefetch_never_slows_and_nvme_is_slower_than_host():
    wl = Workload(4, 512, 32)
    kw = dict(model="llama-2-13b", hardware="h100-pcie-host", workload=wl, precision=Precision())
    on, off = run(["zero_inference"], **kw), run(["zero_inference:prefetch=false"], **kw)
    assert on.e2e_s <= off.e2e_s
    assert run(["zero_inference:tier=nvme"], **kw).tpot_s > 3 * on.tpot_s


def test_zero_inference_fits_a_model_larger_than_hbm():
    wl = Workload(1, 1024, 64)
    base = Scenario(model="llama-3.1-70b", hardware="h100-pcie-host", workload=wl).run()
    zero = Scenario(model="llama-3.1-70b", hardware="h100-pcie-host", workload=wl,
                    techniques=("zero_inference",)).run()
    assert base.max_batch == 0 and zero.max_batch > 10
    assert zero.memory.fits


def test_zero_inference_gather_copies_run_in_line_with_the_link_copy():
    # DeepSpeed v0.7.x gathers over one rank: two torch.cat copies within HBM on the all-gather stream, behind the
    # host-to-GPU copy of the same stream; link-bound, the step grows by their HBM time and the link moves no more.
    wl, kw = Workload(16, 512, 32), dict(model="opt-6.7b", precision=FP16)
    two, none = run(["zero_inference"], workload=wl, **kw), run(["zero_inference:gather_copies=0"], workload=wl, **kw)
    copies = [t for t in two.decode.op_times if t.op.name.startswith("weights_gather_copy")]
    assert len(copies) == 2 and all(t.op.bytes == {"hbm": 2 * weights_moved(none)} for t in copies)
    hbm_s = sum(t.total_s for t in copies)
    gpu = two.system.gpu.hbm_bandwidth.value
    assert hbm_s == pytest.approx(4 * weights_moved(none) * 32 / (gpu * 0.97), rel=0.01)   # T4: 32 layers
    assert two.tpot_s - none.tpot_s == pytest.approx(hbm_s, rel=0.02)
    assert link_bytes(two, "weights_fetch") == link_bytes(none, "weights_fetch")


def test_zero_inference_gather_copies_hide_behind_compute_when_compute_bound():
    # Beside the compute stream, not on it: FlexGen's 16 x 512-token prefill on the T4 computes for ~2 s against
    # ~1 s of link copy, so the copies' ~0.17 s hide (fill excepted); prefetch off puts them in line.
    kw = dict(model="opt-6.7b", workload=Workload(16, 512, 32), precision=FP16)
    two, none = run(["zero_inference"], **kw), run(["zero_inference:gather_copies=0"], **kw)
    assert two.ttft_s == pytest.approx(none.ttft_s, rel=0.005) and two.tpot_s > 1.1 * none.tpot_s
    two, none = (run([f"zero_inference:prefetch=false,gather_copies={n}"], **kw) for n in (2, 0))
    assert two.ttft_s > none.ttft_s + 0.1


def weights_moved(e) -> float:
    """Layer weight bytes one layer's fetch copies to the GPU in the decode step."""
    return next(t.op.bytes["h2d:pcie-gen3-x16"] for t in e.decode.op_times if t.op.name.startswith("weights_fetch"))


def test_zero_inference_nvme_without_a_disk_names_the_technique():
    with pytest.raises(WhatifError, match="zero_inference placing weights=nvme"):
        run(["zero_inference:tier=nvme"], model="llama-3.1-8b", hardware="h100-sxm", precision=Precision())


# ---------------------------------------------------------------- LLM in a flash
def flash(technique, model="opt-6.7b", batch=1):
    return run([technique], model=model, hardware="rtx-4090", workload=Workload(batch, 128, 64),
               precision=Precision())


def test_llm_in_a_flash_sparsity_windowing_and_bundling_each_cut_the_read():
    naive = flash(NAIVE)
    hybrid = flash("llm_in_a_flash:sparsity=false,window=0,bundling=false")
    sparse = flash("llm_in_a_flash:window=0,bundling=false")
    windowed = flash("llm_in_a_flash:bundling=false")
    bundled = flash("llm_in_a_flash")
    read = [link_bytes(e, "llm_in_a_flash_read") for e in (naive, hybrid, sparse, windowed, bundled)]
    assert read[0] > read[1] > read[2] > read[3] > 0
    assert read[4] == pytest.approx(read[3])      # bundling reads the same bytes in fewer, larger blocks
    tpot = [e.tpot_s for e in (naive, hybrid, sparse, windowed, bundled)]
    assert tpot == sorted(tpot, reverse=True)


def test_llm_in_a_flash_batching_erodes_sparsity():
    one, many = flash("llm_in_a_flash", batch=1), flash("llm_in_a_flash", batch=32)
    assert link_bytes(many, "llm_in_a_flash_read") > 10 * link_bytes(one, "llm_in_a_flash_read")


def test_llm_in_a_flash_faster_ssd_is_faster():
    slow = flash("llm_in_a_flash:flash=nvme-gen4-ssd")
    fast = flash("llm_in_a_flash:flash=nvme-gen5-ssd")
    assert fast.tpot_s < slow.tpot_s


# ---------------------------------------------------------------- M2R2 expert offload
@pytest.mark.parametrize("hardware", ["h100-pcie-host", "gh200-144gb-superchip"])
@pytest.mark.parametrize("batch", [1, 16])
def test_expert_offload_ahead_of_time_is_never_slower(hardware, batch):
    kw = dict(model="mixtral-8x7b", hardware=hardware, workload=Workload(batch, 256, 16), precision=Precision())
    aot, lazy = run(["expert_offload"], **kw), run(["expert_offload:ahead_of_time=false"], **kw)
    plain = run([], **kw)
    assert aot.tpot_s <= lazy.tpot_s * (1 + 1e-9)
    assert aot.e2e_s <= lazy.e2e_s * (1 + 1e-9)
    assert lazy.tpot_s > plain.tpot_s
    assert link_bytes(aot, "experts") == pytest.approx(link_bytes(lazy, "experts"))


def test_expert_offload_needs_experts():
    with pytest.raises(WhatifError, match="expert_offload: llama-3.1-8b has no experts"):
        run(["expert_offload"], model="llama-3.1-8b", hardware="h100-pcie-host", precision=Precision())


# ---------------------------------------------------------------- parameters and claims
@pytest.mark.parametrize(("spec", "pattern"), [
    ("flexgen:wg=120", "flexgen:wg=120.0: must be a percentage"),
    ("flexgen:wg=50,wc=60", "flexgen:wc=60.0: must be at most 100 - wg"),
    ("flexgen:cc=50,cpu_attention=true", "flexgen:cpu_attention=True: must be false unless"),
    ("flexgen:gpu_batch=0", "flexgen:gpu_batch=0: must be a positive"),
    ("flexgen:cpu_tflops=-1", "flexgen:cpu_tflops=-1"),
    ("zero_inference:tier= ", "zero_inference:tier=''"),
    ("llm_in_a_flash:ffn_active=0", "llm_in_a_flash:ffn_active=0.0"),
    ("llm_in_a_flash:reuse=1", "llm_in_a_flash:reuse=1.0"),
    ("llm_in_a_flash:window=-1", "llm_in_a_flash:window=-1"),
    ("llm_in_a_flash:threads=0", "llm_in_a_flash:threads=0"),
    ("expert_offload:predicted=2", "expert_offload:predicted=2.0"),
])
def test_parameter_errors_name_the_key(spec, pattern):
    with pytest.raises(WhatifError, match=pattern):
        parse_technique(spec)


def test_llm_in_a_flash_flash_must_be_an_ssd():
    with pytest.raises(WhatifError, match="llm_in_a_flash:flash='ddr5-4800-rdimm'.*not an SSD"):
        flash("llm_in_a_flash:flash=ddr5-4800-rdimm")


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.band], ids=lambda c: f"{c.technique}-{c.claimed:.3g}")
def test_banded_claims_hold(claim):
    assert evaluate(claim).in_band
