"""A host-device sync in the eager launch queue (forward_pass.launch_queue_time's `sync_before`) and
benchmarks/moe_sync_price.py's reading of it on the light-load rows (docs/accuracy.md, "Session 65 G")."""
import statistics

import pytest

from tests.benchmark_module import load_benchmark
from whatif.roofline.efficiency import load_efficiency
from whatif.roofline.estimate import Workload, launch_queue_time
from whatif.scenario import Scenario
from whatif.specs.hardware import load_system

msp = load_benchmark("moe_sync_price")


@pytest.fixture(scope="module")
def moe_pass():
    """An eager 1k prefill pass of a MoE model on one H100: its op times, kernel count and the profile's gap."""
    eff = load_efficiency("default", load_system("h100-sxm").gpu)
    e = Scenario(model="qwen3-30b-a3b", hardware="h100-sxm", workload=Workload(1, 1024, 2),
                 cuda_graphs=False).run(with_max_batch=False)
    times = e.prefill[0][0].op_times
    return times, sum(t.op.count for t in times), eff.kernel_gap_s


def test_no_sync_leaves_the_queue_as_it_was(moe_pass):
    times, _, gap = moe_pass
    plain = launch_queue_time(times, 20e-6, gap)
    assert launch_queue_time(times, 20e-6, gap, sync_before=lambda op: False, sync_s=1.0) == plain


def test_a_sync_before_every_kernel_serializes_host_and_gpu(moe_pass):
    times, kernels, gap = moe_pass
    gpu = sum(t.total_s for t in times) + kernels * gap
    every = launch_queue_time(times, 20e-6, gap, sync_before=lambda op: True)
    assert every == pytest.approx(gpu + kernels * 20e-6, rel=1e-9)   # host and GPU add, nothing overlaps
    assert every > launch_queue_time(times, 20e-6, gap) * 1.05


def test_a_sync_per_moe_layer_costs_at_least_its_round_trips_and_at_most_full_serialization(moe_pass):
    times, kernels, gap = moe_pass
    launch = 20e-6
    entry = msp.expert_entry([t.op for t in times])
    syncs = sum(t.op.count for t in times if entry(t.op))
    assert syncs == 48   # Qwen3-30B-A3B: every one of its 48 layers is MoE
    plain = launch_queue_time(times, launch, gap)
    synced = launch_queue_time(times, launch, gap, sync_before=entry, sync_s=launch)
    gpu = sum(t.total_s for t in times) + kernels * gap
    assert plain + syncs * launch * (1 - 1e-9) <= synced <= gpu + kernels * launch + syncs * launch + 1e-12


def test_on_the_committed_rows_a_per_layer_sync_carries_a_small_share_of_the_deepseek_gap():
    rows = [r for r in msp.slice_rows(8, 1024) if r["engine"] == "trtllm" and "DeepSeek" in r["model"]
            and r["version"] == "1.2.0rc6.post2" and r["tp"] == "8"]
    groups = msp.price_groups(rows)
    assert groups
    for g in groups:
        assert 0.0 < g["delta_ms"] <= g["bound_ms"] < g["gap"]   # even full serialization is short of the gap
        assert g["delta_ms"] < 0.1 * g["gap"]
    assert statistics.median(g["delta_ms"] / g["moe_layers"] * 1e3 for g in groups) < 100.0   # us a MoE layer
