"""Memory tiers and placement: the mechanisms the issue names, and per-tier capacity."""
from __future__ import annotations

import math

import pytest

from whatif.claims.claim import evaluate
from whatif.claims.family_i_tiers import CLAIMS as TIER_CLAIMS
from whatif.errors import WhatifError
from whatif.specs.hardware import load_system
from whatif.roofline.estimate import Workload, launch_queue_time
from whatif.roofline.placement import Placement, parse_place
from whatif.roofline.tiers import add_tiers, tier_paths, with_host_link
from whatif.scenario import Scenario

LONG = Workload(batch=4, prompt=32000, output=256)


def run(**kw):
    kw.setdefault("model", "llama-3.1-8b")
    kw.setdefault("workload", LONG)
    return Scenario(**kw).run(with_max_batch=False)


def test_kv_on_host_over_c2c_decodes_several_times_faster_than_over_pcie_gen5():
    c2c = run(hardware="gh200-144gb-superchip", place=("kv=host",))
    pcie = run(hardware="gh200-144gb-superchip", place=("kv=host",), host_link="pcie-gen5-x16")
    # 375 GB/s h2d (measured) against 64 GB/s: the KV read dominates both steps.
    assert pcie.tpot_s / c2c.tpot_s > 4
    assert c2c.tpot_s > run(hardware="gh200-144gb-superchip").tpot_s   # slower than all in HBM


def test_pcie_gen4_gen5_c2c_order_for_the_same_offload():
    tpots = [run(hardware="gh200-144gb-superchip", place=("kv=host",), host_link=link).tpot_s
             for link in ("pcie-gen4-x16", "pcie-gen5-x16", "nvlink-c2c")]
    assert tpots[0] > tpots[1] > tpots[2]
    assert tpots[0] / tpots[1] == pytest.approx(2.0, rel=0.1)   # 32 vs 64 GB/s, KV-read bound


def test_cxl_capacity_raises_max_context_but_lowers_decode_rate():
    w = Workload(batch=8, prompt=60000, output=256)
    hbm = run(hardware="h100-pcie-cxl", workload=w)
    cxl = run(hardware="h100-pcie-cxl", workload=w, place=("kv=cxl",))
    assert cxl.memory_max_context > 2 * hbm.memory_max_context
    assert cxl.tpot_s > 2 * hbm.tpot_s
    # More expanders: more capacity, and more bandwidth until the GPU's x16 link caps it.
    tpot = {}
    for n in (1, 2, 4):
        e = run(hardware="h100-pcie-host", workload=w, place=("kv=cxl",), add_tiers=(f"cxl-micron-cz120-256gb:{n}",))
        tpot[n] = e.tpot_s
    assert tpot[2] < 0.6 * tpot[1]                      # 32 -> 64 GB/s (two PCIe 5.0 x8 cards)
    assert tpot[4] == pytest.approx(tpot[2], rel=1e-9)  # 128 GB/s of cards behind a 64 GB/s x16 link


@pytest.mark.parametrize("place", [("weights=host:0.5",), ("kv=host:0.7",), ("activations=host:1",),
                                   ("weights=host:0.3", "kv=host:1")])
@pytest.mark.parametrize("batch", [1, 16])
def test_overlapping_transfers_is_never_slower_than_not(place, batch):
    w = Workload(batch=batch, prompt=2048, output=64)
    on = run(hardware="dgx-h100", workload=w, place=place)
    off = run(hardware="dgx-h100", workload=w, place=place, overlap=False)
    assert on.tpot_s <= off.tpot_s * (1 + 1e-12)
    assert on.ttft_s <= off.ttft_s * (1 + 1e-12)


def test_streamed_weights_cost_at_least_their_bytes_over_the_link():
    e = run(hardware="dgx-h100", place=("weights=host:0.5",), workload=Workload(1, 512, 64))
    path = e.tier_paths[e.placement.shares[0][1]]
    layer_weights = e.memory.weights_bytes - 2 * e.model.vocab_size * e.model.hidden_size * 2
    assert e.tpot_s >= 0.5 * layer_weights / path.bandwidth * 0.99


def test_direction_matters_on_c2c():
    p = tier_paths(load_system("gh200-144gb-superchip"), 1)["grace-lpddr5x-480gb"]
    assert p.rate("h2d") == pytest.approx(375e9) and p.rate("d2h") == pytest.approx(297e9)


def test_a_shared_pool_is_split_between_the_gpus_that_stream_from_it():
    system = add_tiers(load_system("dgx-h100"), ["cxl-micron-cz120-256gb:2"])
    one, eight = tier_paths(system, 1), tier_paths(system, 8)
    cxl = "cxl-micron-cz120-256gb"
    assert one[cxl].bandwidth == pytest.approx(64e9)        # 2 x 32 GB/s x8 links = the x16 path
    assert eight[cxl].bandwidth == pytest.approx(8e9)       # the same 64 GB/s over 8 GPUs
    assert eight[cxl].capacity == pytest.approx(one[cxl].capacity / 8)


def test_small_blocks_waste_the_link():
    from whatif.roofline.efficiency import load_efficiency
    from whatif.roofline.ops import transfer
    from whatif.roofline.timing import time_op
    system = load_system("dgx-h100")
    path = tier_paths(system, 1)["ddr5-4800-rdimm-2dpc"]
    eff = load_efficiency("default", system.gpu)
    one = time_op(transfer("x", 64e6, path), system.gpu, eff).time_s
    scattered = time_op(transfer("x", 64e6, path, blocks=4096), system.gpu, eff).time_s
    assert scattered > 2 * one


def test_kv_in_lpddr5x_sets_max_context_by_the_grace_memory():
    e = run(hardware="gh200-144gb-superchip", place=("kv=lpddr5x",), workload=Workload(1, 1000, 100))
    per_token = e.memory.kv_bytes_per_token
    lpddr = 480e9 * 0.9
    assert e.memory_max_context == pytest.approx(lpddr / per_token, rel=0.01)
    assert e.memory_max_context > 3 * run(hardware="gh200-144gb-superchip",
                                          workload=Workload(1, 1000, 100)).memory_max_context


def test_each_tier_capacity_is_checked():
    e = run(hardware="h100-pcie-cxl", place=("kv=cxl",), workload=Workload(64, 100000, 1000),
            context_window=200000)
    over = dict((t, (need, usable)) for t, need, usable in e.memory.overflow())
    assert "cxl-micron-cz120-256gb" in over and not e.memory.fits


def test_direct_access_needs_no_staging_and_keeps_weight_streaming():
    stream = run(hardware="gh200-144gb-superchip", place=("kv=host",))
    direct = run(hardware="gh200-144gb-superchip", place=("kv=host",), access="direct")
    assert stream.memory.staging_bytes > 0 and direct.memory.staging_bytes == 0
    assert direct.memory.hbm_bytes < stream.memory.hbm_bytes
    reads = [t for t in direct.decode.op_times if t.bound == "link"]
    assert reads and all(t.op.op_class.startswith("attention") for t in reads)


def test_launch_queue_time_is_between_both_bounds():
    from whatif.roofline.efficiency import load_efficiency
    system = load_system("h100-sxm")
    eff = load_efficiency("default", system.gpu)
    e = run(hardware="h100-sxm", workload=Workload(1, 128, 2), cuda_graphs=False)
    times = e.prefill[0][0].op_times
    kernels = sum(t.op.count for t in times)
    gpu = sum(t.total_s for t in times) + kernels * eff.kernel_gap_s
    for launch in (0.0, 1e-6, 20e-6):
        t = launch_queue_time(times, launch, eff.kernel_gap_s)
        assert max(gpu, kernels * launch) * (1 - 1e-9) <= t <= gpu + kernels * launch + 1e-12


def test_cost_per_million_tokens_follows_price_and_throughput():
    e = Scenario(price_per_hour=3.6).run()
    assert e.cost_per_mtok == pytest.approx(3.6 / 3600 / e.throughput_tok_s * 1e6)
    assert e.max_batch_cost_per_mtok < e.cost_per_mtok
    assert Scenario().run().cost_per_mtok is None       # no price in the shipped profiles


@pytest.mark.parametrize("specs, match", [
    (["kv=host:1.5"], "fraction"), (["kv=host:0"], "fraction"), (["vram=host"], "tensor class"),
    (["kv"], "CLASS=TIER"), (["kv=host:x"], "not a number"), (["kv=host:0.6", "kv=host:0.6"], "add up"),
])
def test_bad_placement_specs_are_one_line_errors(specs, match):
    with pytest.raises(WhatifError, match=match):
        parse_place(specs)


def test_unknown_tier_names_the_valid_ones():
    with pytest.raises(WhatifError, match="valid: .*cxl"):
        run(hardware="h100-pcie-cxl", place=("kv=optane",))
    with pytest.raises(WhatifError, match="host memory size is unknown"):
        run(hardware="h100-sxm", place=("kv=cxl",))
    with pytest.raises(WhatifError, match="access"):
        Placement(access="mmap")


def test_host_link_and_tier_flags_are_checked():
    with pytest.raises(WhatifError, match="unknown link"):
        with_host_link(load_system("dgx-h100"), "pcie-gen9")
    with pytest.raises(WhatifError, match="--add-tier"):
        add_tiers(load_system("dgx-h100"), ["pcie-gen5-x16:2"])
    with pytest.raises(WhatifError, match="COUNT"):
        add_tiers(load_system("dgx-h100"), ["cxl-micron-cz120-256gb:-1"])


def test_all_in_hbm_plan_is_unchanged_by_the_tier_model():
    e = run(hardware="dgx-h100")
    assert e.memory.tiers == {"hbm": e.memory.total_bytes} and not math.isinf(e.memory.free_for_kv)


@pytest.mark.parametrize("claim", [c for c in TIER_CLAIMS if c.band], ids=lambda c: f"{c.technique}-{c.metric}")
def test_tier_claims_in_band(claim):
    outcome = evaluate(claim)
    assert outcome.in_band, (claim.technique, claim.metric, outcome.gain, claim.band)


def test_a_slower_host_cpu_stays_launch_bound_to_a_larger_batch():
    def gpu_bound_from(launch_us):
        for batch in (1, 2, 4, 8, 16, 32, 64):
            e = run(model="llama-3.2-1b", hardware="gh200-96gb", workload=Workload(batch, 128, 2), cuda_graphs=False,
                    launch_us=launch_us)
            p = e.prefill[0][0]
            if p.launch_s < p.gpu_s:
                return batch
        return None
    fast, slow = gpu_bound_from(2.0), gpu_bound_from(12.0)
    assert fast is not None and slow is not None and slow > fast
    with pytest.raises(WhatifError, match="--launch-us"):
        run(launch_us=-1)
