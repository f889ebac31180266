"""An NCCL all-reduce across two nodes without NVLink SHARP: the node's own all-reduce plus the second node's cost.

Where NCCL may not reduce in the NVSwitch (NVLS: NCCL_NVLS_ENABLE=0, as the srt-slurm H100 TensorRT-LLM decode
recipes set it; A100 has none), NCCL has no NVLSTree and crosses the nodes by its Ring / Tree algorithms, whose
small-message path the hierarchical form (collectives_multinode.py: one all-reduce of S/g over the NICs) prices at a
few microseconds. The second node's measured excess is added instead (data/two_node_allreduce.yaml: vidur-profiling's
A100 DGX NCCL all-reduce, 16 GPUs on two nodes less 8 on one, by size, less that fabric's own wire time at its
large-message bus bandwidth; benchmarks/two_node_allreduce.py), flat beyond its largest knot (1 MiB), beside the
node's own all-reduce without NVLS and the priced system's NICs' wire time (the NIC leg less its fixed part):

  t(S) = t_node(S) + excess(min(S, S_max)) + t_nic_wire(S)

Assumed: the excess (the increment is 4x that fabric's wire time at 1 MiB, 50x at 8 KiB) is NCCL's small-message
cross-node path rather than its NICs, so it holds on other two-node fabrics (none measured here).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "two_node_allreduce.yaml"


@lru_cache(maxsize=1)
def table() -> tuple[int, tuple[tuple[float, float], ...]]:
    """(largest measured bytes, ((bytes, seconds the second node adds beyond its wire time), ...)) from the data."""
    from ...specs.profiles import read_yaml
    data = read_yaml(DATA)
    return int(data["max_bytes"]), tuple((float(b), float(s)) for b, s in data["knots"])


def excess_s(nbytes: float) -> float:
    """Seconds the second node adds to an all-reduce of `nbytes` beyond its NICs' wire time (linear between
    knots, flat outside them)."""
    _, knots = table()
    if nbytes <= knots[0][0]:
        return knots[0][1]
    for (b0, s0), (b1, s1) in zip(knots, knots[1:]):
        if nbytes <= b1:
            return s0 + (s1 - s0) * (nbytes - b0) / (b1 - b0)
    return knots[-1][1]


def seconds(nbytes: float, node_s: float, nic_wire_s: float) -> float:
    """The two-node all-reduce of `nbytes`: the node's own all-reduce (`node_s`, NVLS off), the measured second
    node's excess (flat beyond the table's largest size) and the NICs' wire time (`nic_wire_s`)."""
    max_bytes, _ = table()
    return node_s + excess_s(min(nbytes, max_bytes)) + nic_wire_s
