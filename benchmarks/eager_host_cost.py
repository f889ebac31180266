"""Host time of one eagerly launched op in a Python serving engine, read off aiconfigurator's corpus.

    python benchmarks/eager_host_cost.py [--corpus PATH]

The corpus times each engine's custom all-reduce twice: called from Python one call after another
(`*_eager`) and replayed inside a CUDA graph (`*_graph`). Up to 256 KB the graphed kernel takes 3-6 us on
NVLink, so the eager call's 20-45 us is the host's: the Python wrapper, the dispatcher and the launch. That
is the measured cost of one op issued by the engine's own Python layers, on the corpus's hosts, and the
source of `kernels.eager_launch_s` in the SGLang and vLLM-V0 engine profiles (their prefill runs eagerly,
one such op per layer kernel). Printed: median, min and max per GPU x engine over tp 2, 4, 8 and sizes
<= 256 KB (33 rows each), in microseconds.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whatif.validate.corpus import load_family  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "reference" / "aiconfigurator"
MAX_BYTES = 256 * 1024   # where the graphed kernel is a few microseconds: the eager call is host-bound


def host_cost_table(frame):
    """Median / min / max latency (us) of the engines' eager and graphed custom all-reduce, small messages."""
    rows = frame[(frame["op_name"] == "all_reduce") & (frame["bytes"] <= MAX_BYTES)
                 & frame["kernel_source"].str.contains("_eager|_graph")]
    rows = rows.assign(mode=rows["kernel_source"].str.rsplit("_", n=1).str[-1],
                       us=rows["latency_ms"] * 1e3)
    return rows.groupby(["gpu", "framework", "mode"])["us"].agg(["median", "min", "max", "count"]).round(1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="folder with comm.parquet or comm.csv.gz")
    args = ap.parse_args()
    print(host_cost_table(load_family("comm", args.corpus)).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
