"""End-to-end accuracy against published, measured serving numbers (benchmarks/data/e2e_reference.csv).

Each row of the table is one figure from a public source (its URL and the exact figure quoted), with the
setup it was measured in: model, GPU, count, parallelism, precision, engine, batch / concurrency / request
rate, input and output lengths, metric. whatif predicts each from that setup alone, through the engine spec
the row names (`--engine`, or the version profile in `engine_profile`: its CUDA-graph sizes, CPU per step,
memory accounting, scheduler limits, version-specific kernels). Rows measured through the HTTP server
(`measured_via` server) add the spec's front end (HTTP, tokenization, hand-off) to TTFT and E2E:

- batch1_latency: `estimate` at batch 1 (TTFT with one output token; ITL = TPOT)
- fixed_batch: `estimate` of one static batch (throughput per GPU, prefill included)
- max_throughput: `estimate` at its max batch (memory and the engine's max_num_seqs decide it)
- rate_curve: `simulate` (continuous batching) of a published closed-loop concurrency sweep: `concurrency`
  clients, each sending its next request when its last one is answered (`whatif simulate --concurrency`,
  simulate_point); the front end is added to each TTFT (the request reaches the engine that much after the
  client sent it)
- rate_poisson: `simulate` of a published open-loop run: `requests` requests at Poisson `rate_req_s`, their
  lengths from the built-in profile the row's `lengths` names (`whatif simulate --rate --lengths`,
  simulate_poisson); TTFT and E2E through the server as above. `rate_req_s` inf: every request sent at once
  (bench_serving --request-rate inf), output tok/s over the run from the first send to the last token back

A cross-check, not scored: the max-throughput rows trtllm-bench measured also run through `simulate` as the
harness ran them (simulator_cross_check), so the simulator is validated on the same figures.

A row's `chunked_prefill`, `scheduler_steps` and `max_num_batched_tokens` (blank: the engine spec's default)
state a deployment's own scheduler settings, with their source or assumption in the row's notes.

A row's `harness` names the benchmark tool when it sets the engine's limits itself: trtllm-bench throughput
derives max_batch_size and max_num_tokens from the model, the GPUs and the dataset's lengths
(whatif/validate/trtllm_bench.py), and the row is predicted with those (`Scenario.max_num_seqs`,
`max_num_batched_tokens`).

Nothing here is fitted: rows are never tuned one by one, and no parameter of whatif is set from them.

    python benchmarks/e2e_reference.py            # every row and the cross-check (7 s)
    python benchmarks/e2e_reference.py --fast     # the rows that need no simulation (no cross-check)
    python benchmarks/e2e_reference.py --json     # one JSON object
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whatif.roofline.config import Parallelism, Precision  # noqa: E402
from whatif.roofline.estimate import Workload  # noqa: E402
from whatif.scenario import Scenario  # noqa: E402
from whatif.validate.trtllm_bench import DATASET_REQUESTS, bench_limits  # noqa: E402
from whatif.validate.accuracy import error_stats, grouped  # noqa: E402

TABLE = Path(__file__).resolve().parent / "data" / "e2e_reference.csv"
SIM_ROUNDS = 4              # closed-loop sweeps: requests per client after the first round
SIMULATED = ("rate_curve", "rate_poisson")
HARNESSES = ("", "trtllm-bench")   # "": the engine's own defaults (or the row's stated settings)


@dataclass(frozen=True)
class Scored:
    row: dict
    predicted: float

    @property
    def measured(self) -> float:
        return float(self.row["measured"])

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1.0


def load_rows(path: Path = TABLE) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def scenario(row: dict, batch: int = 1, prompt: int | None = None, output: int | None = None) -> Scenario:
    tp = int(row["tp"])
    mu = row.get("memory_utilization") or None
    sc = Scenario(model=row["model"], hardware=row["hardware"], gpus=int(row["gpus"]), parallel=Parallelism(tp=tp),
                  precision=Precision(weight=row["weight_dtype"], activation=row["act_dtype"], kv=row["kv_dtype"]),
                  workload=Workload(batch=batch, prompt=prompt or int(row["isl"]), output=output or int(row["osl"])),
                  kernel_engine=row.get("engine_profile") or row["engine"],
                  memory_utilization=float(mu) if mu else None)
    seqs, tokens = harness_limits(row, sc)
    stated = row.get("max_num_batched_tokens") or ""   # a deployment's own token budget (its notes say why)
    return replace(sc, max_num_seqs=seqs, max_num_batched_tokens=int(stated) if stated else tokens)


def harness_limits(row: dict, sc: Scenario) -> tuple[int | None, int | None]:
    """The scheduler limits the row's benchmark harness ran the engine with: (max sequences, max tokens per
    step); (None, None) where it kept the engine's defaults. trtllm-bench derives both from the dataset
    (whatif/validate/trtllm_bench.py)."""
    harness = row.get("harness") or ""
    if harness not in HARNESSES:
        raise ValueError(f"{row['id']}: harness {harness!r} is not one of {HARNESSES}")
    if harness != "trtllm-bench":
        return None, None
    model, system, par, _ = sc.resolve()
    return bench_limits(model, system, par.tp, par.pp, row["weight_dtype"], row["kv_dtype"],
                        int(row["isl"]), int(row["osl"]))


def engine_options(row: dict) -> dict:
    """The scheduler options a row states over its engine spec's defaults (the simulated rows): its
    `chunked_prefill` ("true"/"false"; blank keeps the spec's) and `scheduler_steps` (vLLM 0.6's
    --num-scheduler-steps; blank: 1), the reason in its notes."""
    value = row.get("chunked_prefill") or ""
    if value not in ("", "true", "false"):
        raise ValueError(f"{row['id']}: chunked_prefill {value!r} is not true, false or blank")
    out = {"chunked_prefill": value == "true"} if value else {}
    steps = row.get("scheduler_steps") or ""
    if steps:
        out["scheduler_steps"] = int(steps)
    return out


def through_server(row: dict) -> bool:
    """Whether the row was measured by a client of the HTTP server (its TTFT and E2E include the engine
    spec's `frontend`), not offline (an in-process engine: trtllm-bench, gptSessionBenchmark, benchmark_latency)."""
    via = row.get("measured_via") or "offline"
    if via not in ("server", "offline"):
        raise ValueError(f"{row['id']}: measured_via {via!r} is not server or offline")
    return via == "server"


def predict_estimate(row: dict) -> float:
    """A row that one `estimate` answers (every regime but the rate curves)."""
    regime, metric, tp = row["regime"], row["metric"], int(row["tp"])
    if regime == "batch1_latency":
        est = scenario(row).run(with_max_batch=False)
        ttft = est.served_ttft_s if through_server(row) else est.ttft_s
        return {"ttft_ms": ttft, "itl_ms": est.tpot_s}[metric] * 1e3
    if regime == "fixed_batch":
        est = scenario(row, batch=int(row["batch"])).run(with_max_batch=False)
        if metric == "latency_ms":   # the whole batch, prefill to last token
            return (est.served_e2e_s if through_server(row) else est.e2e_s) * 1e3
        return est.throughput_tok_s / (tp if metric == "output_tok_s_per_gpu" else 1)
    if regime == "max_throughput":
        est = scenario(row).run()
        return est.max_batch_throughput_tok_s / (tp if metric == "output_tok_s_per_gpu" else 1)
    raise ValueError(f"{row['id']}: regime {regime} is not estimated")


def simulated_latencies(row: dict, sc: Scenario, spec, skip: int = 0, requests=None) -> dict[str, float]:
    """TTFT, TPOT, ITL and E2E (ms, the row's statistic: median where its figure says median or p50, else the
    mean) and output tok/s (over the run) of `simulate` on `spec` (or on `requests`, when given), as the
    benchmark client counts them: through the server's front end where the row was measured through it, every
    request after the first `skip` (in id order)."""
    import numpy as np

    from whatif.simulator.cluster import simulate
    from whatif.simulator.config import SchedulerConfig, SimConfig

    config = SimConfig(sc, spec, SchedulerConfig.for_engine(sc.engine_spec(), **engine_options(row)))
    res = simulate(config, requests=requests)
    records = sorted(res.records, key=lambda r: r.request.id)[skip:]
    assert all(r.finish_s is not None for r in records), row["id"]
    fe = sc.engine_spec().frontend if through_server(row) else None
    front = [r.served_ttft_s(fe) - r.ttft_s for r in records]   # (a closed loop's front-end queue included)
    pick = np.median if "median" in row["figure"].lower() or "p50" in row["figure"] else np.mean
    return {"ttft_ms": float(pick([r.ttft_s + f for r, f in zip(records, front)])) * 1e3,
            "tpot_ms": float(pick([r.tpot_s for r in records if r.tpot_s is not None])) * 1e3,
            "itl_ms": float(pick(np.concatenate([r.inter_token_s for r in records]))) * 1e3,
            "e2e_ms": float(pick([r.e2e_s + f for r, f in zip(records, front)])) * 1e3,
            "output_tok_s": output_rate(records, front)}


def output_rate(records, front) -> float:
    """Output tokens per second over the run, from the first send to the last token back (each request's
    front end, `front`, after its finish): bench_serving's and trtllm-bench's output throughput."""
    sent = [r.request.arrival_s if r.request.sent_s is None else r.request.sent_s for r in records]
    span = max(r.finish_s + f for r, f in zip(records, front)) - min(sent)
    return sum(r.request.output for r in records) / span


def sent_at_once(spec) -> list:
    """The spec's requests, every one sent at t = 0 (bench_serving --request-rate inf; trtllm-bench throughput
    queues its whole dataset)."""
    from whatif.simulator.workload import generate

    return [replace(r, arrival_s=0.0) for r in generate(spec)]


def simulate_point(row: dict) -> dict[str, float]:
    """One point of a closed-loop concurrency sweep: `simulate` with `concurrency` clients, each sending its
    next request when its last one is answered (simulator/closed_loop.py), every TTFT counted from its request's
    send. The first round (all sent at once) is left out: the published figures are steady-state ones."""
    from whatif.simulator.workload import WorkloadSpec

    c = int(row["concurrency"])
    spec = WorkloadSpec(requests=c * (SIM_ROUNDS + 1), prompt=int(row["isl"]), output=int(row["osl"]), seed=1,
                        concurrency=c, through_server=through_server(row))
    return simulated_latencies(row, scenario(row), spec, skip=c)


def simulate_poisson(row: dict) -> dict[str, float]:
    """A published open-loop run: `requests` requests arriving as a Poisson process at `rate_req_s` (inf: all
    sent at once), lengths drawn from the `lengths` profile (the dataset the benchmark sampled)."""
    from whatif.simulator.workload import WorkloadSpec

    rate = float(row["rate_req_s"])
    spec = WorkloadSpec(rate=1.0 if math.isinf(rate) else rate, requests=int(row["requests"]),
                        lengths=row["lengths"], seed=1)
    # (the scenario's fixed lengths are unused: the profile draws each request's)
    sent = sent_at_once(spec) if math.isinf(rate) else None
    return simulated_latencies(row, scenario(row, prompt=1, output=1), spec, requests=sent)


def simulate_throughput(row: dict) -> float:
    """Output tokens/s of a trtllm-bench max-throughput row run as the harness runs it: its dataset's requests
    (perf-overview.md's count for the ISL/OSL) all queued at once, the engine scheduling them (in-flight
    batching, its capacity policy, CUDA-graph padding), total output over the run from first send to last
    token (trtllm-bench's "Total Output Throughput")."""
    from whatif.simulator.cluster import simulate
    from whatif.simulator.config import SchedulerConfig, SimConfig
    from whatif.simulator.workload import WorkloadSpec

    isl, osl = int(row["isl"]), int(row["osl"])
    sc = scenario(row)
    spec = WorkloadSpec(requests=DATASET_REQUESTS[(isl, osl)], prompt=isl, output=osl, seed=1)
    config = SimConfig(sc, spec, SchedulerConfig.for_engine(sc.engine_spec()))
    records = simulate(config, requests=sent_at_once(spec)).records
    assert all(r.finish_s is not None for r in records), row["id"]
    return output_rate(records, [0.0] * len(records))   # (offline: no front end)


def simulator_cross_check(rows: list[dict]) -> list[Scored]:
    """The max-throughput rows trtllm-bench measured, through `simulate` instead of the static estimate (not
    part of the table's score: the same figures, a second mechanism)."""
    return [Scored(r, simulate_throughput(r)) for r in rows
            if r["regime"] == "max_throughput" and r.get("harness") == "trtllm-bench"
            and (int(r["isl"]), int(r["osl"])) in DATASET_REQUESTS]


def score(rows: list[dict], fast: bool = False) -> list[Scored]:
    out, points = [], {}
    for row in rows:
        if row["regime"] in SIMULATED:
            if fast:
                continue
            key = (row["source"], row["model"], row["hardware"], row["engine_profile"], row["regime"],
                   row["isl"], row["osl"], row["lengths"], row["concurrency"], row["rate_req_s"])
            if key not in points:
                points[key] = (simulate_point if row["regime"] == "rate_curve" else simulate_poisson)(row)
            out.append(Scored(row, points[key][row["metric"]]))
        else:
            out.append(Scored(row, predict_estimate(row)))
    return out


def summary(scored: list[Scored]) -> dict:
    groups = {"all": error_stats(scored)}
    for name, key in (("metric", lambda s: (s.row["metric"],)), ("regime", lambda s: (s.row["regime"],)),
                      ("engine", lambda s: (s.row["engine"],))):
        for k, rows in grouped(scored, key).items():
            groups[f"{name}={k[0]}"] = error_stats(rows)
    return groups


def report(scored: list[Scored], cross: list[Scored] = ()) -> str:
    lines = [f"{'row':<58} {'measured':>10} {'predicted':>10} {'error':>7}"]
    for s in scored:
        lines.append(f"{s.row['id']:<58} {s.measured:>10.4g} {s.predicted:>10.4g} {s.error:>+7.1%}")
    lines.append("")
    lines.append(f"{'group':<34} {'n':>3} {'MAPE':>7} {'median':>7} {'<=10%':>6} {'<=25%':>6} {'signed med':>10}")
    for name, st in summary(scored).items():
        lines.append(f"{name:<34} {st['n']:>3} {st['mape']:>7.1%} {st['median_abs']:>7.1%} {st['within_10']:>6.0%} "
                     f"{st['within_25']:>6.0%} {st['median_signed']:>+10.1%}")
    lines.append("")
    lines.append("worst ten rows:")
    for s in sorted(scored, key=lambda s: -abs(s.error))[:10]:
        lines.append(f"  {s.error:>+7.1%}  {s.row['id']}")
    if cross:
        by_id = {s.row["id"]: s for s in scored}
        st = error_stats(cross)
        lines += ["", "simulator cross-check: the trtllm-bench rows through `simulate` (the dataset's requests "
                  "queued at once)", f"{'row':<58} {'measured':>10} {'estimate':>10} {'simulate':>10}"]
        for s in cross:
            est = by_id[s.row["id"]].error if s.row["id"] in by_id else float("nan")
            lines.append(f"{s.row['id']:<58} {s.measured:>10.4g} {est:>+10.1%} {s.error:>+10.1%}")
        lines.append(f"simulate: n {st['n']}, MAPE {st['mape']:.1%}, median {st['median_abs']:.1%}, "
                     f"{st['within_10']:.0%} within 10%, {st['within_25']:.0%} within 25%")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fast", action="store_true", help="only the rows that need no simulation")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    rows = load_rows()
    scored = score(rows, fast=args.fast)
    cross = [] if args.fast else simulator_cross_check(rows)
    if args.json:
        print(json.dumps({"rows": [{"id": s.row["id"], "measured": s.measured, "predicted": s.predicted,
                                    "error": s.error} for s in scored], "summary": summary(scored),
                          "simulator_cross_check": error_stats(cross) if cross else None}))
    else:
        print(report(scored, cross))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
