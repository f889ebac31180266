"""What a heavy-load TTFT is made of, measured against whatif's: a diagnostic (nothing fitted, no prediction changed).

    python benchmarks/heavy_load_ttft.py slopes [--query "engine=='trtllm' and system=='b200_sxm'"]
    python benchmarks/heavy_load_ttft.py split --query "id.str.contains('_cfg91') and concurrency==256"

`slopes` (arithmetic on the committed table, no simulation): one line per deployment (model, release, precision,
layout, ISL/OSL; rows repeating another's measurement once) with rows at N >= 32 reaching N >= 64: the
least-squares slope of measured and of predicted TTFT against N over N >= 32 (ms a client: the queueing a client
adds), the light-load gap (measured - predicted TTFT at N <= 8, median, ms), the gap at the deployment's largest N,
and the part of that gap the slopes explain, (slope measured - slope predicted) x (N max - 32).

`split` (reruns each selected row as benchmarks/serving_reference.py maps it): measured and simulated TTFT and TPOT
(the table's 10-round extrapolation, serving_reference.client_means), the simulated TTFT of the opening
burst round and of the steady rounds (the mean of rounds 2-3, as burst_split), the steady rounds' client TTFT split
into front (the front end), wait (reaching the engine -> its prefill step starting) and step (that step, start ->
first token), and from the iteration log over the steady window: the share of steps that carry a prompt, prompts a
prefill step, the mean prefill step and decode-only step (ms). Beside them, the measured mean and what it implies
if the simulated burst is right: steady needed = (R M - B) / (R - 1) (burst_split.steady_needed_ms), and by Little's
law the requests waiting for a first token, measured and simulated (burst_split.waiting). `--launch-scale` multiplies
TensorRT-LLM's eager host per launch on Blackwell hosts, as burst_split does; `--as-release V` runs the rows that
record no release as V's recipe launches them (as_release): sensitivities, never a calibration or a mapping (the
InferenceX DeepSeek rows of 2025-11-02 are mapped to their sourced image by serving_reference.sourced_release).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from burst_split import TRTLLM_BLACKWELL_EAGER_US, steady_needed_ms, waiting  # noqa: E402

TABLE = ROOT / "benchmarks" / "data" / "serving_reference.csv"
DEPLOYMENT = ["model", "version", "gemm_quant", "tp", "attention_dp", "ep", "isl", "osl", "mode"]
LIGHT_N, SLOPE_FROM, HEAVY_N = 8, 32, 64


def slope_ms_per_client(n: list[float], ttft_ms: list[float]) -> float:
    """Least-squares slope of TTFT (ms) against clients N; needs two distinct N."""
    if len(set(n)) < 2:
        raise ValueError(f"n: two distinct concurrencies needed, got {sorted(set(n))}")
    return float(np.polyfit(np.asarray(n, float), np.asarray(ttft_ms, float), 1)[0])


def slope_gap_ms(slope_measured: float, slope_predicted: float, n_max: float, n_from: float = SLOPE_FROM) -> float:
    """The part of the gap at n_max the slopes explain over n_from..n_max (ms)."""
    return (slope_measured - slope_predicted) * (n_max - n_from)


def deployment_slopes(table):
    """One dict a deployment of the scored rows (see the module docstring)."""
    t = table[table.scored == 1].drop_duplicates(DEPLOYMENT[1:] + ["concurrency", "measured_ttft_ms",
                                                                 "measured_tpot_ms"])
    out = []
    for key, g in t.groupby(DEPLOYMENT, dropna=False):
        hi = g[g.concurrency >= SLOPE_FROM]
        if hi.concurrency.nunique() < 2 or hi.concurrency.max() < HEAVY_N:
            continue
        sm = slope_ms_per_client(list(hi.concurrency), list(hi.measured_ttft_ms))
        sp = slope_ms_per_client(list(hi.concurrency), list(hi.predicted_ttft_ms))
        lo = g[g.concurrency <= LIGHT_N]
        top = hi[hi.concurrency == hi.concurrency.max()]
        out.append({**dict(zip(DEPLOYMENT, key)), "ns": sorted(int(x) for x in g.concurrency.unique()),
                    "slope_meas": sm, "slope_pred": sp,
                    "light_gap": float((lo.measured_ttft_ms - lo.predicted_ttft_ms).median()) if len(lo) else None,
                    "n_max": int(top.concurrency.iloc[0]),
                    "gap_at_max": float((top.measured_ttft_ms - top.predicted_ttft_ms).median()),
                    "ratio_at_max": float((top.predicted_ttft_ms / top.measured_ttft_ms).median()),
                    "slope_part": slope_gap_ms(sm, sp, float(top.concurrency.iloc[0]))})
    return out


def step_stats(log, t0: float, t1: float) -> dict:
    """Steps starting in [t0, t1): share carrying a prompt, prompts a prefill step, mean prefill / decode-only
    step (ms)."""
    c = log.columns
    start, dur = np.asarray(c["start_s"]), np.asarray(c["duration_s"])
    pseq = np.asarray(c["prefill_seqs"])
    sel = (start >= t0) & (start < t1)
    pre, dec = sel & (pseq > 0), sel & (pseq == 0)
    return {"steps": int(sel.sum()), "prefill_share": float(pre.sum() / max(sel.sum(), 1)),
            "prompts_a_step": float(pseq[pre].mean()) if pre.any() else 0.0,
            "prefill_step_ms": float(dur[pre].mean() * 1e3) if pre.any() else 0.0,
            "decode_step_ms": float(dur[dec].mean() * 1e3) if dec.any() else 0.0}


def as_release(row: dict, version: str | None) -> dict:
    """The row with `version` as its release where it records none (a sensitivity: the launch that release's recipe
    maps, serving_reference.inferencex_dsr1_trt_launch and the MoE kernels by image); rows naming one unchanged."""
    return {**row, "backend_version": version} if version and not row.get("backend_version") else row


def row_split(row: dict, measured_ttft: float, measured_tpot: float, launch_scale: float = 1.0) -> dict:
    """Simulated burst / steady TTFT, the steady rounds' parts and step statistics for one row (ms); `launch_scale`
    multiplies TensorRT-LLM's eager host per launch on Blackwell hosts (a sensitivity, as burst_split's)."""
    import serving_reference as sr
    from first_token_parts import request_parts
    from whatif.api import simulate

    kw = sr.simulate_kwargs(row, min(sr.SIM_ROUNDS, sr.profile_rounds(row)))
    if launch_scale != 1:
        kw["launch_us"] = TRTLLM_BLACKWELL_EAGER_US * launch_scale
    res = simulate(**kw)
    n, total = kw["traffic"]["concurrency"], sr.profile_rounds(row)
    recs = sorted(res.records, key=lambda r: r.request.id)
    rounds = [recs[k:k + n] for k in range(0, len(recs) - n + 1, n)]
    ttft = [statistics.fmean(r.served_ttft_s(res.frontend) for r in w) * 1e3 for w in rounds]
    steady = [r for w in rounds[1:3] for r in w]
    parts = [request_parts(r, res.frontend) for r in steady]
    pred, tpot = sr.client_means(res, n, total)
    t0 = min(r.request.arrival_s for r in steady)
    t1 = max(r.first_token_s for r in steady)
    burst, steady_ms = ttft[0], statistics.fmean(ttft[1:3])
    s_need = steady_needed_ms(measured_ttft, burst, total)
    return {"n": n, "measured": measured_ttft, "pred": pred, "burst": burst, "steady": steady_ms,
            **{p: statistics.fmean(d[p] for d in parts) * 1e3 for p in ("front", "wait", "step")},
            **step_stats(res.log, t0, t1), "steady_needed": s_need,
            "waiting_sim": waiting(n, steady_ms, int(kw["output"]), tpot),
            "waiting_meas": waiting(n, s_need, int(kw["output"]), measured_tpot),
            "budget": kw.get("max_num_batched_tokens"), "seqs": kw.get("max_num_seqs"), "tpot": tpot}


def main(argv: list[str] | None = None) -> int:
    import pandas as pd
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("slopes", "split"))
    ap.add_argument("--query", default="engine=='trtllm' and system=='b200_sxm'",
                    help="pandas query on benchmarks/data/serving_reference.csv")
    ap.add_argument("--launch-scale", type=float, default=1.0,
                    help="split: TensorRT-LLM eager host per launch on Blackwell x this (sensitivity, never mapped)")
    ap.add_argument("--as-release", help="split: run rows that record no release as this one's launch "
                                         "(a sensitivity, never mapped)")
    args = ap.parse_args(argv)
    table = pd.read_csv(TABLE).query(args.query, engine="python")
    if table.empty:
        ap.error("--query: no row selected")
    if args.mode == "slopes":
        print("| deployment | N | slope meas / pred (ms a client) | light gap | gap at N max (ratio) | slope part |")
        print("|---|---|---|---|---|---|")
        for d in deployment_slopes(table):
            name = (f"{str(d['model']).split('/')[-1]} {d['version']} {d['gemm_quant']} TP{d['tp']} "
                    f"ADP{d['attention_dp']} EP{d['ep']} {d['isl']}/{d['osl']} {d['mode']}")
            light = "-" if d["light_gap"] is None else f"{d['light_gap']:+.0f}"
            print(f"| {name} | {','.join(map(str, d['ns']))} | {d['slope_meas']:.2f} / {d['slope_pred']:.2f} "
                  f"| {light} | {d['gap_at_max']:+.0f} at {d['n_max']} (x{d['ratio_at_max']:.2f}) "
                  f"| {d['slope_part']:+.0f} |")
        return 0
    import serving_reference as sr
    table = table[table.scored == 1].drop_duplicates(DEPLOYMENT[1:] + ["concurrency", "measured_ttft_ms"])
    rows = {r["id"]: r for r in sr.load()}
    print("| row | N | budget / seqs | meas / pred | TPOT meas / pred | sim burst / steady | front / wait / step "
          "| prefill share, prompts a step | prefill / decode step ms | steady needed | waiting sim / meas |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for _, x in table.sort_values(["model", "version", "isl", "osl", "concurrency"]).iterrows():
        row = as_release(rows[x.id], args.as_release)
        s = row_split(row, x.measured_ttft_ms, x.measured_tpot_ms, args.launch_scale)
        print(f"| {x.id[-46:]} | {s['n']} | {s['budget']} / {s['seqs']} | {s['measured']:.0f} / {s['pred']:.0f} "
              f"| {x.measured_tpot_ms:.1f} / {s['tpot']:.1f} | {s['burst']:.0f} / {s['steady']:.0f} "
              f"| {s['front']:.0f} / {s['wait']:.0f} / {s['step']:.0f} "
              f"| {s['prefill_share']:.2f}, {s['prompts_a_step']:.2f} | {s['prefill_step_ms']:.1f} / "
              f"{s['decode_step_ms']:.1f} | {s['steady_needed']:.0f} | {s['waiting_sim']:.1f} / "
              f"{s['waiting_meas']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
