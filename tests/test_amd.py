"""AMD Instinct support: profiles, the xGMI full-mesh collective model, the CDNA family kernel entries and the
ROCm engine specs (docs/hardware.md, 'AMD Instinct')."""
from __future__ import annotations

import pytest

from tests.benchmark_module import load_benchmark
from whatif.cli import main
from whatif.errors import WhatifError
from whatif.roofline import collective_timing
from whatif.roofline.engines import engine_for_gpu
from whatif.roofline.kernel_models import cdna
from whatif.roofline.kernel_models import collectives as col
from whatif.roofline.kernel_models.params import efficiency_fields, params_for
from whatif.specs import hardware

AMD_GPUS = ("mi300x", "mi325x", "mi355x", "mi350x")
AMD_SYSTEMS = ("mi300x-8x", "mi325x-8x", "mi355x-8x", "mi350x-8x")
MESH_LINKS = ("infinity-fabric-mi300", "infinity-fabric-mi350")


def _error(capsys, *argv) -> str:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and "Traceback" not in err, (rc, out, err)
    assert len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize("name", AMD_GPUS)
def test_amd_gpus_load_with_sourced_physical_figures(name):
    gpu = hardware.load_component(name, "gpu")
    assert gpu.vendor == "amd" and gpu.arch in hardware.AMD_ARCHS
    figures = [*gpu.peak.values(), gpu.hbm_capacity, gpu.hbm_bandwidth, gpu.l2_size, gpu.sm_count,
               gpu.boost_clock, gpu.smem_per_sm, gpu.launch_overhead, gpu.tdp]
    for q in figures:
        assert q.provenance in ("datasheet", "measured", "assumed") and len(q.source) > 10, q
    # peaks are dense: bf16 = CUs x 2048 (CDNA 3) or 4096 (CDNA 4, fewer CUs at a higher clock) FLOP/clk x clock
    per_clk = {"cdna3": 2048, "cdna4": 4096}[gpu.arch]
    assert gpu.peak_flops("bf16") == pytest.approx(gpu.sm_count.value * per_clk * gpu.boost_clock.value, rel=0.01)
    assert gpu.peak_flops("fp8") == pytest.approx(2 * gpu.peak_flops("bf16"), rel=1e-3)
    assert 150e9 < gpu.hbm_capacity.value < 320e9 and 4e12 < gpu.hbm_bandwidth.value < 9e12
    assert gpu.interconnect.type == "xgmi" and gpu.host_link.name == "pcie-gen5-x16"
    assert not gpu.achievable, "AMD ceilings live in the CDNA family entry (measured fractions there), not twice"


def test_mi355x_has_fp4_and_fp6_and_mi300x_the_driver_capacity():
    mi355 = hardware.load_component("mi355x", "gpu")
    assert mi355.peak_flops("fp4") == mi355.peak_flops("fp6") == pytest.approx(2 * mi355.peak_flops("fp8"), rel=1e-3)
    mi300 = hardware.load_component("mi300x", "gpu")
    assert "fp4" not in mi300.peak and "e4m3fnuz" in mi300.peak["fp8"].source
    assert mi300.hbm_capacity.provenance == "measured" and mi300.hbm_capacity.value == 196288 * 2 ** 20


@pytest.mark.parametrize("name", AMD_SYSTEMS)
def test_amd_platforms_are_a_switchless_mesh(name):
    system = hardware.load_component(name, "system")
    link = system.gpu_link
    assert system.gpu_count == 8 and link.type == "xgmi" and link.mesh_links == 7 and not link.nvswitch
    assert link.group_bandwidth(2) == link.bandwidth.value       # a pair meets over its one direct link
    assert link.group_bandwidth(8) == 7 * link.bandwidth.value   # each GPU reaches 7 peers over 7 links
    assert link.group_bandwidth(64) == 7 * link.bandwidth.value  # never more links than it has


@pytest.mark.parametrize("link_name", MESH_LINKS)
@pytest.mark.parametrize("gpus", (2, 4, 8))
@pytest.mark.parametrize("nbytes", (8192.0, 1 << 20, 64 << 20))
def test_mesh_collective_reduces_to_the_nvlink_form(link_name, gpus, nbytes):
    """Over a mesh, a group of n GPUs is priced by the NVLink model's very formulas at n-1 links' bandwidth,
    with no switch (no NVLS) and no shared bridges (contention 0)."""
    link = hardware.load_component(link_name, "link")
    nccl, engine, prov = col.collective_params(link_name, "vllm")
    assert not nccl.nvls and nccl.contention == 0 and "assumed" in prov
    for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        mesh = collective_timing.collective_seconds(op, nbytes, gpus, link, "vllm")
        nvlink_form = col.collective_time(op, nbytes, gpus, (gpus - 1) * link.bandwidth.value, link.latency.value,
                                          False, nccl, engine)
        assert mesh == pytest.approx(nvlink_form, rel=1e-12), op
    # large all-reduce: more peers, more links -> a larger group's bus bandwidth, never beyond the links' sum
    if nbytes == 64 << 20:
        t = collective_timing.collective_seconds("all_reduce", nbytes, gpus, link, "vllm")
        busbw = 2 * (gpus - 1) / gpus * nbytes / t
        assert busbw <= (gpus - 1) * link.bandwidth.value
        if gpus > 2:
            t2 = collective_timing.collective_seconds("all_reduce", nbytes, 2, link, "vllm")
            assert busbw > 1.0 * nbytes / t2


def test_a_two_gpu_mesh_is_one_point_to_point_link():
    """n = 2: the mesh's group bandwidth is one link's, as an NVLink bridge's or any point-to-point link's."""
    from whatif.roofline.comm import collective_time
    link = hardware.load_component("infinity-fabric-mi300", "link")
    for op in ("all_reduce", "all_gather", "send_recv"):
        assert collective_time(op, 1e6, 2, link.group_bandwidth(2), 2e-6) == \
            collective_time(op, 1e6, 2, link.bandwidth.value, 2e-6)


@pytest.mark.parametrize("op", ("gemm", "prefill_attention", "decode_attention"))
@pytest.mark.parametrize("dtype", ("bf16", "fp8"))
def test_cdna_kernels_have_their_own_family_entry(op, dtype):
    amd = params_for(op, "cdna3", dtype, "vllm")
    hopper = params_for(op, "hopper", dtype, "vllm")
    assert amd.provenance.startswith("microbenchmark-derived: CDNA family entry cdna3")
    assert "no AMD kernel was measured" in amd.provenance
    assert amd.params != hopper.params, "CDNA must not borrow Hopper's fit silently"
    f = cdna.family("cdna3")
    ratio = (f["gemm_fp8_fraction"] / f["stand_in_gemm_fp8_fraction"] if dtype == "fp8"
             else f["gemm_fraction"] / f["stand_in_gemm_fraction"])
    for name in efficiency_fields(amd.params):
        value = getattr(amd.params, name)
        assert 0 < value <= 1, name
        if not name.startswith("mem"):
            assert value == pytest.approx(min(1.0, getattr(hopper.params, name) * ratio)), name
    assert amd.params.floor_s == pytest.approx(hopper.params.floor_s * f["fixed_cost_factor"])


def test_every_cdna_figure_is_sourced_and_assumed_ones_say_so():
    for arch in hardware.AMD_ARCHS:
        f = cdna.family(arch)
        assert set(f["sources"]) == set(cdna.FIGURES)
        for key in ("gemm_fraction", "gemm_fp8_fraction", "hbm_fraction", "fixed_cost_factor"):
            assert f["sources"][key].startswith("assumed: ") or f["sources"][key].startswith("measured: ")


def test_measured_cdna_figures_are_the_published_ones_over_the_profiles_peaks():
    """The transcribed microbenchmarks (cdna_family.yaml), recomputed from the published figures and the
    profiles' datasheet peaks: a changed peak or a mistyped fraction fails here."""
    mi300x, mi355x = hardware.load_component("mi300x", "gpu"), hardware.load_component("mi355x", "gpu")
    f3, f4 = cdna.family("cdna3"), cdna.family("cdna4")
    assert f3["gemm_fraction"] == pytest.approx(668.4 / (mi300x.peak["bf16"].value / 1e12), abs=1e-3)
    assert f3["gemm_fp8_fraction"] == pytest.approx(1273 / (mi300x.peak["fp8"].value / 1e12), abs=1e-3)
    assert f3["hbm_fraction"] == pytest.approx(4.11 / (mi300x.hbm_bandwidth.value / 1e12), abs=1e-3)
    assert f4["gemm_fraction"] == pytest.approx(1565.0 / (mi355x.peak["bf16"].value / 1e12), abs=1e-3)
    for f, keys in ((f3, ("gemm_fraction", "gemm_fp8_fraction", "hbm_fraction")), (f4, ("gemm_fraction",))):
        assert all(f["sources"][k].startswith("measured: ") for k in keys)
    assert f3["sources"]["fixed_cost_factor"].startswith("assumed: ")


def test_cdna_provenance_says_which_figure_is_measured_and_which_assumed():
    prov = cdna.provenance("cdna4")
    assert prov.startswith("microbenchmark-derived: CDNA family entry cdna4")
    assert "(GEMM bf16, measured/measured)" in prov and "(GEMM fp8, assumed/measured)" in prov
    assert "fixed costs x 1.5 (assumed)" in prov


def test_all_assumed_family_says_assumed(tmp_path):
    import yaml
    data = yaml.safe_load(cdna.FAMILY_FILE.read_text())
    for block in data["families"].values():
        for key in cdna.FIGURES:
            block[key]["provenance"] = "assumed"
    path = tmp_path / "family.yaml"
    path.write_text(yaml.safe_dump(data))
    old = cdna.FAMILY_FILE
    try:
        cdna.FAMILY_FILE = path
        cdna.family.cache_clear()
        assert cdna.kind("cdna3") == "assumed" and cdna.provenance("cdna3").startswith("assumed: CDNA family")
    finally:
        cdna.FAMILY_FILE = old
        cdna.family.cache_clear()


def test_direction_check_verdicts():
    """The H200 direction rule (benchmarks/amd_h200_direction.py): a tie under 1.05x, a GPU the model does not
    fit loses, and every published row names a winner the verdict can produce."""
    check = load_benchmark("amd_h200_direction")
    assert check.verdict(100.0, 103.0) == ("tie", pytest.approx(1.03))
    assert check.verdict(120.0, 100.0) == ("MI300X", pytest.approx(1.2))
    assert check.verdict(100.0, 120.0) == ("H200", pytest.approx(1.2))
    assert check.verdict(25.0, None) == ("MI300X", None)
    for row in check.ROWS:
        assert row[5] in ("MI300X", "H200", "tie") and row[3] in check.GRID


def test_rccl_model_meets_the_transcribed_large_message_busbw():
    """The xGMI Simple efficiency is read from Azure's 8 GB RCCL row: the model gives it back there (and, not
    fitted, stays within 5% from 32 MB up); small messages are reported, not pinned (docs/amd.md)."""
    rows = load_benchmark("amd_published_check").rccl_rows()
    assert rows[-1][2] == pytest.approx(rows[-1][1], rel=0.01)
    for size, published, predicted, _, _ in rows:
        if size >= 32 * 2 ** 20:
            assert predicted == pytest.approx(published, rel=0.05), size


def test_rocm_engine_is_chosen_by_vendor():
    mi300 = hardware.load_component("mi300x", "gpu")
    h200 = hardware.load_component("h200-sxm", "gpu")
    assert engine_for_gpu("vllm", mi300) == "vllm-rocm" and engine_for_gpu("sglang", mi300) == "sglang-rocm"
    assert engine_for_gpu("vllm-rocm", mi300) == "vllm-rocm" and engine_for_gpu("vllm", h200) == "vllm"
    with pytest.raises(WhatifError, match="no ROCm build"):
        engine_for_gpu("trtllm", mi300)
    with pytest.raises(WhatifError, match="AMD GPUs only"):
        engine_for_gpu("sglang-rocm", h200)


def test_estimate_on_mi300x_names_the_rocm_spec_and_assumed_fits(capsys):
    assert main(["estimate", "--model", "llama-3.1-8b", "--hardware", "mi300x", "--dtype", "fp8",
                 "--prompt", "512", "--output", "64", "--no-ops"]) == 0
    out = capsys.readouterr().out
    assert "engine: vllm-rocm (engine_profiles/versions/vllm-rocm.yaml)" in out
    assert "efficiency: default (microbenchmark-derived cdna3 family" in out


def test_compare_across_vendors(capsys):
    assert main(["compare", "--model", "llama-3.1-8b", "--systems", "mi300x-8x:tp=2,hgx-h200:tp=2",
                 "--prompt", "512", "--output", "64", "--batch", "4"]) == 0
    out = capsys.readouterr().out
    assert "mi300x-8x" in out and "hgx-h200" in out
    assert "mi300x-8x: efficiency: default (microbenchmark-derived cdna3 family" in out
    assert "hgx-h200: efficiency: default (vllm" in out


def test_compare_json_says_each_hardware_s_efficiency(capsys):
    import json
    assert main(["compare", "--model", "llama-3.1-8b", "--systems", "mi300x-8x:tp=2,hgx-h200:tp=2",
                 "--prompt", "512", "--output", "64", "--batch", "4", "--json"]) == 0
    by_hw = json.loads(capsys.readouterr().out)["efficiency_by_hardware"]
    assert "microbenchmark-derived: CDNA family entry cdna3" in by_hw["mi300x-8x"]["provenance"]
    assert "CDNA" not in by_hw["hgx-h200"]["provenance"]


def test_bad_amd_names_are_one_line_errors(capsys):
    assert "mi300x" in _error(capsys, "estimate", "--model", "llama-3.1-8b", "--hardware", "mi300")
    assert "no ROCm build" in _error(capsys, "estimate", "--model", "llama-3.1-8b", "--hardware", "mi300x",
                                     "--engine", "trtllm")
    assert "AMD GPUs only" in _error(capsys, "estimate", "--model", "llama-3.1-8b", "--hardware", "h200-sxm",
                                     "--engine", "vllm-rocm")


def test_a_mesh_link_with_a_switch_is_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: link\nname: bad\ntype: xgmi\nbandwidth: {value: 64, unit: GB/s, provenance: assumed, "
                   "source: test}\nlatency: {value: 2, unit: us, provenance: assumed, source: test}\n"
                   "mesh_links: 7\nnvswitch: true\n")
    with pytest.raises(WhatifError, match="mesh_links"):
        hardware.load_component(str(bad), "link")
