"""A disaggregated row's prefill pool: the rate it served (Little's law) against whatif's priced full step (diagnostic).

    python benchmarks/prefill_pool_rate.py [--filter TEXT]

In a closed loop of N clients the served rate is X = N / cycle, cycle = TTFT + (mean output - 1) x TPOT (sa-bench's
mean output 0.9 x OSL for a db-dump row; serving_signatures.mean_output). Every request crosses the prefill pool
once, so X per prefill worker is at most the worker's capacity: the prompts its full step packs (the pool's own
limits as the mapping launches them, serving_reference.prefill_pool: max running requests and token budget, split
over the attention-DP ranks where the engine's limits are the group's, SGLang) over that step's price
(`estimate` of the prefill layout at that batch, the mean prompt 0.9 x ISL). The script prints both from the
measured and the predicted TTFT/TPOT (the committed table) and the priced capacity, so a TTFT miss under load
reads as "the pool served fewer prompts a second than whatif's step allows" (measured X / capacity near 1 where
the pool saturated) or not. Nothing here feeds a prediction.
`--expert-skew S` (session 65 N): prices the expert-parallel prefill layouts with whatif's Zipf routing skew S
(--expert-skew; the busiest EP rank's load over the mean, expert_load.busiest_rank_factor: 1.65 at 0.8, 2.14 at 1.0
for 256 experts on 8 ranks), layouts without EP as before: how far an unpriced routing imbalance would move a pool.
`--waiting` (session 69 C) adds where the measured queue can sit: the clients before their first token a prefill rank
(N minus those decoding, serving_signatures.decoding; measured / predicted), whatif's step at one prompt a rank, and
the factor `need` by which whatif's step would have to be too fast for the measured rate to be a saturated prefill
GPU (prompts a step / measured rate a worker / priced step), at one prompt a rank (`need 1`) and at the full step
(`need k`). Where the waiting clients a rank exceed the full step's prompts and `need` far exceeds the light-load
ratio of the same layout (measured / predicted TTFT at <= 8 clients), the wait sits in a stage that does not batch.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from serving_signatures import SA_BENCH_MEAN_OUTPUT, decoding, served_per_s  # noqa: E402

TABLE = ROOT / "benchmarks" / "data" / "serving_reference.csv"
def prompts_per_step(ranks: int, max_batch: int, token_budget: int, prompt: int, group_limits: bool) -> int:
    """Prompts one full prefill step of a worker packs: per attention-DP rank min(max batch, budget // prompt), at
    least one, the limits divided over the ranks where they are the group's (SGLang: max_running_requests //
    dp_size, chunked_prefill_size // dp_size), each rank's own otherwise (TensorRT-LLM), times the ranks."""
    per_batch = max_batch // ranks if group_limits else max_batch
    per_budget = token_budget // ranks if group_limits else token_budget
    return ranks * max(1, min(max(per_batch, 1), per_budget // max(prompt, 1)))


def waiting_clients(clients: float, ttft_ms: float, tpot_ms: float, mean_output: float) -> float:
    """Clients of a closed loop waiting for their first token (Little's law: the served rate x TTFT, i.e. the N not
    decoding), wherever they wait: router, bootstrap, the prefill queue and step, the KV send."""
    return clients - decoding(clients, ttft_ms, tpot_ms, mean_output)


def step_factor_needed(prompts: int, served_per_s_a_worker: float, step_s: float) -> float:
    """How many times whatif's priced step (`prompts` prompts, `step_s`) the worker's real step must take for a
    saturated prefill GPU to serve only `served_per_s_a_worker` (prompts / rate / priced step); inf at rate 0."""
    return prompts / served_per_s_a_worker / step_s if served_per_s_a_worker > 0 and step_s > 0 else float("inf")


def skew_kwargs(ep: int, skew: float) -> dict:
    """The estimate argument pricing routing skew `skew` on an EP layout (whatif rejects it without EP): {} else."""
    return {"expert_skew": skew} if ep > 1 and skew else {}


def priced_step_s(row: dict, prompts: int, prompt: int, budget: int, skew: float = 0.0) -> float:
    """whatif's time for `prompts` prompts of `prompt` tokens on the row's prefill layout (all prefill passes);
    `skew`: the Zipf routing skew its EP layout is priced with (0: uniform, the mapping's)."""
    import serving_reference as sr
    from step_ops import row_estimate
    lay = sr._layout(row, "prefill_")
    gpus = lay["tp"] * lay["pp"]
    est = row_estimate(row, batch=prompts, prompt=prompt, output=2, prefill_chunk=budget, tp=lay["tp"],
                       pp=lay["pp"], ep=lay.get("ep", 1), attention_dp=lay.get("attention_dp", 1), gpus=gpus,
                       nodes=-(-gpus // 8), **skew_kwargs(lay.get("ep", 1), skew))
    return sum(p.time_s * n for p, n in est.prefill)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filter", default="_disagg_", help="rows whose id contains this text (default: _disagg_)")
    ap.add_argument("--table", default=str(TABLE), help="a serving_reference.csv-format table (default: committed)")
    ap.add_argument("--expert-skew", type=float, default=0.0,
                    help="Zipf routing skew the EP prefill layouts are priced with (default 0: uniform, the mapping's)")
    ap.add_argument("--waiting", action="store_true",
                    help="add the clients waiting a prefill rank and the step factor a saturated pool would need")
    args = ap.parse_args(argv)
    import serving_reference as sr
    rows = {r["id"]: r for r in sr.load()}
    with open(args.table, newline="") as f:
        scored = [t for t in csv.DictReader(f) if args.filter in t["id"] and t["mode"] == "disagg"
                  and t["predicted_ttft_ms"] not in ("", "nan") and t["scored"] == "1"]
    print(f"{'row':52} {'prefill':>11} {'W':>2} {'N':>5} {'X meas':>7} {'X pred':>7} {'k':>3} {'step ms':>8} "
          f"{'cap':>6} {'meas/cap':>8} {'TTFT x':>6}"
          + (f" {'wait/rank m':>11} {'p':>5} {'1/rank ms':>9} {'need 1':>6} {'need k':>6}" if args.waiting else ""))
    for t in sorted(scored, key=lambda t: (t["engine"], t["gemm_quant"], int(t["isl"]), t["id"])):
        row = rows[t["id"]]
        n = sr.concurrency(row)
        db_dump = row["silicon_data_source"].startswith("db-dump")
        mean_out = int(row["osl"]) * (SA_BENCH_MEAN_OUTPUT if db_dump else 1)
        prompt = round(int(row["isl"]) * (SA_BENCH_MEAN_OUTPUT if db_dump else 1))
        workers = int(float(row["prefill_num_workers"]))
        pool = sr.prefill_pool(row)
        lay = sr._layout(row, "prefill_")
        ranks = lay.get("attention_dp", 1)
        k = prompts_per_step(ranks, pool["prefill_max_batch"], pool["prefill_token_budget"], prompt,
                             row["backend"] == "sglang")
        step = priced_step_s(row, k, prompt, pool["prefill_token_budget"], args.expert_skew)
        cap = k / step
        x = {w: served_per_s(n, float(t[f"{w}_ttft_ms"]), float(t[f"{w}_tpot_ms"]), mean_out) / workers
             for w in ("measured", "predicted")}
        name = f"tp{lay['tp']}/a{ranks}/e{lay.get('ep', 1)}"
        print(f"{t['id'][:52]:52} {name:>11} {workers:2d} {n:5d} {x['measured']:7.2f} {x['predicted']:7.2f} "
              f"{k:3d} {step * 1e3:8.1f} {cap:6.2f} {x['measured'] / cap:8.2f} "
              f"{float(t['predicted_ttft_ms']) / float(t['measured_ttft_ms']):6.2f}"
              + (_waiting_columns(row, t, n, mean_out, workers, ranks, prompt, pool, x["measured"], k, step, args)
                 if args.waiting else ""), flush=True)
    return 0


def _waiting_columns(row, t, n, mean_out, workers, ranks, prompt, pool, x_meas, k, step, args) -> str:
    """The --waiting columns of one row (see the module docstring)."""
    wait = {w: waiting_clients(n, float(t[f"{w}_ttft_ms"]), float(t[f"{w}_tpot_ms"]), mean_out) / (workers * ranks)
            for w in ("measured", "predicted")}
    one = priced_step_s(row, ranks, prompt, pool["prefill_token_budget"], args.expert_skew)
    return (f" {wait['measured']:11.1f} {wait['predicted']:5.1f} {one * 1e3:9.1f} "
            f"{step_factor_needed(ranks, x_meas, one):6.2f} {step_factor_needed(k, x_meas, step):6.2f}")


if __name__ == "__main__":
    raise SystemExit(main())
