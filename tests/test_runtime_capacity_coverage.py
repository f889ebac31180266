"""Every GPU profile either carries the CUDA runtime's memory total (`runtime_capacity`, what vLLM, SGLang and
TensorRT-LLM size their KV pool from) or says here why it does not, so a new serving GPU cannot silently size its
pool from nvidia-smi's or a datasheet's larger figure (session 70 P, session 73 N, Q)."""
import pytest

from whatif.specs import hardware

GIB = 2 ** 30

# GPUs without a sourced runtime total, and why. Sourcing one (a torch "total capacity of X GiB" OOM line or a vLLM
# "total_gpu_memory (X GiB)" line that names the part) moves the GPU out of this table.
NOT_SOURCED = {
    "h100-pcie": "no public runtime total naming the PCIe board found (nvidia-smi's 81559 MiB is the SXM's; its 79.11 "
                 "GiB runtime total is not carried across boards)",
    "rtx-pro-6000-server": "no public runtime total naming the Server Edition found (94.97 GiB on 'Blackwell "
                           "95 GB' cards names neither edition)",
    "gh200-96gb": "no public runtime total naming the part found; nvidia-smi's 97871 MiB is used",
    "gh200-144gb": "neither a driver nor a runtime total found (a fake-driver test's 153008209920 B is not a "
                   "readout); the capacity is still the datasheet's 144 GB",
}
# ROCm GPUs whose hbm_capacity is already the total torch reports on ROCm (rocm-smi's VRAM total: ROCm keeps no
# driver reservation out of it, MI300X 206141652992 B = 191.98 GiB in both), so no separate runtime total exists.
ROCM_TOTAL_IS_THE_RUNTIME_TOTAL = {"mi300x", "mi325x", "mi355x", "mi350x"}
GPUS = hardware.list_components("gpu")


@pytest.mark.parametrize("name", GPUS)
def test_each_gpu_has_a_runtime_total_or_a_stated_reason(name):
    gpu = hardware.load_component(name, "gpu")
    if gpu.runtime_capacity is None and name in ROCM_TOTAL_IS_THE_RUNTIME_TOTAL:
        assert gpu.vendor == "amd" and gpu.hbm_capacity.provenance == "measured", gpu.hbm_capacity
    elif gpu.runtime_capacity is None:
        assert len(NOT_SOURCED.get(name, "")) > 20, f"{name}: add runtime_capacity (sourced) or a reason to NOT_SOURCED"
    else:
        assert name not in NOT_SOURCED, f"{name} now has a runtime_capacity: drop its NOT_SOURCED entry"
        q = gpu.runtime_capacity
        assert q.provenance == "measured" and "runtime" in q.source, q
        assert f"{q.value / GIB:.2f} GiB" in q.source or f"{q.value / GIB:.2f}GiB" in q.source, "quote the logged line"


@pytest.mark.parametrize("name", [n for n in GPUS if hardware.load_component(n, "gpu").runtime_capacity])
def test_the_runtime_total_sits_a_driver_reservation_below_nvidia_smi(name):
    """nvidia-smi's total less the driver's reserved memory: 0.31 GiB (A10) to 1.05 GiB (GB300) across the sourced
    parts, 947 MiB 'reserved' in GB300's own nvidia-smi capture. A gap outside 0.25-1.25 GiB means a datasheet or a
    different board's figure slipped in."""
    gpu = hardware.load_component(name, "gpu")
    assert gpu.hbm_capacity.provenance == "measured", f"{name}: runtime total beside a non-driver hbm_capacity"
    gap = (gpu.hbm_capacity.value - gpu.runtime_capacity.value) / GIB
    assert 0.25 <= gap <= 1.25, f"{name}: runtime total {gap:.2f} GiB below nvidia-smi's"


def test_the_held_out_gpus_size_their_pool_from_the_runtime_total():
    expected_gib = {"h200-sxm": 139.81, "gb200": 184.31, "b300": 267.69, "gb300": 276.50, "h20": 95.00,
                    "a100-sxm-80gb": 79.25, "a100-pcie-80gb": 79.15, "h100-nvl": 93.09, "a40": 44.42,
                    "rtx-4090": 23.64, "rtx-a6000": 47.40, "t4": 14.74, "l4": 22.03,
                    "mi325x": 255.98, "mi355x": 287.98,   # session 73 Q
                    "h200-nvl": 139.72, "mi350x": 287.98}   # session 73 S
    for name, gib in expected_gib.items():
        assert hardware.load_component(name, "gpu").engine_capacity_bytes / GIB == pytest.approx(gib), name
