"""The measured cost of a second node in an NCCL all-reduce without NVLink SHARP, and its table for whatif.

    python benchmarks/two_node_allreduce.py [--corpus DIR] [--write]

Source: vidur-profiling's A100 DGX all-reduce (`network/a100_dgx/all_reduce.csv`, /work/shared/reference): NCCL
all-reduce over 16 GPUs on two nodes (8 a node) and over 8 GPUs on one node, by message size in bytes. A100's
NVSwitch has no in-switch reduction (NVLS is Hopper's), so these are NCCL's cross-node algorithms without NVLS.
The increment (16 GPUs - 8 GPUs, medians at the same size) is the second node's cost; the eager-launch overheads
both columns carry below 1 MB (reference/README.md) cancel in it. Less that fabric's own wire time (2 (n - 1) / n
x bytes at the 16-GPU rows' bus bandwidth at >= 32 MiB) it is the second node's excess: below 1 MiB the increment
is 4x that wire time or more, so the excess is NCCL's small-message cross-node path, not this fabric's NICs (the
NICs of the system priced add their own wire time). `--write` writes the excess at knots up to 1 MiB to
whatif/roofline/data/two_node_allreduce.yaml (kernel_models/two_node_allreduce.py reads it). Nothing here reads a
serving row.
"""
from __future__ import annotations

import argparse
import csv
import statistics
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "reference" / "vidur-profiling" / "network" / "a100_dgx" / "all_reduce.csv"
OUT = ROOT / "whatif" / "roofline" / "data" / "two_node_allreduce.yaml"
KNOTS = [2 ** k for k in range(13, 21)]   # 8 KiB .. 1 MiB: the decode steps' all-reduces (tokens x hidden x 2 B)
WINDOW = 1.25   # a knot takes the median increment of the measured sizes within this factor of it (the rows are noisy)


def medians(path: Path) -> dict[tuple[int, int], dict[int, float]]:
    """{(num_workers, devices_per_node): {size bytes: median seconds}} (the median over ranks of each row's median)."""
    rows: dict = defaultdict(lambda: defaultdict(list))
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (int(r["num_workers"]), int(r["devices_per_node"]))
            rows[key][int(r["size"])].append(float(r["time_stats.all_reduce.median"]) / 1e3)
    return {k: {s: statistics.median(v) for s, v in by_size.items()} for k, by_size in rows.items()}


def increments(path: Path) -> list[tuple[int, float, float, float]]:
    """Per knot: (bytes, 8-GPU seconds, 16-GPU seconds, increment seconds), medians over the window's sizes."""
    m = medians(path)
    one, two = m[(8, 8)], m[(16, 8)]
    sizes = sorted(set(one) & set(two))
    out = []
    for knot in KNOTS:
        near = [s for s in sizes if knot / WINDOW <= s <= knot * WINDOW]
        out.append((knot, statistics.median(one[s] for s in near), statistics.median(two[s] for s in near),
                    statistics.median(two[s] - one[s] for s in near)))
    return out


def bus_bandwidth(path: Path) -> float:
    """The 16-GPU rows' bus bandwidth at their largest sizes (>= 32 MiB): 2 (n - 1) / n x bytes / seconds."""
    two = medians(path)[(16, 8)]
    return statistics.median(2 * 15 / 16 * s / t for s, t in two.items() if s >= 2 ** 25)


def wire_s(nbytes: float, busbw: float) -> float:
    """The 16-GPU all-reduce's wire time at the fabric's bus bandwidth: 2 (n - 1) / n x bytes / busbw."""
    return 2 * 15 / 16 * nbytes / busbw


def write(rows, busbw: float) -> None:
    lines = [
        "# The measured excess a second node adds to an NCCL all-reduce without NVLink SHARP (NVLS), by message size.",
        "# Written by benchmarks/two_node_allreduce.py --write from vidur-profiling's A100 DGX all-reduce",
        "# (network/a100_dgx/all_reduce.csv, MIT): median(16 GPUs on 2 nodes) - median(8 GPUs on 1 node) at the",
        "# same size (each knot the median over the measured sizes within x1.25 of it), less that fabric's wire time",
        f"# at its large-message bus bandwidth ({busbw / 1e9:.1f} GB/s, sizes >= 32 MiB). A100 has no NVLS, so this",
        "# is NCCL's cross-node path without it. Read by whatif/roofline/kernel_models/two_node_allreduce.py.",
        "provenance: measured",
        "source: vidur-profiling network/a100_dgx/all_reduce.csv (16 vs 8 workers, 8 per node)",
        f"max_bytes: {KNOTS[-1]}",
        "knots:   # [bytes, seconds the second node adds beyond its NICs' wire time]",
    ]
    lines += [f"  - [{b}, {inc - wire_s(b, busbw):.3e}]" for b, _, _, inc in rows]
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    rows, busbw = increments(args.corpus), bus_bandwidth(args.corpus)
    print(f"16-GPU bus bandwidth at >= 32 MiB: {busbw / 1e9:.1f} GB/s")
    print(f"{'bytes':>9} {'8 GPUs us':>10} {'16 GPUs us':>11} {'increment us':>13} {'wire us':>8} {'excess us':>10}")
    for b, one, two, inc in rows:
        w = wire_s(b, busbw) * 1e6
        print(f"{b:>9} {one * 1e6:>10.1f} {two * 1e6:>11.1f} {inc * 1e6:>13.1f} {w:>8.1f} {inc * 1e6 - w:>10.1f}")
    if args.write:
        write(rows, busbw)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
