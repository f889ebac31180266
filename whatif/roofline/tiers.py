"""Memory tiers as one GPU sees them: the path to each (bandwidth per direction, latency, capacity),
and what-if edits of a system's tiers (extra expanders, another host link).

A tier's bandwidth to a GPU is the slowest of its devices (shared by the GPUs using the pool) and
every link of its path; its latency is the path's plus the device's; its capacity is the GPU's share.
"""
from __future__ import annotations

from dataclasses import replace

from ..errors import WhatifError, closest
from ..specs.checks import integer
from ..specs.hardware import MAX_TIER_DEVICES, Link, System, TierAttachment, load_component
from .context import HostPath

HBM = "hbm"
HOST = "host"   # alias: the system's first tier


def tier_path(t: TierAttachment, gpus: int) -> HostPath:
    share = 1 if t.per_gpu else max(1, gpus)
    via = " -> ".join(link.name for link in t.path)
    return HostPath(f"{t.tier.name} x{t.count} via {via}", t.bandwidth("h2d", gpus),
                    sum(link.latency.value for link in t.path) + t.tier.latency.value,
                    bandwidth_d2h=t.bandwidth("d2h", gpus), link=t.path[0].name, tier=t.tier.name,
                    capacity=t.capacity / share)


def tier_paths(system: System, gpus: int) -> dict[str, HostPath]:
    """Each tier of `system` by memory-profile name, as one of `gpus` GPUs streaming at once sees it."""
    return {t.tier.name: tier_path(t, gpus) for t in system.tiers}


# Host-to-GPU copies from pageable memory: the driver stages them through a pinned bounce buffer with the
# CPU, so the host's copy rate, not the link, bounds them. Measured: ~63 GB of a model's weights moved
# CPU->GPU by Tensor.to(device) from pageable memory in 7.5 s on one H20 (PCIe 5.0 x16) host
# (vllm-project/vllm-omni PR #5922, stage timing before pinning) = 8.4 GB/s achieved, an eighth of the link.
# One host's figure, taken for every host: an older, lower-clocked host CPU stages more slowly.
PAGEABLE_H2D_BYTES_PER_S = 63e9 / 7.5


def pageable_paths(paths: dict[str, HostPath], transfer_eff: float) -> dict[str, HostPath]:
    """`paths` as an engine copying from pageable host memory sees them: host-to-GPU at most the measured
    pageable rate (given to the path as rate / `transfer_eff`, so that after the pinned-copy efficiency every
    transfer applies it achieves the measured figure). GPU-to-host keeps the link's rate: no measurement of a
    pageable copy into an existing host buffer (Accelerate's offloaded weights only ever go host-to-GPU)."""
    cap = PAGEABLE_H2D_BYTES_PER_S / transfer_eff
    return {name: (p if p.bandwidth <= cap else
                   replace(p, name=f"{p.name} (pageable host memory)", bandwidth=cap, bandwidth_d2h=p.rate("d2h")))
            for name, p in paths.items()}


def host_path(system: System, gpus: int = 1) -> HostPath:
    """Where offloading techniques put bytes: the system's first tier, else host memory behind the
    GPU's host link (capacity unknown, so unchecked)."""
    if system.tiers:
        return tier_path(system.tiers[0], gpus)
    link = system.gpu.host_link
    return HostPath(f"host memory (size unknown, unchecked) via {link.name}", link.bandwidth_for("h2d"),
                    link.latency.value, bandwidth_d2h=link.bandwidth_for("d2h"), link=link.name)


def resolve_tier(name: str, system: System, where: str) -> str:
    """A tier's memory-profile name from what a user wrote: the profile name, its technology
    (ddr5, lpddr5x, cxl, nvme, ...) when one tier has it, or 'host' for the first tier."""
    names = [t.tier.name for t in system.tiers]
    if not names:
        # A bare GPU profile has host memory, but of unknown size: a plan there could not be checked.
        raise WhatifError(f"{where}: {system.name} is a bare GPU profile whose host memory size is unknown; use a "
                          f"system with memory tiers (e.g. dgx-h100, gh200-144gb-superchip, h100-pcie-host, "
                          f"h100-pcie-cxl) or add one with --add-tier MEMORY[:COUNT]")
    if name in names:
        return name
    if name == HOST:
        return names[0]
    by_tech = [t.tier.name for t in system.tiers if t.tier.technology == name]
    if len(by_tech) == 1:
        return by_tech[0]
    if by_tech:
        raise WhatifError(f"{where}: {len(by_tech)} tiers of {system.name} are {name} ({', '.join(by_tech)}); "
                          f"name one of them")
    valid = sorted({HOST, *names, *(t.tier.technology for t in system.tiers)})
    raise WhatifError(f"{where}: no tier '{name}' on {system.name}{closest(name, valid)}; valid: {', '.join(valid)}")


def add_tiers(system: System, specs: list[str]) -> System:
    """`system` with extra tier devices, each 'MEMORY[:COUNT]', attached behind the GPU's host link
    (a CXL expander or host DIMMs are reached through the host's PCIe root); devices of a tier the
    system already has join its pool."""
    tiers = list(system.tiers)
    for spec in specs:
        name, colon, count = str(spec).partition(":")
        tier = load_component(name, "memory", "--add-tier")
        n = integer(int(count) if count.isdigit() and len(count) < 8 else count if colon else 1,
                    f"--add-tier {spec}: COUNT", 1, MAX_TIER_DEVICES, "devices")   # 'cxl:' is an error, not 1
        same = next((i for i, t in enumerate(tiers) if t.tier.name == tier.name), None)
        if same is None:
            tiers.append(TierAttachment(tier, n, (system.gpu.host_link,)))
        else:   # more devices of a tier the system has: one larger pool
            tiers[same] = replace(tiers[same], count=tiers[same].count + n)
    return replace(system, tiers=tuple(tiers))


def with_host_link(system: System, link_name: str) -> System:
    """`system` with the GPU's host link replaced (e.g. PCIe Gen4 vs Gen5 vs NVLink-C2C): every tier
    path that starts at the old host link starts at the new one."""
    link: Link = load_component(link_name, "link", "--host-link")
    old = system.gpu.host_link.name
    tiers = tuple(replace(t, path=(link,) + t.path[1:]) if t.path[0].name == old else t for t in system.tiers)
    gpu = replace(system.gpu, host_link=link)
    return replace(system, gpu=gpu, tiers=tiers, name=f"{system.name} [host link {link.name}]")
