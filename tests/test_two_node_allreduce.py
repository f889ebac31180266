"""An all-reduce over two nodes with NCCL's NVLS off (kernel_models/two_node_allreduce.py): the node's own
all-reduce, the measured second node's excess (data/two_node_allreduce.yaml) and the NICs' wire time; the engine
profile that turns it on (collectives.multinode_nvls) and its checks."""
from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

import pytest

from whatif.errors import WhatifError
from whatif.roofline.comm import comm_op
from whatif.roofline.efficiency import load_efficiency
from whatif.roofline.kernel_models import two_node_allreduce as two_node
from whatif.roofline.timing import time_op
from whatif.specs.engines import ENGINE_DIR, engine_from_mapping, engine_mapping, load_engine
from whatif.specs.hardware import load_system
from whatif.specs.nodes import load_nodes

VIDUR = Path(__file__).resolve().parents[2] / "shared" / "reference" / "vidur-profiling" / "network" / "a100_dgx"


def collective_s(system, op, nbytes, gpus, nvls=True):
    eff = replace(load_efficiency("default", system.gpu, engine="trtllm"), multinode_nvls=nvls)
    return time_op(comm_op("c", op, float(nbytes), gpus, 1), system.gpu, eff, system.gpu_link).time_s


def test_nvls_off_prices_the_measured_second_node_over_two_nodes():
    ib = load_system("2x-dgx-h100-ib")
    for nbytes in (16 * 7168 * 2, 64 * 7168 * 2):   # a TP16 decode step's all-reduce at 16 and 64 tokens
        on, off = collective_s(ib, "all_reduce", nbytes, 16), collective_s(ib, "all_reduce", nbytes, 16, False)
        rest = off - two_node.excess_s(nbytes)   # the node's own all-reduce and the NICs' wire time
        assert off > 2 * on and 5e-6 < rest < on
    # the excess grows with the message up to the table's last knot, then stays flat (the NICs' wire time grows)
    assert two_node.excess_s(2**17) < two_node.excess_s(2**19) < two_node.excess_s(2**20) == two_node.excess_s(2**22)


def test_nvls_off_leaves_one_node_other_collectives_and_more_nodes_alone():
    ib, dgx = load_system("2x-dgx-h100-ib"), load_system("dgx-h100")
    assert collective_s(dgx, "all_reduce", 2**18, 8, False) == collective_s(dgx, "all_reduce", 2**18, 8)
    assert collective_s(ib, "all_gather", 2**18, 16, False) == collective_s(ib, "all_gather", 2**18, 16)
    four = load_nodes("dgx-h100", 4, 32)   # (no measured 4-node rows: the hierarchical form stays)
    assert collective_s(four, "all_reduce", 2**18, 32, False) == collective_s(four, "all_reduce", 2**18, 32)


def test_engine_profiles_say_whether_nccl_may_use_nvls():
    assert load_engine("trtllm").multinode_nvls is True
    spec = load_engine("trtllm-nvls-off")
    assert spec.multinode_nvls is False and spec.kernel_fits == "trtllm"
    assert "NCCL_NVLS_ENABLE" in spec.sources["collectives.multinode_nvls"]


def test_a_bad_multinode_nvls_names_its_field():
    data = copy.deepcopy(engine_mapping(ENGINE_DIR / "trtllm.yaml"))
    data["collectives"]["multinode_nvls"] = {"value": "sometimes", "unit": "bool", "provenance": "assumed",
                                             "source": "x"}
    with pytest.raises(WhatifError, match="collectives.multinode_nvls"):
        engine_from_mapping(data, "trtllm")


@pytest.mark.skipif(not (VIDUR / "all_reduce.csv").exists(), reason="the shared reference data is not here")
def test_the_table_is_the_vidur_measurement_less_its_wire_time():
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import two_node_allreduce as script
    rows, busbw = script.increments(VIDUR / "all_reduce.csv"), script.bus_bandwidth(VIDUR / "all_reduce.csv")
    assert busbw == pytest.approx(17.4e9, rel=0.02)
    for (nbytes, _, _, inc), (b, s) in zip(rows, two_node.table()[1]):
        assert nbytes == b and s == pytest.approx(inc - script.wire_s(nbytes, busbw), rel=1e-3)
