"""The simulator's outputs on a handful of representative runs, recorded and compared to the float.

    python benchmarks/sim_outputs.py --write DIR     # record each run's `simulate --json` object under DIR
    python benchmarks/sim_outputs.py --check DIR     # run them again; any value off by > 1e-9 relative fails

A speed change to the simulator must leave its outputs unchanged: record them before the change (at the parent
commit), check after. The runs cover the simulator's paths: open-loop rate, closed-loop concurrency, chunked and
unchunked prefill, preemption under KV pressure (recompute and swap), speculative decoding, attention-DP,
disaggregated prefill/decode, pp > 1, prefix caching with a multi-turn workload, static batching.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
import time
from pathlib import Path

RUNS = {
    "open_rate": "--model llama-3-8b --hardware h100-sxm --rate 20 --requests 3000",
    "open_sharegpt_70b": "--model llama-3-70b --hardware dgx-h100 --tp 4 --rate 8 --requests 1500 --lengths sharegpt",
    "closed_concurrency": "--model llama-3-8b --hardware h100-sxm --concurrency 64 --requests 3000 --lengths sharegpt",
    "no_chunking": "--model llama-3-8b --hardware h100-sxm --rate 30 --requests 2000 --no-chunked-prefill "
                   "--lengths sharegpt",
    "preempt_recompute": "--model llama-3-8b --hardware h100-sxm --memory-utilization 0.25 --rate 60 "
                         "--requests 2000 --lengths sharegpt",
    "preempt_swap": "--model llama-3-8b --hardware h100-sxm --memory-utilization 0.25 --rate 60 --requests 1500 "
                    "--lengths sharegpt --preemption swap",
    "speculative": "--model llama-3-8b --hardware h100-sxm --rate 10 --requests 1000 --technique eagle",
    "attention_dp": "--model qwen3-30b-a3b --hardware dgx-h100 --tp 4 --dp-attention --ep 4 --concurrency 128 "
                    "--requests 1500",
    "disaggregated": "--model llama-3-8b --hardware dgx-h100 --prefill-replicas 1 --rate 20 --requests 2000 "
                     "--lengths sharegpt",
    "pipeline_pp2": "--model llama-3-70b --hardware dgx-h100 --tp 2 --pp 2 --rate 5 --requests 1000",
    "prefix_turns": "--model llama-3-8b --hardware h100-sxm --rate 8 --turns 4 --prefix-groups 8 "
                    "--prefix-tokens 1024 --requests 1200",
    "static_batching": "--model llama-3-8b --hardware h100-sxm --rate 5 --requests 500 --batching static",
    "replicas_sglang": "--model llama-3-8b --hardware dgx-h100 --engine sglang --replicas 2 --rate 40 "
                       "--requests 2000 --lengths sharegpt",
}


def run(args: str) -> dict:
    from whatif.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["simulate", *args.split(), "--json", "--no-progress"])
    if rc not in (0, None):
        raise SystemExit(f"simulate {args} exited {rc}")
    return json.loads(out.getvalue())


def differences(a, b, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}: only on one side" for k in set(a) ^ set(b)]
        for k in a.keys() & b.keys():
            out += differences(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items against {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, (int, float)) or isinstance(b, float) and isinstance(a, (int, float)):
        if a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9 * max(abs(a), abs(b)):
            return []
    elif a == b:
        return []
    return [f"{path}: {a!r} recorded, {b!r} now"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", metavar="DIR")
    group.add_argument("--check", metavar="DIR")
    ap.add_argument("--only", default="", help="comma-separated run names (default: all)")
    args = ap.parse_args()
    folder = Path(args.write or args.check)
    folder.mkdir(parents=True, exist_ok=True)
    names = [n for n in args.only.split(",") if n] or list(RUNS)
    failed = 0
    for name in names:
        t0 = time.process_time()
        got = run(RUNS[name])
        cpu = time.process_time() - t0
        path = folder / f"{name}.json"
        if args.write:
            path.write_text(json.dumps(got, indent=1, sort_keys=True))
            print(f"{name}: written ({cpu:.2f} s CPU)")
            continue
        diffs = differences(json.loads(path.read_text()), got)
        failed += bool(diffs)
        print(f"{name}: {'unchanged' if not diffs else f'{len(diffs)} values differ'} ({cpu:.2f} s CPU)")
        for d in diffs[:10]:
            print("   ", d)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
