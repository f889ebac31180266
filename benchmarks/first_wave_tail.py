"""The whole TTFT distribution of a light-load run, whatif's against a public run of InferenceX's own DeepSeek
TensorRT-LLM recipe: mean, median, spread and 99th percentile of 10N requests, and the first wave's share of the
mean; a diagnostic, nothing fitted into a prediction (issue 37; docs/accuracy.md, "Session 73 A").

    python benchmarks/first_wave_tail.py

The serving rows hold the client's MEAN TTFT over 10N requests (InferenceX benchmark_serving.py calculate_metrics
`mean_ttft_ms`, utils/process_result.py `mean_ttft`, read by the exporter as metrics.mean_ttft), which carries the
opening burst of N prompts sent at once. whatif simulates that burst; if it also reproduces the median, spread and
p99 of a public run of the same recipe, the statistic is scored like for like and a miss of the rows is not a tail
whatif leaves out. The public runs (github.com/zufayu/ClaudeSkillsE2EPerf result_*.json: benchmark_serving.py,
--random-range-ratio 0.8, --num-prompts 10N, the recipe's yaml; measured, quoted as published) are matched to the
scored row of the same recipe, precision, TP and N, with the run's expert parallelism.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass

import numpy as np

ZUFAYU = "zufayu/ClaudeSkillsE2EPerf"


@dataclass(frozen=True)
class PublicRun:
    """One public result_*.json: where it is, the row whose mapping stands in for it, and what it measured (ms)."""
    path: str
    commit: str
    row_id: str
    ep: int
    mean: float
    median: float
    std: float
    p99: float
    tpot: float
    note: str


PUBLIC_RUNS = (
    PublicRun("results/b200_dsr_fp8/b200_dsr_fp8_mtp0_ep1_tp8_post3/result_fp8_throughput_chat_ep1_c8.json",
              "159fe9b", "dsr1_b200_trtllm_fp8_agg_1024x1024_c8_cfg75", 1,
              92.02, 72.60, 52.80, 258.17, 9.871, "fp8 TP8 EP1 c8, image unrecorded (1.2 line); row 1.2.0rc6.post2"),
    PublicRun("results/b200_dsr_fp4/b200_dsr_fp4_mtp0_ep4_tp4_rc10/result_fp4_throughput_chat_ep4_c4.json",
              "5e54ac8", "dsr1_b200_trtllm_fp4_agg_1024x1024_c4_cfg82", 4,
              84.89, 76.63, 23.76, 161.12, 8.443, "NVFP4 TP4 EP4 c4, 1.3.0rc10, eager; row's mapping at EP4"),
    PublicRun("results/b200_dsr_fp4/b200_dsr_fp4_mtp0_ep8_tp8_post2/result_fp4_throughput_chat_ep8_c4.json",
              "9b435dd", "dsr1_b200_trtllm_fp4_agg_1024x1024_c4_cfg91", 8,
              60.98, 56.44, 13.81, 109.20, 9.163,
              "NVFP4 TP8 EP8 c4, 1.2.0rc6.post2, piecewise graphs (whatif: eager); row's mapping at EP8"),
)


def ttft_stats(ttft_ms: list[float], clients: int) -> dict[str, float]:
    """Mean, median, population std (numpy's, as benchmark_serving.py), p99 of the requests' TTFT (ms), the first
    wave's (the first `clients` requests') mean and the rest's, and the first wave's share of the mean."""
    t = np.asarray(ttft_ms, dtype=float)
    if clients < 1 or len(t) <= clients:
        raise ValueError(f"clients: need 1 <= clients < {len(t)} requests, got {clients}")
    mean, first, rest = float(t.mean()), float(t[:clients].mean()), float(t[clients:].mean())
    return {"mean": mean, "median": float(np.median(t)), "std": float(t.std()), "p99": float(np.percentile(t, 99)),
            "first_wave": first, "rest": rest, "first_wave_share": (first - rest) * clients / len(t) / mean}


def simulated(run: PublicRun, rows: dict[str, dict]) -> tuple[dict[str, float], float]:
    """whatif's per-request TTFT statistics (10 rounds from the opening burst, through the front end) and mean TPOT
    (ms) for the run's row at the run's expert parallelism."""
    import serving_reference as sr
    from whatif.api import simulate
    row = dict(rows[run.row_id])
    tp = sr._layout(row)["tp"]
    row["moe_ep_size"], row["moe_tp_size"] = str(run.ep), str(tp // run.ep)
    kw = sr.simulate_kwargs(row, sr.profile_rounds(row))
    res = simulate(**kw)
    recs = sorted(res.records, key=lambda r: r.request.id)
    ttft = [r.served_ttft_s(res.frontend) * 1e3 for r in recs]
    tpot = statistics.fmean(r.tpot_s * 1e3 for r in recs if r.tpot_s)
    return ttft_stats(ttft, kw["traffic"]["concurrency"]), tpot


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    import serving_reference as sr
    rows = {r["id"]: r for r in sr.load()}
    print("| public run (ClaudeSkillsE2EPerf) | mean | median | std | p99 | TPOT | whatif mean | median | std | p99 "
          "| first wave / rest | first wave's share of the mean | TPOT |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for run in PUBLIC_RUNS:
        s, tpot = simulated(run, rows)
        print(f"| {run.note} ({run.commit}) | {run.mean:.1f} | {run.median:.1f} | {run.std:.1f} | {run.p99:.1f} "
              f"| {run.tpot:.2f} | {s['mean']:.1f} | {s['median']:.1f} | {s['std']:.1f} | {s['p99']:.1f} "
              f"| {s['first_wave']:.0f} / {s['rest']:.0f} | {s['first_wave_share']:.0%} | {tpot:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
