"""--nodes N: N of a one-node system profile (DGX/HGX H100, H200, B200, B300) composed into one system.

NVLink joins the GPUs of a node; between nodes each GPU has its share of the node's NICs, the profile's
node_link x nics_per_node (a DGX has one 400 Gb/s ConnectX-7 per GPU). A collective whose group spans
nodes is priced in NCCL's hierarchical form (roofline/kernel_models/collectives_multinode.py). Racks
(an NVL72 is one NVLink domain) are their own profiles and are not composed.
"""
from __future__ import annotations

from dataclasses import replace
from functools import cache

from ..errors import WhatifError
from .checks import MAX_GPUS, integer
from .hardware import System, kind_of, list_components, load_component, load_system
from .scale_out import nic_share


def compose_nodes(system: System, nodes: int) -> System:
    """`nodes` of the one-node `system` as one multi-node system (--nodes N): NVLink inside each node, each GPU's
    share of its node's NICs (the profile's node_link x nics_per_node) between them; host-memory tiers per node."""
    integer(nodes, "--nodes", 1, MAX_GPUS, "nodes")
    if nodes == 1:
        return system
    if system.nodes > 1:
        raise WhatifError(f"--nodes: '{system.name}' is already {system.nodes} nodes; name its one-node profile "
                          f"(valid: {', '.join(node_profiles())})")
    if system.node_link is None or system.gpu_link is None:
        raise WhatifError(f"--nodes: '{system.name}' has no NIC profile to join nodes with (a rack such as an NVL72 "
                          f"is its own profile, one NVLink domain, not composed); valid node profiles: "
                          f"{', '.join(node_profiles())}")
    per = system.gpu_count
    nic = nic_share(system.node_link, system.nics_per_node or per, per)
    price = system.price_per_hour
    if price is not None:
        price = replace(price, value=price.value * nodes, provenance="derived",
                        source=f"{nodes} x {price.describe()}")
    return replace(system, name=f"{nodes}x {system.name}",
                   description=f"{nodes} x {system.description}; between nodes {system.nics_per_node or per}x "
                               f"{system.node_link.name} per node",
                   gpu_count=per * nodes, gpus_per_node=per,
                   gpu_link=replace(system.gpu_link, domain_gpus=per, scale_out=nic),
                   tiers=tuple(t if t.per_gpu else replace(t, count=t.count * nodes) for t in system.tiers),
                   price_per_hour=price)


@cache
def node_profiles() -> tuple[str, ...]:
    """The shipped one-node systems with NICs: what --nodes composes."""
    out = []
    for name in list_components("system"):
        comp = load_component(name, "system")
        if comp.nodes == 1 and comp.node_link is not None:
            out.append(name)
    return tuple(out)




def load_nodes(name: str, nodes: int | None, gpus: int | None = None) -> System:
    """load_system of `name`, `nodes` of it when given (the GPUs used: `gpus`, as load_system)."""
    if nodes is None or nodes == 1:
        return load_system(name, gpus)
    comp = load_component(name, None, "--hardware")
    if not isinstance(comp, System):
        raise WhatifError(f"--nodes: '{name}' is a {kind_of(comp)}, not a node; name a node profile "
                          f"(valid: {', '.join(node_profiles())})")
    return load_system(name, gpus, compose_nodes(comp, nodes))
