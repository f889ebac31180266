"""Is a closed-loop row's TTFT a queue of whole prompts (clients bunched) or one prompt at a time: a diagnostic.

    python benchmarks/closed_loop_bunching.py --query "engine=='trtllm' and version=='1.0.0rc3' and \
        model.str.contains('Qwen3-32B') and concurrency==8 and osl==256" [--return-ms 0 25 50]

For each row the query picks from the committed table (benchmarks/data/serving_reference.csv), rerun as
benchmarks/serving_reference.py maps it, it prints the measured TTFT and whatif's in units of the row's own
prefill pass (one prompt of its ISL as `estimate` prices it, GPU time), the simulation's opening round (all N
clients sent at t = 0: the bunched case) and its steady rounds (the mean of the rounds after it), and the table's
TTFT when the way back from a request's last token to its client's next send takes `--return-ms` (the closed loop
has none: whatif/simulator/closed_loop.py). N bunched clients served one prompt a step wait (N + 1) / 2 passes on
average; a loop whose clients arrive spread out waits about two (the one in flight, then its own). Nothing here
feeds a prediction (docs/accuracy.md, "Session 74 H").
"""
from __future__ import annotations

import argparse
import statistics
import sys
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


@contextmanager
def return_path(seconds: float):
    """Within the block, a closed-loop client sends its next request `seconds` after its last one is answered
    (whatif's loop sends at once); restored on exit."""
    from whatif.simulator import closed_loop
    original = closed_loop.ClientLoop.answered
    if seconds > 0:
        def answered(self, _rec=None):
            self.env.at(seconds, lambda _arg=None: self._send(), None)
        closed_loop.ClientLoop.answered = answered
    try:
        yield
    finally:
        closed_loop.ClientLoop.answered = original


def round_means(records, frontend, n: int) -> list[float]:
    """Each round's (N requests in id order) mean client TTFT, seconds."""
    recs = sorted(records, key=lambda r: r.request.id)
    return [statistics.fmean(r.served_ttft_s(frontend) for r in recs[k:k + n]) for k in range(0, len(recs) - n + 1, n)]


def bunched_passes(n: int, per_step: int = 1) -> float:
    """Mean TTFT, in one-prompt passes, of n prompts arriving together and served `per_step` a step (a step of k
    prompts taking k passes; every prompt of a step gets its token when the step ends)."""
    return statistics.fmean((k // per_step + 1) * per_step for k in range(n))


def row_regime(row: dict, return_ms: tuple[float, ...] = ()) -> dict:
    """Measured and simulated TTFT of a row (ms), in passes too, and the table TTFT under each return path."""
    import serving_reference as sr
    from step_ops import prefill_pass
    from whatif.api import simulate

    total = sr.profile_rounds(row)
    kw = sr.simulate_kwargs(row, min(sr.SIM_ROUNDS, total))
    n = kw["traffic"]["concurrency"]
    res = simulate(**kw)
    rounds = [x * 1e3 for x in round_means(res.records, res.frontend, n)]
    pass_ms = prefill_pass(row).gpu_s * 1e3
    out = {"id": row["id"], "isl": int(row["isl"]), "osl": int(row["osl"]), "tp": kw["tp"], "n": n,
           "budget": kw.get("max_num_batched_tokens"), "pass": pass_ms, "measured": float(row["silicon_ttft_ms"]),
           "opening": rounds[0], "steady": statistics.fmean(rounds[1:]), "table": sr.client_means(res, n, total)[0]}
    budget, isl = out["budget"] or 0, out["isl"]   # prompts a step beside the other decodes, by the token budget
    out["bunched"] = bunched_passes(n, max(1, min(n, (budget - (n - 1)) // isl)) if budget else 1)
    for ms in return_ms:
        with return_path(ms / 1e3):
            res_r = simulate(**kw)
        out[f"back{ms:g}"] = sr.client_means(res_r, n, total)[0]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", required=True, help="pandas query on benchmarks/data/serving_reference.csv")
    ap.add_argument("--return-ms", type=float, nargs="*", default=[], help="ways back to try, ms (each >= 0)")
    args = ap.parse_args(argv)
    if any(ms < 0 for ms in args.return_ms):
        ap.error("--return-ms: each must be >= 0")
    import pandas as pd
    import serving_reference as sr
    table = pd.read_csv(sr.OUT).query(args.query)
    rows = [r for r in sr.load() if r["id"] in set(table[table.scored == 1].id)]
    if not rows:
        ap.error("--query: no scored row selected")
    backs = "".join(f" back{ms:g}" for ms in args.return_ms)
    print(f"isl/osl     tp  N  budget  pass ms | measured (passes) | bunched passes | opening steady table (passes)"
          f"{backs} (ms)")
    for row in rows:
        r = row_regime(row, tuple(args.return_ms))
        p = r["pass"]
        extra = "".join(f" {r[f'back{ms:g}']:7.0f}" for ms in args.return_ms)
        print(f"{r['isl']:>5}/{r['osl']:<5} {r['tp']:>2} {r['n']:>3} {r['budget']!s:>6} {p:7.1f} | "
              f"{r['measured']:7.0f} ({r['measured'] / p:4.1f}) | {r['bunched']:4.1f} | "
              f"{r['opening']:7.0f} {r['steady']:7.0f} {r['table']:7.0f} ({r['table'] / p:4.1f}){extra}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
