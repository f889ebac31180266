"""Collectives over a group that spans nodes (NVLink domains joined by NICs): NCCL's hierarchical form.

On a multi-node system the GPU link joins `domain_gpus` GPUs (one node); GPUs of different nodes
meet over `scale_out`, each GPU's own NIC (or its share of the node's NICs). A group of n GPUs on N
nodes, g = n/N of them in each, runs as NCCL does across nodes (tree / NVLSTree: reduce inside the
node, cross the network with 1/g of the data per GPU, broadcast inside the node; NCCL maintainers,
github.com/NVIDIA/nccl-tests/issues/196):

  all-reduce:      NVLink: reduce-scatter(S, g) + all-gather(S, g);  NIC: all-reduce(S/g, N)
  all-gather:      NVLink: all-gather(S, g);                         NIC: all-gather(S/g, N)
  reduce-scatter:  NVLink: reduce-scatter(S, g);                     NIC: reduce-scatter(S/g, N)
  all-to-all:      NVLink: all-to-all(S/N, g);                       NIC: all-to-all(S, N)
                   (each GPU sends (n-g)/n of its buffer off the node, (g-1)/n inside it)
  send/recv:       NIC: one message of S

NCCL pipelines the NVLink and NIC legs chunk by chunk, and they use different wires, so

  t = max(T_nvlink, T_nic) + min(F_nvlink, F_nic)

where T is a leg's time and F its fixed (latency) part: large messages run at the slower resource,
small ones pay both legs' latencies. Each leg is priced by `leg(kind, collective, bytes, gpus)`: the
fitted NCCL model of the node's link, and NCCL over the NIC (network.py) for the network.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from functools import lru_cache

from . import collectives as coll
from . import two_node_allreduce as two_node

CACHE_SIZE = 1 << 14
TINY = 1.0   # bytes: a leg's fixed (latency) part is its time for a 1-byte message


def group_layout(first_rank: int, stride: int, gpus: int, domain_gpus: int) -> tuple[int, int]:
    """(nodes, GPUs per node) the ranks first_rank + i * stride (i < gpus) span, nodes of `domain_gpus`
    ranks each (consecutive ranks fill a node first, as engines place TP groups); the fullest node
    sets the NVLink legs."""
    per_node = Counter((first_rank + i * stride) // domain_gpus for i in range(gpus))
    return len(per_node), max(per_node.values())


def spans_nodes(shape, link) -> bool:
    """Whether the collective `shape` (a CommShape) crosses a node boundary of `link`'s fabric."""
    if link is None or link.scale_out is None or not link.domain_gpus or shape.gpus <= 1:
        return False
    return group_layout(shape.first_rank, shape.stride, int(shape.gpus), link.domain_gpus)[0] > 1


def legs(collective: str, nbytes: float, nodes: int, per_node: int) -> tuple[list, list]:
    """(NVLink legs, NIC legs) of one collective, each (collective, bytes, gpus), by the table above."""
    s = nbytes
    if collective == "send_recv":
        return [], [("send_recv", s, 2)]
    if collective == "all_reduce":
        return [("reduce_scatter", s, per_node), ("all_gather", s, per_node)], [("all_reduce", s / per_node, nodes)]
    if collective in ("all_gather", "reduce_scatter"):
        return [(collective, s, per_node)], [(collective, s / per_node, nodes)]
    if collective == "all_to_all":
        return [("all_to_all", s / nodes, per_node)], [("all_to_all", s, nodes)]
    raise ValueError(f"unknown collective {collective}")


def hierarchical_seconds(collective: str, nbytes: float, nodes: int, per_node: int, leg) -> float:
    """Seconds of a collective over `nodes` nodes x `per_node` GPUs; `leg(kind, collective, bytes, gpus)`
    prices one leg on 'nvlink' (the node's link) or 'nic' (the scale-out link)."""
    if nbytes <= 0:
        return 0.0
    nvl, nic = legs(coll.canonical_collective(collective) if collective != "send_recv" else collective,
                    nbytes, nodes, per_node)

    def total(kind, parts, tiny=False):
        return sum(leg(kind, op, TINY if tiny else b, n) for op, b, n in parts if n > 1)
    t_nvl, t_nic = total("nvlink", nvl), total("nic", nic)
    f_nvl, f_nic = total("nvlink", nvl, True), total("nic", nic, True)
    return max(t_nvl, t_nic) + min(f_nvl, f_nic)


def collective_seconds(collective: str, nbytes: float, shape, link, engine: str, nvls: bool = True) -> float:
    """Seconds of the collective `shape` describes on a multi-node fabric `link`, NCCL in both legs
    (the engines' custom all-reduce kernels need one NVLink domain). `nvls` False (the engine runs NCCL with
    NVLS off): an all-reduce over two nodes is the node's own plus the measured second node (two_node_allreduce.py)."""
    nodes, per_node = group_layout(shape.first_rank, shape.stride, int(shape.gpus), link.domain_gpus)
    nic = link.scale_out
    return _seconds(collective, float(nbytes), nodes, per_node, _link_key(link), _link_key(nic), engine, nvls)


def _link_key(link) -> tuple:
    return (link.name, link.type, link.bandwidth.value, link.latency.value, link.nvswitch)


@lru_cache(maxsize=CACHE_SIZE)
def _seconds(collective, nbytes, nodes, per_node, nvlink, nic, engine, nvls=True) -> float:
    params = {"nvlink": coll.collective_params(nvlink[0], engine, described=(nvlink[1], nvlink[2]))[0],
              "nic": coll.collective_params(nic[0], engine, described=(nic[1], nic[2]))[0]}
    links = {"nvlink": nvlink, "nic": nic}

    def leg(kind, op, b, n):
        _, _, bw, lat, nvswitch = links[kind]
        p = params[kind]
        if op == "send_recv":   # one-way copy at the Simple protocol's terms
            simple = p.protocols["Simple"]
            return simple.base_s + simple.step_lat * lat + b / (bw * simple.bw_eff)
        return float(coll.nccl_time(op, b, n, bw, lat, nvswitch, p))
    if not nvls and nodes == 2 and nbytes > 0 and coll.canonical_collective(collective) == "all_reduce":
        params["nvlink"] = replace(params["nvlink"], nvls=False)   # NCCL_NVLS_ENABLE=0: no in-switch reduction
        nic_wire = leg("nic", "all_reduce", nbytes / per_node, nodes) - leg("nic", "all_reduce", TINY, nodes)
        return two_node.seconds(nbytes, leg("nvlink", "all_reduce", nbytes, per_node), nic_wire)
    return hierarchical_seconds(collective, nbytes, nodes, per_node, leg)
