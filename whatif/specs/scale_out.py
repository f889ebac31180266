"""How GPUs meet beyond the link that joins them all: NVLink-bridged pairs over PCIe, nodes over shared NICs.

A system's gpu_link may join only a few of its GPUs (a bridge: `domain_gpus`) and a multi-node system's nodes meet
over their NICs; each function returns the Link one GPU sees for that scale-out hop (a Link with `scale_out`, or a
NIC's per-GPU share), which the collective models price as they price a multi-node hop.
"""
from __future__ import annotations

from dataclasses import replace


def bridged(link, host_link, gpus: int):   # (hardware.Link in and out: hardware.py imports this module)
    """A link that joins `domain_gpus` GPUs only (an NVLink bridge: a pair) among more GPUs: the groups meet over
    each GPU's host link (PCIe), as the nodes of a multi-node system meet over their NICs (the NVLink bridge
    joins 2 GPUs: NVIDIA A100 / H100 PCIe datasheets; e.g. Azure NC96ads A100 v4's nvidia-smi topo: NV12 within
    each pair, SYS between them). Within the domain, or without a host link, the link is unchanged."""
    if link is None or not link.domain_gpus or link.scale_out is not None or gpus <= link.domain_gpus \
            or host_link is None:
        return link
    return replace(link, scale_out=host_link)


def nic_share(nic, nics: int, gpus: int):   # (a hardware.Link in and out)
    """The scale-out link one GPU sees: one NIC when each GPU has its own (rail-optimized DGX/HGX
    nodes), else nics/gpus of one NIC's bandwidth (NCCL spreads a node's traffic over all its NICs)."""
    if nics == gpus:
        return nic
    share = nics / gpus
    bw = replace(nic.bandwidth, value=nic.bandwidth.value * share,
                 source=f"{nics} NICs per {gpus} GPUs x {nic.bandwidth.describe()}", provenance="derived")
    return replace(nic, name=f"{nic.name} x{nics}/{gpus}", bandwidth=bw, bandwidth_h2d=None, bandwidth_d2h=None)
