"""Where a serving row's predicted TTFT goes, request by request, next to the measured TTFT: a diagnostic.

    python benchmarks/first_token_parts.py --query "engine=='sglang' and system=='b200_sxm' and mode=='agg' \
        and concurrency<=8 and scored==1" [--every 1] [--out /tmp/parts.csv]

Reruns each row the query selects from the committed table (benchmarks/data/serving_reference.csv) as
benchmarks/serving_reference.py maps it, and splits every simulated request's client TTFT (Record.served_ttft_s)
into three parts that sum to it:
- front: the server's front end (HTTP, tokenization: the engine spec's `frontend`), sent -> reaching the engine;
- wait: reaching the engine -> its prefill step starting (the step in flight, SGLang's --scheduler-recv-interval
  poll, other prompts ahead);
- step: its prefill step, start -> first token (the pass, a Triton recompile where mapped, a first-token hold).
Each part is averaged over the simulated requests (the table's TTFT extrapolates rounds, serving_reference.
profile_means, so `pred` can differ from front + wait + step by a few ms). Next to them: the prefill pass of one
prompt of the row's ISL as `estimate` prices it (GPU and eager host time, kernels) and `gap` = measured - predicted.
It shows whether a light-load gap follows the priced GPU work (a kernel price) or not (a cost a step or a request
outside it; docs/accuracy.md, "Session 61 E"). Nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

PARTS = ("front", "wait", "step")
COLUMNS = ("id", "model", "version", "precision", "tp", "ep", "isl", "osl", "n", "recv_interval", "measured", "pred",
           *PARTS, "pass_gpu", "pass_host", "kernels", "gap")


def request_parts(record, frontend) -> dict[str, float]:
    """One finished request's client TTFT split into front / wait / step (seconds; they sum to served_ttft_s)."""
    served = record.served_ttft_s(frontend)
    front = served - record.ttft_s
    return {"front": front, "wait": record.first_scheduled_s - record.request.arrival_s,
            "step": record.first_token_s - record.first_scheduled_s}


def mean_parts(records, frontend) -> dict[str, float]:
    """Each part's mean over the finished requests (seconds)."""
    done = [request_parts(r, frontend) for r in records if r.first_token_s is not None]
    return {p: statistics.fmean(d[p] for d in done) for p in PARTS}


def row_parts(row: dict) -> dict:
    """The row's measured and predicted TTFT (ms), its parts (ms) and its priced prefill pass."""
    import serving_reference as sr
    from step_ops import prefill_pass
    from whatif.api import simulate

    kw = sr.simulate_kwargs(row, min(sr.SIM_ROUNDS, sr.profile_rounds(row)))
    res = simulate(**kw)
    n = kw["traffic"]["concurrency"]
    pred, _ = sr.client_means(res, n, sr.profile_rounds(row))
    parts = mean_parts(res.records, res.frontend)
    p = prefill_pass(row)
    measured = float(row["silicon_ttft_ms"])
    return {"id": row["id"], "model": row["model_path"].split("/")[-1], "version": row.get("backend_version", ""),
            "precision": row["gemm_quant_mode"] or "bf16", "tp": kw["tp"], "ep": kw.get("ep", 1),
            "isl": row["isl"], "osl": row["osl"], "n": n,
            "recv_interval": kw.get("engine", {}).get("recv_interval", 1), "measured": measured, "pred": pred,
            **{k: v * 1e3 for k, v in parts.items()}, "pass_gpu": p.gpu_s * 1e3, "pass_host": p.launch_s * 1e3,
            "kernels": p.kernels, "gap": measured - pred}


def selected(query: str, every: int) -> list[dict]:
    """The rows of the mapping whose ids the query picks from the committed table, every `every`-th, one per
    measurement (rows repeating another's measurement, layout and load are run once)."""
    import pandas as pd
    import serving_reference as sr

    table = pd.read_csv(sr.OUT).query(query)
    table = table.drop_duplicates(subset=["model", "version", "isl", "osl", "concurrency", "tp", "ep", "gemm_quant",
                                          "measured_ttft_ms"])
    ids = set(table["id"].iloc[::every])
    return [r for r in sr.load() if r["id"] in ids]


def fmt(rec: dict) -> str:
    return (f"{rec['model'][:14]:14s} {str(rec['version'])[:12]:12s} {rec['precision']:9s} tp{rec['tp']} ep{rec['ep']} "
            f"{rec['isl']:>5}/{rec['osl']:<5} c{rec['n']:<3} ri{rec['recv_interval']:<2} "
            f"{rec['measured']:7.0f} {rec['pred']:7.0f} {rec['front']:5.1f} {rec['wait']:6.1f} {rec['step']:6.1f} "
            f"{rec['pass_gpu']:6.1f} {rec['pass_host']:6.1f} {rec['kernels']:5d} {rec['gap']:+6.0f}")


HEADER = ("model          version      precision layout  isl/osl     c    ri   meas ms  pred ms front   wait   step "
          "  gpu   host  kern   gap")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", required=True, help="pandas query on benchmarks/data/serving_reference.csv")
    ap.add_argument("--every", type=int, default=1, help="every N-th selected measurement")
    ap.add_argument("--out", type=Path, help="write the per-row parts to this CSV")
    args = ap.parse_args(argv)
    if args.every < 1:
        ap.error("--every: must be >= 1")
    rows = selected(args.query, args.every)
    if not rows:
        ap.error("--query: no row selected")
    import serving_reference as sr
    print(HEADER)
    out = []
    for row in rows:
        try:
            rec = row_parts(row)
        except sr.NotExpressible as e:   # a row the mapping no longer scores (a cold-server run): said, then skipped
            print(f"{row['id']}: skipped, not expressible: {e}", flush=True)
            continue
        out.append(rec)
        print(fmt(rec), flush=True)
    if args.out:
        with args.out.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
