"""--nodes N: N of a node profile composed into one system, its NICs between nodes; the collectives of a group
inside one node stay on NVLink, a group across nodes crosses the NICs; the GPU budget follows the nodes."""
from __future__ import annotations

import pytest

import whatif
from whatif.errors import WhatifError
from whatif.roofline.kernel_models.collectives_multinode import spans_nodes
from whatif.specs.hardware import load_system
from whatif.specs.nodes import compose_nodes, load_nodes, node_profiles

MIXTRAL = dict(model="mixtral-8x7b", batch=16, prompt=1024, output=64, with_max_batch=False)


def test_node_profiles_name_their_nics():
    assert set(node_profiles()) >= {"dgx-h100", "hgx-h200", "dgx-b200", "hgx-b300"}
    six = load_nodes("dgx-h100", 6)
    assert (six.gpu_count, six.nodes, six.gpus_per_node) == (48, 6, 8)
    assert six.gpu_link.name == "nvlink-4" and six.gpu_link.domain_gpus == 8
    assert six.gpu_link.scale_out.name == "rdma-400g" and six.gpu_link.scale_out.bandwidth.value == pytest.approx(50e9)
    assert six.tiers[0].count == 6 * load_system("dgx-h100").tiers[0].count   # each node's host memory
    assert load_nodes("hgx-b300", 2).gpu_link.scale_out.bandwidth.value == pytest.approx(100e9)   # ConnectX-8
    assert load_system("dgx-h100").gpu_link.scale_out is None   # one node: nothing crosses a NIC


@pytest.mark.parametrize("hardware, message", [
    ("gb200-nvl72", "has no NIC profile"), ("h100-sxm", "is a gpu, not a node"),
    ("2x-dgx-h100-ib", "is already 2 nodes")])
def test_what_cannot_be_composed_is_refused(hardware, message):
    with pytest.raises(WhatifError, match=f"--nodes: .*{message}.*valid.*dgx-h100"):
        load_nodes(hardware, 2)


def test_two_composed_nodes_price_as_the_two_node_profile():
    """2 x dgx-h100 over their NICs is the shipped 2x-dgx-h100-ib system: the same estimate."""
    for layout in (dict(tp=16), dict(tp=8, pp=2, ep=8)):
        composed = whatif.estimate(hardware="dgx-h100", nodes=2, **layout, **MIXTRAL)
        shipped = whatif.estimate(hardware="2x-dgx-h100-ib", **layout, **MIXTRAL)
        assert composed.ttft_s == pytest.approx(shipped.ttft_s, rel=1e-9)
        assert composed.tpot_s == pytest.approx(shipped.tpot_s, rel=1e-9)


def test_a_group_inside_one_node_stays_on_nvlink():
    one = whatif.estimate(hardware="dgx-h100", tp=8, ep=8, **MIXTRAL)
    many = whatif.estimate(hardware="dgx-h100", nodes=4, tp=8, ep=8, **MIXTRAL)
    assert many.tpot_s == pytest.approx(one.tpot_s, rel=1e-9)
    wide = whatif.estimate(hardware="dgx-h100", nodes=2, tp=16, ep=8, **MIXTRAL)
    link = wide.system.gpu_link

    def op(e, name):
        return next(t for t in e.decode.op_times if t.op.name == name)
    # EP 8 of TP 16: each EP group is 8 consecutive ranks, one node; the all-reduce over 16 crosses the NICs
    assert spans_nodes(op(wide, "attn_allreduce").op.shape, link)
    assert not spans_nodes(op(one, "attn_allreduce").op.shape, link)


def test_the_gpu_budget_follows_the_nodes():
    with pytest.raises(WhatifError, match=r"more than the 8 GPUs of system 'dgx-h100'.*or --nodes N"):
        whatif.estimate(hardware="dgx-h100", tp=16, **MIXTRAL)
    with pytest.raises(WhatifError, match="more than the 16 GPUs"):
        whatif.estimate(hardware="dgx-h100", nodes=2, tp=32, **MIXTRAL)
    with pytest.raises(WhatifError, match="nodes"):
        whatif.estimate(hardware="dgx-h100", nodes=0, tp=8, **MIXTRAL)


def test_price_scales_with_the_nodes():
    base = load_system("dgx-h100")
    if base.price_per_hour is not None:
        assert compose_nodes(base, 3).price_per_hour.value == pytest.approx(3 * base.price_per_hour.value)


def test_cli_states_the_fabric(capsys):
    from whatif.cli import main
    code = main(["estimate", "--model", "mixtral-8x7b", "--hardware", "dgx-b200", "--nodes", "2", "--tp", "16",
                 "--batch", "4", "--no-ops"])
    out = capsys.readouterr().out
    assert code == 0 and "on 2x dgx-b200 (16 GPUs" in out
    assert "fabric: 2 nodes of 8 GPUs; inside a node nvlink-5, between nodes rdma-400g at 50 GB/s per GPU" in out


def test_kv_between_pools_on_different_nodes_crosses_the_nics():
    from whatif.simulator.iteration_time import kv_link_path
    two = load_nodes("dgx-h100", 2)
    assert kv_link_path(two, None, cluster_gpus=8).link == "nvlink-4"        # both pools inside one node
    assert kv_link_path(two, None, cluster_gpus=16).link == "rdma-400g"      # a pool on each node
    assert kv_link_path(load_system("dgx-h100"), None, cluster_gpus=8).link == "nvlink-4"


def test_simulate_replicas_count_all_the_nodes():
    from whatif.roofline.config import Parallelism
    from whatif.scenario import Scenario
    from whatif.simulator.cluster import check_fits
    from whatif.simulator.config import sim_config
    sc = Scenario(model="mixtral-8x7b", hardware="dgx-h100", nodes=2, parallel=Parallelism(tp=8))
    check_fits(sim_config(sc, {"cluster": {"replicas": 2}}))
    with pytest.raises(WhatifError, match="more than the 16 GPUs of system '2x dgx-h100'.*--nodes N"):
        check_fits(sim_config(sc, {"cluster": {"replicas": 3}}))
