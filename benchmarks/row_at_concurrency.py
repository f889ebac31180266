"""A serving row simulated at other client counts, its launch otherwise as benchmarks/serving_reference.py maps it:
whatif's TPOT / TTFT for a layout at a load the measured file lacks (docs/accuracy.md, Session 72 A, sets them beside
a public run of the same release and recipe). Nothing here feeds a prediction.

    python benchmarks/row_at_concurrency.py ROW_ID N [N ...]
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def at_concurrency(kwargs: dict, n: int) -> dict:
    """`simulate` keywords of a row moved to `n` clients: the closed loop's clients, its requests (the row's rounds
    of every client, serving_reference's), and a batch limit of `n` sequences (a launch that caps the batch at the
    client count, as max_batch_size: $CONC does)."""
    if n < 1:
        raise ValueError(f"N: a client count >= 1, got {n}")
    rounds = kwargs["traffic"]["requests"] // kwargs["traffic"]["concurrency"]
    traffic = dict(kwargs["traffic"], concurrency=n, requests=n * rounds)
    return {**kwargs, "traffic": traffic, "max_num_seqs": n}


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2 or not all(a.isdigit() for a in args[1:]):
        print("usage: row_at_concurrency.py ROW_ID N [N ...] (N: client counts)", file=sys.stderr)
        return 2
    import serving_reference as sr
    from whatif.api import simulate
    from step_ops import find_row
    row = find_row(args[0])
    if row is None:
        print(f"unknown row id {args[0]!r}", file=sys.stderr)
        return 2
    total = sr.profile_rounds(row)
    base = sr.simulate_kwargs(row, min(sr.SIM_ROUNDS, total))
    for n in map(int, args[1:]):
        ttft, tpot = sr.client_means(simulate(**at_concurrency(base, n)), n, total)
        print(f"{args[0]} at N {n}: TTFT {ttft:.1f} ms, TPOT {tpot:.2f} ms", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
