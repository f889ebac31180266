"""What a run was measured on: the device, its clocks and driver, and the software versions.

`describe` reads torch's device properties and, where nvidia-smi answers, the clocks and driver (it reads them,
never sets them). `profile_for` maps the driver's device name to a whatif GPU profile.
"""
from __future__ import annotations

import platform
import subprocess
from datetime import datetime, timezone

from ..errors import WhatifError

# Substrings of torch.cuda.get_device_name() -> whatif GPU profile, most specific first.
PROFILES = (("GH200", "gh200-144gb"), ("H100 PCIe", "h100-pcie"), ("H100 NVL", "h100-nvl"), ("H100", "h100-sxm"),
            ("H200 NVL", "h200-nvl"),
            ("H200", "h200-sxm"), ("A100-SXM4-80GB", "a100-sxm-80gb"), ("A100 80GB PCIe", "a100-pcie-80gb"),
            ("A100-SXM4-40GB", "a100-sxm-40gb"), ("B200", "b200"), ("RTX 4090", "rtx-4090"), ("A10", "a10"))
SMI_FIELDS = ("driver_version", "clocks.sm", "clocks.max.sm", "clocks.mem", "clocks.max.mem", "power.limit",
              "temperature.gpu", "persistence_mode")


def profile_for(device_name: str) -> str:
    for needle, profile in PROFILES:
        if needle in device_name:
            return profile
    raise WhatifError(f"--gpu: no whatif profile matches the device '{device_name}'; name one with --gpu "
                      f"(`whatif list hardware` lists them)")


def nvidia_smi() -> dict:
    """The fields of SMI_FIELDS for GPU 0 as nvidia-smi reports them; {} where it is missing or fails."""
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader", "-i", "0"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    values = [v.strip() for v in out.strip().split(",")]
    return dict(zip(SMI_FIELDS, values)) if len(values) == len(SMI_FIELDS) else {}


def describe(device: str) -> dict:
    """The device record written beside a measurement table."""
    import torch
    import triton
    record = {"date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "host": platform.node(),
              "python": platform.python_version(), "torch": torch.__version__, "triton": triton.__version__}
    if device == "cpu":
        return {**record, "name": "cpu (Triton interpreter)", "note": "a dry run: CPU times of the interpreter, "
                "not a measurement of any GPU; never used for calibration"}
    props = torch.cuda.get_device_properties(0)
    return {**record, "name": props.name, "capability": f"{props.major}.{props.minor}",
            "sm_count": props.multi_processor_count, "memory_bytes": props.total_memory,
            "l2_bytes": getattr(props, "L2_cache_size", None), "cuda": torch.version.cuda,
            "nvidia_smi": nvidia_smi()}
