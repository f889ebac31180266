"""Where a disaggregated row's predicted TTFT goes, stage by stage of the hand-off, next to the measured TTFT.

    python benchmarks/disagg_first_token_parts.py --query "mode=='disagg' and scored==1" [--out /tmp/parts.csv]

Reruns each row the query selects from the committed table (benchmarks/data/serving_reference.csv) as
benchmarks/serving_reference.py maps it and splits every simulated request's engine-side TTFT (Record.ttft_s:
arrival at the prefill pool -> the first token leaves the decode pool) into five parts that sum to it:
- queue: arrival -> its first prefill step starts (the prefill pool's queue, the step in flight, SGLang's
  metadata slots: simulator/prefill_send_slots.py);
- prefill: that start -> the prefill replica hands it on (its step, or its chunks' steps);
- admit: hand-on -> its KV starts moving (a decode slot or KV blocks freeing: TensorRT-LLM's gen max_batch_size,
  SGLang's decode --max-running-requests; decode admission, scheduling/admission.py _admit_awaiting_kv);
- send: the KV transfer (IterationTimes.send_time over the pools' link, kv_fanout copies);
- boundary: KV landed -> first token (the decode step in flight, replica.first_token_at).
The client's front end (first_token_parts' `front`) comes on top. Each part is a mean over the simulated requests
(`pred` is the table's aiperf/sa-bench extrapolation, serving_reference.profile_means, so it can differ from their
sum). Next to them: the served rate X = N / (TTFT + (mean output - 1) x TPOT) per prefill worker from the measured
and the predicted means (serving_signatures.served_per_s, as benchmarks/prefill_pool_rate.py reads it): at a
saturated prefill pool a miss in TTFT is a miss in X (TTFT = N / X - decode time), not a hand-off cost. Nothing
here feeds a prediction: the stage times are read by wrapping Cluster.hand_on and Replica._transfer for the run.
`--prefill-scale F` / `--prefill-add-ms A` are what-ifs, never mappings: every prefill-only step (the prefill
pool's; a disaggregated decode pool runs none) is priced F x + A ms, to ask whether one pass factor or one cost a
pass moves a deployment's intercept and slope as measured (disagg_ttft_slope.py). `--prefill-scale twin` takes each
row's F from the aggregated rows of its prefill layout at <= 16 clients (disagg_agg_twins.twin_factor: what the
aggregated light-load rows say the same pass misses by); rows without a twin are skipped.
"""
from __future__ import annotations

import argparse
import csv
import statistics
import sys
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

PARTS = ("queue", "prefill", "admit", "send", "boundary")
COLUMNS = ("id", "engine", "precision", "isl", "n", "measured", "pred", *PARTS, "x_measured", "x_pred", "ratio")


@contextmanager
def handoff_times():
    """Record, per request (keyed by its Record's id), when the prefill pool hands it on, when its KV starts
    moving and when it lands; the simulator's methods are restored on exit."""
    from whatif.simulator import cluster as cluster_mod
    from whatif.simulator import replica as replica_mod

    times: dict[int, dict[str, float]] = {}
    hand_on, transfer = cluster_mod.Cluster.hand_on, replica_mod.Replica._transfer

    def timed_hand_on(self, seq):
        times.setdefault(id(seq.rec), {})["handed_on"] = self.env.now
        return hand_on(self, seq)

    def timed_transfer(self, seq, scheduler):
        mark = times.setdefault(id(seq.rec), {})
        mark["sent"] = self.env.now
        yield from transfer(self, seq, scheduler)
        mark["landed"] = self.env.now

    cluster_mod.Cluster.hand_on, replica_mod.Replica._transfer = timed_hand_on, timed_transfer
    try:
        yield times
    finally:
        cluster_mod.Cluster.hand_on, replica_mod.Replica._transfer = hand_on, transfer


@contextmanager
def prefill_scaled(factor: float, add_s: float = 0.0):
    """Price every step with prompts and no decode rows `factor` x + `add_s` seconds (IterationTimes.time /
    group_time wrapped for the run, restored on exit); factor 1 and add_s 0 change nothing."""
    from whatif.simulator.iteration_time import IterationTimes

    if factor <= 0:
        raise ValueError(f"--prefill-scale: {factor} is not a positive factor")
    if add_s < 0:
        raise ValueError(f"--prefill-add-ms: {add_s * 1e3} is negative")
    time, group_time = IterationTimes.time, IterationTimes.group_time

    def scaled_time(self, decode_seqs, decode_context, prefills):
        t = time(self, decode_seqs, decode_context, prefills)
        return t * factor + add_s if prefills and not decode_seqs else t

    def scaled_group_time(self, shapes):
        t = group_time(self, shapes)
        prefill_only = any(s[2] for s in shapes) and not any(s[0] for s in shapes)
        return t * factor + add_s if prefill_only else t

    if factor != 1 or add_s:
        IterationTimes.time, IterationTimes.group_time = scaled_time, scaled_group_time
    try:
        yield
    finally:
        IterationTimes.time, IterationTimes.group_time = time, group_time


def request_parts(record, mark: dict[str, float]) -> dict[str, float]:
    """One disaggregated request's engine-side TTFT split into the five PARTS (seconds; they sum to ttft_s)."""
    arrival = record.request.arrival_s
    return {"queue": record.first_scheduled_s - arrival, "prefill": mark["handed_on"] - record.first_scheduled_s,
            "admit": mark["sent"] - mark["handed_on"], "send": mark["landed"] - mark["sent"],
            "boundary": record.first_token_s - mark["landed"]}


def mean_parts(records, times: dict[int, dict[str, float]]) -> dict[str, float]:
    """Each part's mean over the requests that reached their first token through the hand-off (seconds)."""
    done = [request_parts(r, times[id(r)]) for r in records
            if r.first_token_s is not None and len(times.get(id(r), ())) == 3]
    if not done:
        raise ValueError("no request reached its first token through a disaggregated hand-off")
    return {p: statistics.fmean(d[p] for d in done) for p in PARTS}


def row_parts(row: dict, prefill_scale: float = 1.0, prefill_add_s: float = 0.0) -> dict:
    """The row's measured and predicted TTFT (ms), its hand-off parts (ms) and its served rate per prefill worker;
    prefill_scale / prefill_add_s: the what-if on prefill-only steps (prefill_scaled)."""
    import serving_reference as sr
    from serving_signatures import SA_BENCH_MEAN_OUTPUT, served_per_s
    from whatif.api import simulate

    kw = sr.simulate_kwargs(row, min(sr.SIM_ROUNDS, sr.profile_rounds(row)))
    with handoff_times() as times, prefill_scaled(prefill_scale, prefill_add_s):
        res = simulate(**kw)
    n = kw["traffic"]["concurrency"]
    pred_ttft, pred_tpot = sr.client_means(res, n, sr.profile_rounds(row))
    parts = mean_parts(res.records, times)
    measured, measured_tpot = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
    workers = max(1, int(float(row["prefill_num_workers"] or 1)))
    output = SA_BENCH_MEAN_OUTPUT * int(row["osl"]) if sr.sa_bench_client(row) else int(row["osl"])
    return {"id": row["id"], "engine": row["backend"], "precision": row["gemm_quant_mode"] or "bf16",
            "isl": int(row["isl"]), "n": n, "measured": measured, "pred": pred_ttft,
            **{k: v * 1e3 for k, v in parts.items()},
            "x_measured": served_per_s(n, measured, measured_tpot, output) / workers,
            "x_pred": served_per_s(n, pred_ttft, pred_tpot, output) / workers, "ratio": pred_ttft / measured}


def fmt(rec: dict) -> str:
    return (f"{rec['id'][-44:]:44s} {rec['measured']:8.0f} {rec['pred']:7.0f} "
            + " ".join(f"{rec[p]:7.1f}" for p in PARTS)
            + f" {rec['x_measured']:6.2f} {rec['x_pred']:6.2f} x{rec['ratio']:.2f}")


HEADER = (f"{'row':44s} {'meas ms':>8s} {'pred':>7s} " + " ".join(f"{p:>7s}" for p in PARTS)
          + f" {'X meas':>6s} {'X pred':>6s} ratio")


def summary(records: list[dict]) -> list[str]:
    """Per engine: rows, the mean share of each part in the summed parts, median ratio (a reading of `records`)."""
    lines = []
    for engine in sorted({r["engine"] for r in records}):
        mine = [r for r in records if r["engine"] == engine]
        total = sum(sum(r[p] for p in PARTS) for r in mine)
        shares = " ".join(f"{p} {100 * sum(r[p] for r in mine) / total:.1f}%" for p in PARTS)
        lines.append(f"{engine}: {len(mine)} rows, median ratio x{statistics.median(r['ratio'] for r in mine):.2f}; "
                     f"share of the priced TTFT: {shares}")
    return lines


def main(argv=None) -> int:
    from first_token_parts import selected

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", default="mode=='disagg' and scored==1",
                    help="pandas query on benchmarks/data/serving_reference.csv (disaggregated rows)")
    ap.add_argument("--every", type=int, default=1, help="every N-th selected measurement")
    ap.add_argument("--out", type=Path, help="write the per-row parts to this CSV")
    ap.add_argument("--prefill-scale", default="1",
                    help="what-if: price every prefill-only step this many times (default 1, as mapped), or "
                         "'twin': each row's aggregated twins' light-load measured / predicted TTFT")
    ap.add_argument("--prefill-add-ms", type=float, default=0.0,
                    help="what-if: add this many ms to every prefill-only step (default 0, as mapped)")
    args = ap.parse_args(argv)
    if args.every < 1:
        ap.error("--every: must be >= 1")
    twin_agg = None
    if args.prefill_scale == "twin":
        import disagg_agg_twins as tw
        twin_agg = tw.scored(tw.TABLE, 16)[1]
    else:
        try:
            scale = float(args.prefill_scale)
        except ValueError:
            ap.error(f"--prefill-scale: {args.prefill_scale!r} is neither a number nor 'twin'")
        if scale <= 0:
            ap.error("--prefill-scale: must be > 0")
    if args.prefill_add_ms < 0:
        ap.error("--prefill-add-ms: must be >= 0")
    rows = [r for r in selected(args.query, args.every) if r["mode"] == "disagg"]
    if not rows:
        ap.error("--query: no disaggregated row selected")
    print(HEADER)
    out = []
    for row in rows:
        if twin_agg is not None:
            scale, source = tw.twin_factor(row, twin_agg)
            if scale is None:
                print(f"{row['id'][-44:]:44s} skipped: no aggregated twin", flush=True)
                continue
        out.append(row_parts(row, scale, args.prefill_add_ms / 1e3))
        print(fmt(out[-1]) + (f"  F {scale:.2f} {source}" if twin_agg is not None else ""), flush=True)
    if not out:
        return 0
    print("\n".join(summary(out)))
    if args.out:
        with args.out.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
