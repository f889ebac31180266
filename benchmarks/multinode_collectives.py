"""All-reduce times on a two-node system (2x-dgx-h100-ib) by message size, beside their physical floor.

    python benchmarks/multinode_collectives.py [--hardware 2x-dgx-h100-ib]

Columns: 8 GPUs inside one node (NVLink), 16 GPUs across both nodes (NCCL's hierarchical form,
kernel_models/collectives_multinode.py), the floor no algorithm beats (each node sends 2(N-1)/N x S
across nodes over its NICs at line rate), and a flat 16-GPU ring over the NICs alone (what a system
whose only GPU link is the network would get). No measurement is compared: NCCL over the NICs is
assumed (kernel_models/network.py); these are the model's figures and their bound.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whatif.roofline.comm import comm_op  # noqa: E402
from whatif.roofline.efficiency import load_efficiency  # noqa: E402
from whatif.roofline.kernel_models import collectives as coll  # noqa: E402
from whatif.roofline.timing import time_op  # noqa: E402
from whatif.specs.hardware import load_system  # noqa: E402

SIZES = [2**k for k in range(16, 31, 2)]   # 64 KiB .. 1 GiB


def rows(hardware: str) -> list[tuple]:
    system = load_system(hardware)
    eff = load_efficiency("default", system.gpu)
    nic = system.gpu_link.scale_out
    nodes, per_node, nics = system.nodes, system.gpus_per_node, system.nics_per_node
    nccl, engine, _ = coll.collective_params(nic.name, described=(nic.type, nic.bandwidth.value))
    out = []
    for s in SIZES:
        inside = time_op(comm_op("ar", "all_reduce", float(s), per_node, 1), system.gpu, eff, system.gpu_link).time_s
        across = time_op(comm_op("ar", "all_reduce", float(s), system.gpu_count, 1), system.gpu, eff,
                         system.gpu_link).time_s
        floor = 2 * (nodes - 1) / nodes * s / (nics * system.node_link.bandwidth.value)
        flat = coll.collective_time("all_reduce", s, system.gpu_count, nic.bandwidth.value, nic.latency.value,
                                    False, nccl, engine)
        out.append((s, inside, across, floor, flat))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hardware", default="2x-dgx-h100-ib")
    args = ap.parse_args()
    system = load_system(args.hardware)
    print(f"{args.hardware}: {system.nodes} nodes x {system.gpus_per_node} GPUs, "
          f"{system.nics_per_node} x {system.node_link.name} per node; all-reduce, engine vllm fits")
    print(f"{'bytes':>12} {'8 GPUs (us)':>12} {'16 GPUs (us)':>13} {'floor (us)':>11} {'x floor':>8} "
          f"{'flat NIC ring (us)':>19}")
    for s, inside, across, floor, flat in rows(args.hardware):
        print(f"{s:>12,} {inside * 1e6:>12.1f} {across * 1e6:>13.1f} {floor * 1e6:>11.1f} "
              f"{across / floor:>8.2f} {flat * 1e6:>19.1f}")


if __name__ == "__main__":
    main()
