"""How far a slice of serving rows moves if every simulated step that carries a prefill cost more: by a factor on
its prefill part (a token-proportional excess), or by a fixed time a step (a host floor under the step).

    python benchmarks/prefill_step_sensitivity.py --query "engine=='sglang' and system=='b200_sxm' and \
        mode=='agg' and scored==1" --every 4 --scale 1 1.5 2 --add-ms 0 80 [--out /tmp/x.csv]

Reruns the rows (every `--every`-th of those `--query` selects from the committed table, or whose id contains
`--filter`) with `IterationTimes.time` of a step with prefill chunks stretched: its prefill part (the step minus the
same decodes alone) x `--scale`, then + `--add-ms` (each pair of the two lists' product is one run), and prints TTFT
MAPE, median predicted/measured ratio, off by 3x and TPOT MAPE, by concurrency band and prompt length. It tells an
excess that grows with the prompt from one paid once a prefill step (docs/accuracy.md, "SGLang on B200, TTFT at
every load ... session 59"). A sensitivity, never a calibration: a factor read off the serving rows is a fit, so no
prediction may take it. Scale 1 with 0 ms reproduces the committed table.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from eager_host_sensitivity import BANDS, selected_rows, summary  # noqa: E402


def stretched(step_s: float, decodes_alone_s: float, scale: float, add_s: float) -> float:
    """A prefill-carrying step of `step_s` whose decodes alone take `decodes_alone_s`: its prefill part x `scale`,
    plus `add_s` once a step."""
    return decodes_alone_s + (step_s - decodes_alone_s) * scale + add_s


@contextlib.contextmanager
def stretched_prefill_steps(scale: float, add_s: float):
    """Every simulated step with prefill chunks priced by `stretched` (restored on exit; 1 and 0 leave it alone)."""
    from whatif.simulator import iteration_time as it

    original = it.IterationTimes.time

    def time(self, decode_seqs, decode_context, prefills):
        t = original(self, decode_seqs, decode_context, prefills)
        if not prefills or (scale == 1 and add_s == 0):
            return t
        alone = original(self, decode_seqs, decode_context, []) if decode_seqs else 0.0
        return stretched(t, alone, scale, add_s)

    it.IterationTimes.time = time
    try:
        yield
    finally:
        it.IterationTimes.time = original


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--filter", help="rows whose id contains this text")
    which.add_argument("--query", help="a pandas query on benchmarks/data/serving_reference.csv's columns")
    ap.add_argument("--scale", type=float, nargs="+", default=[1.0], help="factors on a step's prefill part")
    ap.add_argument("--add-ms", type=float, nargs="+", default=[0.0], help="ms added to each prefill step")
    ap.add_argument("--every", type=int, default=1, help="run every N-th matching row")
    ap.add_argument("--out", help="CSV of id, scale, add_ms, clients, isl, predicted and measured TTFT/TPOT")
    args = ap.parse_args(argv)

    import serving_reference as sr

    rows = selected_rows(args.query, args.filter, args.every)
    out = []
    for scale, add_ms in itertools.product(args.scale, args.add_ms):
        points, isl = [], []
        with stretched_prefill_steps(scale, add_ms * 1e-3):
            for row in rows:
                res = sr.run_row(row)
                if not res.scored:
                    continue
                points.append((sr.concurrency(row), res.ttft_ms, float(row["silicon_ttft_ms"]), res.tpot_ms,
                               float(row["silicon_tpot_ms"])))
                isl.append(int(row["isl"]))
                out.append((row["id"], scale, add_ms, *points[-1][:1], isl[-1], *points[-1][1:]))
        print(f"x{scale:g} +{add_ms:g} ms: {summary(points)}")
        for lo, hi in BANDS:
            for length in sorted(set(isl)):
                band = [p for p, n in zip(points, isl) if lo <= p[0] <= hi and n == length]
                if band:
                    print(f"  {lo}-{hi if hi < 10**6 else '+'} clients, ISL {length}: {summary(band)}")
    if args.out:
        with open(args.out, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["id", "scale", "add_ms", "clients", "isl", "predicted_ttft_ms", "measured_ttft_ms",
                        "predicted_tpot_ms", "measured_tpot_ms"])
            w.writerows(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
