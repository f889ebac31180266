"""Multi-node systems: nodes of NVLink GPUs joined by NICs (2x-dgx-h100-ib), the hierarchical collective
model of kernel_models/collectives_multinode.py, and where a pass's comm ops run."""
from __future__ import annotations

import pytest

from whatif.errors import WhatifError
from whatif.roofline.comm import comm_op
from whatif.roofline.efficiency import load_efficiency
from whatif.roofline.kernel_models import collectives as coll
from whatif.roofline.kernel_models import collectives_multinode as mn
from whatif.roofline.kernel_models import network
from whatif.roofline.timing import time_op
from whatif.specs.hardware import load_system, parse_component

MB8 = 8 * 2**20


@pytest.fixture(scope="module")
def ib():
    return load_system("2x-dgx-h100-ib")


def allreduce_s(system, nbytes, gpus, source="default"):
    eff = load_efficiency(source, system.gpu)
    return time_op(comm_op("ar", "all_reduce", float(nbytes), gpus, 1), system.gpu, eff, system.gpu_link).time_s


def send_s(system, nbytes, first_rank, stride, source="default"):
    eff = load_efficiency(source, system.gpu)
    op = comm_op("pp_send", "send_recv", float(nbytes), 2, 1, None, first_rank, stride)
    return time_op(op, system.gpu, eff, system.gpu_link).time_s


def test_profile_loads_with_its_node_structure(ib):
    assert (ib.gpu_count, ib.nodes, ib.gpus_per_node, ib.nics_per_node) == (16, 2, 8, 8)
    assert ib.gpu_link.name == "nvlink-4" and ib.gpu_link.domain_gpus == 8
    nic = ib.gpu_link.scale_out
    assert nic.type == "network" and nic.bandwidth.value == pytest.approx(50e9)   # 400 Gb/s per GPU
    assert load_system("2x-dgx-b200-ib").gpu_link.scale_out.name == "rdma-400g"
    assert load_system("dgx-h100").gpu_link.scale_out is None                     # one node: unchanged


def test_group_layout_follows_consecutive_ranks():
    assert mn.group_layout(0, 1, 8, 8) == (1, 8)      # TP8 inside node 0
    assert mn.group_layout(8, 1, 8, 8) == (1, 8)      # TP8 of the second stage, inside node 1
    assert mn.group_layout(0, 1, 16, 8) == (2, 8)     # TP16 across both nodes
    assert mn.group_layout(0, 8, 2, 8) == (2, 1)      # PP send of TP8: rank 0 -> rank 8
    assert mn.group_layout(0, 4, 2, 8) == (1, 2)      # PP send of TP4: rank 0 -> rank 4, same node


def test_16_gpu_allreduce_within_physical_bounds(ib):
    """Each node must send 2(N-1)/N x S across nodes (N = 2: S) over its 8 NICs at line rate: a floor no
    algorithm beats. The model must also stay within a sane multiple of it (plus NCCL's latencies)."""
    t = allreduce_s(ib, MB8, 16)
    nodes, nics, line = 2, 8, ib.gpu_link.scale_out.bandwidth.value
    floor = 2 * (nodes - 1) / nodes * MB8 / (nics * line)
    assert floor < t < 8 * floor + 100e-6
    assert t > allreduce_s(ib, MB8, 8)                   # crossing nodes costs more than staying in one
    assert t < 2e-3                                      # not the PCIe fit's 31.5 ms of before


def test_large_allreduce_bound_by_the_slower_resource(ib):
    s = 1 << 30
    t = allreduce_s(ib, s, 16)
    nic_floor = s / 8 / 50e9                  # each GPU's own NIC carries S/g = S/8 (2 nodes) at line rate
    assert t >= nic_floor and t >= allreduce_s(ib, s, 8) * 0.9
    assert t < 4 * max(nic_floor, allreduce_s(ib, s, 8))


def test_pp_send_over_the_nic_costs_more_than_over_nvlink(ib):
    """A prefill-sized activation (2048 tokens x 16384 x 2 B) and a decode step's (one token): rank 0 -> 8
    crosses the NIC, 0 -> 4 does not (a small copy takes NCCL's cheapest protocol on either link)."""
    nbytes = 2048 * 16384 * 2
    across, inside = send_s(ib, nbytes, 0, 8), send_s(ib, nbytes, 0, 4)
    assert across > inside
    assert send_s(ib, 16384 * 2, 0, 8) > send_s(ib, 16384 * 2, 0, 4)
    assert across >= nbytes / ib.gpu_link.scale_out.bandwidth.value   # never above the NIC's line rate
    for source in ("ideal",):
        assert send_s(ib, nbytes, 0, 8, source) > send_s(ib, nbytes, 0, 4, source)


def test_network_link_no_longer_borrows_the_pcie_fit():
    nccl, engine, prov = coll.collective_params("rdma-400g")
    assert "pcie" not in prov and "assumed" in prov
    assert nccl.protocols["Simple"].bw_eff == network.NET_BW_EFF and not nccl.nvls
    t = coll.collective_time("all_reduce", MB8, 16, 50e9, 5e-6, False, nccl, engine)
    ring_floor = 2 * 15 / 16 * MB8 / 50e9         # a flat ring, one 400 Gb/s NIC per GPU
    assert ring_floor < t < 3 * ring_floor


def test_hierarchical_form_pipelines_legs_and_pays_both_latencies():
    """t = max(NVLink legs, NIC legs) + min(their fixed parts): with legs of 10 us (NVLink) and 20 us (NIC)
    fixed cost and 1 ps per byte, a small all-reduce pays 2 x 10 + 20 us, a large one the NVLink legs' time
    plus the smaller fixed part."""
    def leg(kind, op, nbytes, gpus):
        return (10e-6 if kind == "nvlink" else 20e-6) + nbytes * 1e-12
    assert mn.hierarchical_seconds("all_reduce", 1.0, 2, 8, leg) == pytest.approx(40e-6, rel=1e-3)
    big = mn.hierarchical_seconds("all_reduce", 1e9, 2, 8, leg)
    assert big == pytest.approx(2 * (10e-6 + 1e-3) + 20e-6, rel=1e-3)
    assert mn.hierarchical_seconds("send_recv", 1e9, 2, 1, leg) == pytest.approx(20e-6 + 1e-3, rel=1e-3)
    assert mn.hierarchical_seconds("all_reduce", 0.0, 2, 8, leg) == 0.0


@pytest.mark.parametrize("weights", ["bf16", "fp8"])
def test_405b_tp8_pp2_estimate_runs_on_two_nodes(weights):
    from whatif.api import estimate
    r = estimate(model="llama-3.1-405b", hardware="2x-dgx-h100-ib", tp=8, pp=2, batch=8, prompt=2048,
                 output=256, weight_dtype=weights)
    assert r.fits
    sends = [t for p, _ in r.prefill for t in p.op_times if t.op.name == "pp_send"]
    assert sends and sends[0].time_s > sends[0].op.bytes["link"] / 50e9   # over the NIC, not NVLink
    assert 0 < r.ttft_s < 60 and 0 < r.tpot_s < 1


def test_node_fields_are_checked():
    base = {"kind": "system", "name": "x", "gpu": "h100-sxm", "gpu_count": 16, "gpu_link": "nvlink-4"}
    with pytest.raises(WhatifError, match=r"x\.nodes: 3 does not divide gpu_count 16"):
        parse_component({**base, "nodes": 3, "node_link": "rdma-400g"}, "x")
    with pytest.raises(WhatifError, match=r"x\.node_link: missing"):
        parse_component({**base, "nodes": 2}, "x")
    with pytest.raises(WhatifError, match=r"x\.node_link: 'nvlink-4' is a nvlink link"):
        parse_component({**base, "nodes": 2, "node_link": "nvlink-4"}, "x")
    with pytest.raises(WhatifError, match=r"x\.node_link: missing"):
        parse_component({**base, "nics_per_node": 8}, "x")
    one = parse_component({**base, "node_link": "rdma-400g"}, "x")   # one node: the NICs --nodes N joins over
    assert one.nodes == 1 and one.gpu_link.scale_out is None and one.node_link.name == "rdma-400g"
    with pytest.raises(WhatifError, match=r"x\.nics_per_node"):
        parse_component({**base, "nodes": 2, "node_link": "rdma-400g", "nics_per_node": 0}, "x")
    half = parse_component({**base, "nodes": 2, "node_link": "rdma-400g", "nics_per_node": 4}, "x")
    assert half.gpu_link.scale_out.bandwidth.value == pytest.approx(25e9)   # 4 NICs shared by 8 GPUs
