"""The shipped hardware profiles load, carry sourced numbers, and match docs/hardware-facts.md and the
datasheets cited in each profile."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from whatif.specs import hardware
from whatif.errors import WhatifError
from whatif.specs.quantity import PROVENANCES

# Dense BF16 tensor-core peaks (FLOP/s) from docs/hardware-facts.md, "GPUs: dense peak throughput".
DENSE_BF16 = {
    "a100-sxm-40gb": 312e12,
    "a100-sxm-80gb": 312e12,
    "a100-pcie-80gb": 312e12,
    "h100-sxm": 989e12,
    "h100-pcie": 756e12,
    "h100-nvl": 835e12,
    "h200-sxm": 989e12,
    "h200-nvl": 835e12,    # H200 datasheet, H200 NVL column: 1,671 sparse (as H100 NVL)
    "gh200-96gb": 989e12,
    "gh200-144gb": 989e12,
    "b200": 2250e12,
    "a10": 125e12,
    "rtx-a6000": 154.8e12,
    "a40": 149.7e12,
    "rtx-4090": 165.2e12,
    "t4": None,            # Turing: no BF16 tensor cores
    # GPUs without measurements in the project's corpus, from the datasheets each profile cites
    "gb200": 2500e12,      # GB200 NVL72 datasheet: 10 PFLOP/s sparse per 2-GPU superchip
    "gb300": 2500e12,      # GB300 NVL72 datasheet: 360 PFLOP/s sparse per 72 GPUs
    "b300": 2250e12,       # HGX B300 datasheet: 36 PFLOP/s sparse per 8 GPUs
    "l40s": 362.05e12,     # L40S datasheet: 362.05 dense (733 sparse)
    "l4": 121e12,          # L4 datasheet: 242 sparse
    "rtx-pro-6000-server": 500e12,  # datasheet FP4 4 PFLOP/s sparse / 8
    "h20": 148e12,         # H20 as reported by the press; 15% of H100 SXM
    "mi300x": 1307.4e12,   # AMD MI300X datasheet: 2614.9 sparse
    "mi325x": 1307.4e12,   # AMD MI325X datasheet, as MI300X
    "mi355x": 2516.6e12,   # AMD MI355X datasheet: 5033.2 sparse
    "mi350x": 2306.9e12,   # AMD MI350X datasheet: 4613.7 sparse (2200 vs 2400 MHz)
}
DENSE_FP16_ONLY = {"t4": 65e12}
# The largest dense BF16 peak shipped (GB200/GB300); a bigger one is almost surely a 2:4-sparse figure.
MAX_DENSE_BF16 = 2.6e15
# Dense FP8 and FP4 peaks where they are not 2x the next-wider dtype: Blackwell Ultra's NVFP4 is 3x
# its FP8 (HGX B300: 108 PF dense FP4 vs 36 PF sparse FP8 per 8 GPUs; GB300 NVL72: 1080 vs 360 per 72).
DENSE_FP4 = {"b200": 9000e12, "gb200": 10000e12, "b300": 13500e12, "gb300": 15000e12,
             "rtx-pro-6000-server": 2000e12,
             "mi355x": 10066.3e12, "mi350x": 9227.5e12}   # MI350/355X: MXFP4 (and MXFP6) 2x its FP8
DENSE_FP8 = {"b300": 4500e12, "gb300": 5000e12, "h20": 296e12, "l40s": 733e12, "l4": 242.5e12}
# Peaks that are not read straight off an NVIDIA datasheet, and why (the profile's source says it):
PEAK_PROVENANCE = {
    "h20": {"assumed"},                            # NVIDIA has published no H20 datasheet; press figures
    "rtx-pro-6000-server": {"datasheet", "derived"},  # only FP4 (sparse) and FP32 are published
}
# Capacities as the driver reports them (nvidia-smi total, MiB), each cited in its profile.
DRIVER_MIB = {
    "h100-sxm": 81559, "h200-sxm": 143771, "a100-sxm-80gb": 81920, "a100-sxm-40gb": 40960,
    "b200": 183359, "a10": 23028, "t4": 15360, "l40s": 46068, "l4": 23034, "rtx-pro-6000-server": 97887,
    "gb200": 189471, "b300": 275040, "gb300": 284208, "h20": 97871, "gh200-96gb": 97871,   # session 73 N
    "mi300x": 196288,   # rocm-smi VRAM Total Memory, as the profile cites
    "a100-pcie-80gb": 81920, "h100-pcie": 81559, "h100-nvl": 95830, "a40": 46068, "rtx-4090": 24564,
    "rtx-a6000": 49140,   # session 73 Q
    "h200-nvl": 143771,   # session 73 S: a 4x H200 NVL server's nvidia-smi
}
NEW_SYSTEMS = ["hgx-b300", "gb200-nvl72", "gb300-nvl72", "hgx-h20", "l40s-8x-pcie", "rtx-pro-6000-server-8x"]

ALL = hardware.list_components()
GPUS = hardware.list_components("gpu")
SYSTEMS = hardware.list_components("system")


def _quantities(component):
    """Every Quantity a component carries, with a field label."""
    from whatif.specs.quantity import Quantity

    for name, value in vars(component).items():
        if isinstance(value, Quantity):
            yield name, value
        elif isinstance(value, dict):
            for key, q in value.items():
                if isinstance(q, Quantity):
                    yield f"{name}.{key}", q


def test_expected_profiles_are_shipped():
    expected = set(DENSE_BF16) | {
        "nvlink-3", "nvlink-4", "nvlink-5", "nvlink-bridge-a100", "nvlink-bridge-h100", "nvlink-bridge-h200",
        "pcie-gen4-x16", "pcie-gen5-x16", "pcie-gen5-x8", "nvlink-c2c", "nvme-gen4-x4", "nvme-gen5-x4",
        "ddr4-3200-rdimm", "ddr5-4800-rdimm", "grace-lpddr5x-480gb", "cxl-micron-cz120-256gb",
        "cxl-samsung-cmm-d-512gb", "nvme-gen4-ssd", "nvme-gen5-ssd",
        "dgx-a100-80gb", "dgx-h100", "hgx-h200", "dgx-b200", "gh200-superchip",
        "gh200-144gb-superchip", "h100-pcie-cxl", "h100-pcie-host", "nvlink-c2c-gb200", *NEW_SYSTEMS,
    }
    assert expected <= set(ALL), sorted(expected - set(ALL))
    assert set(GPUS) == set(DENSE_BF16), "a new GPU needs its dense BF16 peak in DENSE_BF16"


@pytest.mark.parametrize("name", ALL)
def test_profile_loads_and_is_sourced(name):
    comp = hardware.load_component(name)
    assert comp.name == name, "the file stem must equal `name`"
    assert hardware.component_kind(name) == hardware.kind_of(comp)
    for field, q in _quantities(comp):
        assert q.provenance in PROVENANCES, (name, field)
        assert q.source.strip(), (name, field)
        assert q.value >= 0, (name, field)


@pytest.mark.parametrize("name", GPUS)
def test_gpu_dense_peaks(name):
    gpu = hardware.load_component(name, "gpu")
    if DENSE_BF16[name] is None:
        assert "bf16" not in gpu.peak and gpu.peak_flops("fp16") == pytest.approx(DENSE_FP16_ONLY[name])
        return
    bf16 = gpu.peak_flops("bf16")
    assert bf16 == pytest.approx(DENSE_BF16[name], rel=1e-9)
    assert bf16 <= MAX_DENSE_BF16, "looks like a 2:4-sparse figure"
    assert gpu.peak_flops("fp16") == pytest.approx(bf16)
    if "fp8" in gpu.peak:
        # datasheets round: 1979 vs 2 x 989, 1513 vs 2 x 756; L40S's 733 vs 2 x 362.05 mixes two clocks
        assert gpu.peak_flops("fp8") == pytest.approx(DENSE_FP8.get(name, 2 * bf16), rel=2e-3)
        assert gpu.peak_flops("fp8") == pytest.approx(2 * bf16, rel=0.015), "FP8 is 2x BF16 on every tensor core"
    if "fp4" in gpu.peak:
        assert gpu.peak_flops("fp4") == pytest.approx(DENSE_FP4[name], rel=1e-9)
        assert gpu.peak_flops("fp4") >= 2 * gpu.peak_flops("fp8") * (1 - 2e-3)
    for dtype, q in gpu.peak.items():
        assert q.provenance in PEAK_PROVENANCE.get(name, {"datasheet"}), (dtype, q)
    # measured ceilings sit below the peaks they measure
    if "matmul_bf16" in gpu.achievable:
        assert 0.5 * bf16 < gpu.achievable["matmul_bf16"].value < bf16
        assert gpu.achievable["matmul_bf16"].provenance == "measured"
    if "matmul_fp8" in gpu.achievable:
        assert gpu.achievable["matmul_fp8"].value < gpu.peak_flops("fp8")
    if "hbm_bandwidth" in gpu.achievable:
        assert gpu.achievable["hbm_bandwidth"].value < gpu.hbm_bandwidth.value


def test_gpu_dtype_sets_match_the_architecture():
    for name in GPUS:
        gpu = hardware.load_component(name, "gpu")
        dtypes = set(gpu.peak)
        if gpu.arch == "turing":
            assert not {"bf16", "fp8", "fp4"} & dtypes and "fp16" in dtypes, name
        if gpu.arch == "ampere":
            assert "fp8" not in dtypes and "int4" in dtypes and "int8" in dtypes, name
        if gpu.arch == "hopper":
            assert {"fp8", "int8"} <= dtypes and "int4" not in dtypes and "fp4" not in dtypes, name
        if gpu.arch == "blackwell":
            assert {"fp8", "fp4"} <= dtypes, name
    with pytest.raises(WhatifError, match="fp8.*a100-sxm-80gb.*valid"):
        hardware.load_component("a100-sxm-80gb").peak_flops("fp8")


def test_gh200_superchip_lpddr5x_over_c2c():
    system = hardware.load_component("gh200-superchip", "system")
    assert system.gpu.name == "gh200-96gb"
    assert system.gpu.host_link.name == "nvlink-c2c"
    (tier,) = [t for t in system.tiers if t.tier.technology == "lpddr5x"]
    assert tier.capacity == pytest.approx(480e9)
    assert [link.name for link in tier.path] == ["nvlink-c2c"]
    assert tier.bandwidth("h2d") == pytest.approx(375e9)  # measured C2C, below LPDDR5X's 512 GB/s
    assert tier.bandwidth("d2h") == pytest.approx(297e9)


def test_cxl_tier_is_limited_by_the_slowest_link():
    system = hardware.load_component("h100-pcie-cxl", "system")
    (cxl,) = [t for t in system.tiers if t.tier.technology == "cxl"]
    assert cxl.count == 2 and cxl.capacity == pytest.approx(512e9)
    gpu_pcie = cxl.path[0].bandwidth_for("h2d")
    device_x8 = cxl.tier.device_link.bandwidth_for("h2d")
    assert gpu_pcie == pytest.approx(64e9) and device_x8 == pytest.approx(32e9)
    assert cxl.tier.bandwidth.value == pytest.approx(36e9)
    # two expanders: 2 x min(36, 32) = 64 GB/s, equal to the GPU's PCIe 5.0 x16
    assert cxl.bandwidth("h2d") == pytest.approx(64e9)
    # one expander: its own PCIe 5.0 x8 link is the slowest
    assert replace(cxl, count=1).bandwidth("h2d") == pytest.approx(32e9)
    # four expanders: the GPU's PCIe link is the slowest, however many devices there are
    assert replace(cxl, count=4).bandwidth("h2d") == pytest.approx(64e9)
    # with a much faster host path, the expanders (2 x their x8 links) are the limit
    fast_link = replace(cxl.path[0], bandwidth=replace(cxl.path[0].bandwidth, value=1e12))
    assert replace(cxl, path=(fast_link,)).bandwidth("h2d") == pytest.approx(64e9)


def test_system_host_memory_capacity_and_bandwidth():
    # (system, host capacity in B, aggregate channel bandwidth in B/s)
    for name, capacity, bandwidth in [
        ("dgx-h100", 2.048e12, 16 * 35.2e9),
        ("dgx-a100-80gb", 2.048e12, 16 * 25.6e9),
        ("h100-pcie-host", 512e9, 8 * 38.4e9),
    ]:
        system = hardware.load_component(name, "system")
        ddr = [t for t in system.tiers if t.tier.technology in ("ddr4", "ddr5")]
        assert sum(t.capacity for t in ddr) == pytest.approx(capacity), name
        assert sum(t.tier.bandwidth.value * t.count for t in ddr) == pytest.approx(bandwidth), name
        for t in ddr:  # a GPU sees host memory through its own link
            assert t.bandwidth("h2d") == pytest.approx(system.gpu.host_link.bandwidth_for("h2d")), name


def test_nvme_tier_is_limited_by_the_ssd():
    system = hardware.load_component("h100-pcie-host", "system")
    (nvme,) = [t for t in system.tiers if t.tier.technology == "nvme"]
    assert nvme.bandwidth("h2d") == pytest.approx(7e9)
    assert nvme.tier.device_link.name == "nvme-gen4-x4"


@pytest.mark.parametrize("name", SYSTEMS)
def test_systems_are_consistent(name):
    system = hardware.load_component(name, "system")
    assert system.gpu_count >= 1
    if system.gpu_count > 1:   # NVLink, PCIe on cards without it (L40S, RTX PRO 6000), AMD's xGMI full mesh
        assert system.gpu_link is not None and system.gpu_link.type in ("nvlink", "pcie", "xgmi"), name
        if system.gpu_link.type == "xgmi":   # a full mesh: one direct link to each peer, no switch
            assert system.gpu_link.mesh_links == system.gpu_count - 1 and not system.gpu_link.nvswitch, name
        if system.gpu_link.type == "pcie":
            assert system.gpu.interconnect is None, f"{name}: its GPU has NVLink, use it"
    for tier in system.tiers:
        assert tier.path, name
        assert 0 < tier.bandwidth("h2d") <= min(link.bandwidth_for("h2d") for link in tier.path)


# ------------------------------------------------------------------ errors


def _write(tmp_path, text, name="bad.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


GOOD_LINK = """\
kind: link
name: my-link
type: pcie
bandwidth: {value: 10, unit: GB/s, provenance: assumed, source: "test"}
latency: {value: 1, unit: us, provenance: assumed, source: "test"}
"""


def test_valid_user_file_loads(tmp_path):
    link = hardware.load_component(_write(tmp_path, GOOD_LINK, "ok.yaml"), "link")
    assert link.bandwidth.value == pytest.approx(10e9)


def test_malformed_yaml_names_the_file(tmp_path):
    path = _write(tmp_path, "kind: link\nname: [unclosed\nbandwidth: {value: 1\n", "broken.yaml")
    with pytest.raises(WhatifError, match="broken.yaml") as exc:
        hardware.load_component(path)
    assert "malformed YAML" in str(exc.value)


def test_missing_source_names_the_field(tmp_path):
    text = GOOD_LINK.replace('bandwidth: {value: 10, unit: GB/s, provenance: assumed, source: "test"}',
                             "bandwidth: {value: 10, unit: GB/s, provenance: assumed}")
    with pytest.raises(WhatifError) as exc:
        hardware.load_component(_write(tmp_path, text, "nosource.yaml"))
    msg = str(exc.value)
    assert "nosource.yaml" in msg and "bandwidth" in msg and "source" in msg


def test_bad_unit_names_the_field(tmp_path):
    text = GOOD_LINK.replace("unit: GB/s", "unit: TB")
    with pytest.raises(WhatifError) as exc:
        hardware.load_component(_write(tmp_path, text, "badunit.yaml"))
    msg = str(exc.value)
    assert "badunit.yaml" in msg and "bandwidth" in msg and "'TB'" in msg and "GB/s" in msg


def test_unknown_name_suggests_the_closest():
    with pytest.raises(WhatifError, match=r"did you mean 'h100-sxm'\?"):
        hardware.load_component("h100-sxn")


def test_wrong_kind_is_reported():
    with pytest.raises(WhatifError, match="'nvlink-4' is a link, not a gpu"):
        hardware.load_component("nvlink-4", "gpu")


# ------------------------------------------------ GPUs without measurements, driver capacities


@pytest.mark.parametrize("name", sorted(DRIVER_MIB))
def test_capacity_is_what_the_driver_reports(name):
    """"80 GB" on a datasheet is 81,559 MiB (85.5e9 B) in nvidia-smi on an H100: the plan uses the latter."""
    q = hardware.load_component(name, "gpu").hbm_capacity
    assert q.value == DRIVER_MIB[name] * 2**20
    assert q.provenance == "measured" and "MiB" in q.source, q


def test_driver_capacity_exceeds_the_marketing_figure_where_it_should():
    # HBM parts expose more than their decimal-GB label (H100 80 GB -> 85.5e9 B); GDDR parts with
    # ECC carve-outs expose a little less (L40S 48 GB -> 48.3e9 B is still above; L4 24 GB -> 24.15e9).
    gib = {n: hardware.load_component(n, "gpu").hbm_capacity.value for n in ("h100-sxm", "h200-sxm", "b200")}
    assert gib["h100-sxm"] == pytest.approx(85.52e9, rel=1e-3)
    assert gib["h200-sxm"] == pytest.approx(150.76e9, rel=1e-3)
    assert gib["b200"] == pytest.approx(192.27e9, rel=1e-3)


def test_blackwell_ultra_ceilings():
    b300, gb300 = (hardware.load_component(n, "gpu") for n in ("b300", "gb300"))
    for gpu in (b300, gb300):
        assert gpu.arch == "blackwell" and "Blackwell Ultra" in gpu.description
        assert gpu.peak_flops("fp4") == pytest.approx(3 * gpu.peak_flops("fp8"))   # NVFP4 at 3x FP8
        assert gpu.peak_flops("fp64") < 2e12                                        # FP64 cut to ~1.3 TF
        with pytest.raises(WhatifError, match="int8.*valid"):                       # INT8 left out, one line
            gpu.peak_flops("int8")
    # nvidia-smi's totals (session 73 N), above the datasheets' 288 GB / ~279 GB: 288.4e9 and 298.0e9 B
    assert b300.hbm_capacity.value == pytest.approx(288.40e9, rel=1e-3)
    assert gb300.hbm_capacity.value == pytest.approx(298.01e9, rel=1e-3)


# Enabled SMs as the driver reports them on shipping parts (each profile cites its reports): not the full
# die's 160 (Blackwell Ultra), nor HGX B200's 148 for the Grace-Blackwell boards.
ENABLED_SMS = {"b200": 148, "b300": 148, "gb200": 152, "gb300": 152, "h100-sxm": 132, "h200-sxm": 132,
               "gh200-96gb": 132, "gh200-144gb": 132, "h20": 78, "rtx-pro-6000-server": 188}
# Dense BF16 FLOP a tensor-core SM does a clock (Hopper 4096, datacenter Blackwell 8192).
BF16_FLOP_PER_SM_CLOCK = {"hopper": 4096, "blackwell": 8192}
CLOCK_AT_PEAK = ["h100-sxm", "h200-sxm", "h200-nvl", "gh200-96gb", "gh200-144gb", "b200", "b300", "gb200", "gb300"]


@pytest.mark.parametrize("name", sorted(ENABLED_SMS))
def test_enabled_sm_counts(name):
    assert hardware.load_component(name, "gpu").sm_count.value == ENABLED_SMS[name]


@pytest.mark.parametrize("name", CLOCK_AT_PEAK)
def test_clock_is_the_one_at_the_datasheet_peak(name):
    """As on the calibration GPUs (H100 1830 MHz, B200 1856, below their nvidia-smi max 1980 / 1965): SMs x
    FLOP/clk x boost_clock is the datasheet's dense BF16 peak, so per-clock rates fitted there carry over."""
    gpu = hardware.load_component(name, "gpu")
    implied = gpu.sm_count.value * BF16_FLOP_PER_SM_CLOCK[gpu.arch] * gpu.boost_clock.value
    assert implied == pytest.approx(gpu.peak_flops("bf16"), rel=0.005)


def test_h20_is_memory_rich_and_compute_poor():
    h20, h100 = hardware.load_component("h20", "gpu"), hardware.load_component("h100-sxm", "gpu")
    assert h20.peak_flops("bf16") == pytest.approx(0.15 * h100.peak_flops("bf16"), rel=0.01)
    assert h20.hbm_bandwidth.value > h100.hbm_bandwidth.value
    # the measured GEMM sits just below the cited peak: the peak is dense, not a sparse figure
    assert 0.9 < h20.achievable["matmul_bf16"].value / h20.peak_flops("bf16") < 1


def test_nvl72_racks_are_one_nvlink_domain_with_grace_memory():
    for name in ("gb200-nvl72", "gb300-nvl72"):
        system = hardware.load_component(name, "system")
        assert system.gpu_count == 72 and system.gpu_link.name == "nvlink-5"
        assert system.gpu.host_link.name == "nvlink-c2c-gb200"
        (grace,) = system.tiers
        assert grace.tier.technology == "lpddr5x" and grace.count == 36 and not grace.per_gpu
        # all 72 GPUs streaming: each gets half a Grace (240 GB) and its share of the C2C (225 GB/s)
        assert grace.capacity / 72 == pytest.approx(240e9)
        assert grace.bandwidth("h2d", sharing_gpus=72) == pytest.approx(225e9)


@pytest.mark.parametrize("name", NEW_SYSTEMS)
def test_estimate_runs_on_each_new_system(capsys, name):
    from whatif.cli import main

    rc = main(["estimate", "--model", "llama-3-8b", "--hardware", name, "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    result = json.loads(out)
    assert result["memory"]["fits"] is True
    system = hardware.load_component(name, "system")
    # the default engine sizes its pool from the CUDA runtime's total where one is sourced (session 73 N: b300, gb200,
    # gb300, h20, l40s), else from hbm_capacity
    assert result["memory"]["capacity_bytes"] == pytest.approx(system.gpu.engine_capacity_bytes)


def test_nvlink_bridged_pairs_meet_over_pcie():
    """An NVLink bridge joins a pair of PCIe cards: with more GPUs the pairs meet over each GPU's PCIe link (the
    multi-node path: NVLink inside a domain of 2, the host link between domains); two GPUs stay on the bridge."""
    pair = hardware.load_system("a100-pcie-80gb", 2).gpu_link
    four = hardware.load_system("a100-pcie-80gb", 4).gpu_link
    assert pair.domain_gpus == 2 and pair.scale_out is None
    assert four.domain_gpus == 2 and four.scale_out.name == "pcie-gen4-x16"
    assert hardware.load_system("dgx-a100-80gb").gpu_link.scale_out is None   # NVSwitch: one domain
