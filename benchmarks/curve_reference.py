"""Published closed-loop latency curves through `whatif simulate`: 72 concurrency sweeps of NVIDIA NIM for LLMs
(TensorRT-LLM backend) measured with genai-perf, scored point by point and curve by curve.

The data (benchmarks/data/nim_dli_curves.csv, 787 points) is the pre-collected benchmark set of NVIDIA's Deep
Learning Institute course on sizing LLM inference, as republished in
github.com/wbing520/ai-performance-engineering @0e25b2e236211ad01ed2221bd2c1cfa5b3f47b55,
code/ch10_inference/inference_gpu_cluster_sizing/dataset/nim.csv: genai-perf's averages (TTFT, ITL, output token
throughput, request latency) for Llama-3-8B-Instruct and Llama-3-70B-Instruct as NIM "NIM_TRT-LLM" serves them on
A100-SXM4-80GB and H100 80GB HBM3, 1/2/4/8 GPUs, fp16/bf16/fp8, six input/output lengths (synthetic prompts,
stddev 0; max_tokens = the output length, every reply that long) and concurrency 1-250. Each row keeps its source
line (`source_row`); times are converted from the source's ns. The set does not name its NIM or TensorRT-LLM
versions; Llama 3 NIMs date from mid-2024 (the course's live service runs nvcr.io/nim/meta/llama3-8b-instruct:1.0.3),
a year before the engines whatif's specs describe. The course runs genai-perf as `--streaming --concurrency N
--synthetic-input-tokens-stddev 0 --extra-inputs max_tokens/min_tokens:<output> ignore_eos:true`, perf_analyzer
`--measurement-interval 10000 --stability-percentage 999` (its notebook 03-Measuring-Performance-with-GenAIPerf).

What the set shows, beyond the scores: TensorRT-LLM engines built before June 2024 differ from the `trtllm-engine`
spec where their build defaults did (docs/source/perf_best_practices.md of that time: --multi_block_mode and
--use_custom_all_reduce opt-in, --max_num_tokens max_batch_size x max_input_len when unset; 8192 from PR #1763,
2024-06-11). Measured ITL at one client grows with the context far faster than whatif's split-KV decode, TP runs
decode slower, and TTFT under load grows as if every waiting prompt ran in one step. NIM 1.0 does not publish its
engines' build options, so no version spec is fitted to these runs.

The rule, fixed before any point was scored (no point chosen, dropped or tuned afterwards):
- every point; llama3-8b / 70b as whatif's llama-3-8b / llama-3-70b, A100-SXM4-80GB as a100-sxm-80gb,
  H100_80GB_HBM3 as h100-sxm; tensor parallelism over all the run's GPUs (the course's own loader,
  utils/preprocess_data.py in the same folder: TP = n_gpus, PP = 1);
- fp16/bf16: weights, activations and KV cache in that dtype; fp8: fp8 weights and activations with an fp8 KV
  cache (as the table's NIM 1.8 rows assume);
- engine_profile trtllm-engine (NIM 1.x ships pre-built TensorRT engines) with its own defaults, chunked prefill
  off (TensorRT-LLM's default; the set does not say), measured through the server (the spec's front end paid);
- each point simulated as e2e_reference.py simulates the table's NIM sweep: `concurrency` clients in a closed
  loop, SIM_ROUNDS requests each after a first round that is left out;
- scored: TTFT, ITL and output throughput; a curve's points below saturation are those whose measured output
  throughput is under 90% of the curve's highest; the issue's curve target is every such point within 10%;
- the two runs the set holds at concurrency 5 are both kept; their spread is printed as run-to-run noise.
"""
from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass
from pathlib import Path

import e2e_reference   # (a sibling script: its closed-loop simulation is the one the table's NIM sweep runs)

DATA = Path(__file__).resolve().parent / "data" / "nim_dli_curves.csv"
MODELS = {"meta-llama3-8b-instruct": "llama-3-8b", "meta-llama3-70b-instruct": "llama-3-70b"}
GPUS = {"A100-SXM4-80GB": "a100-sxm-80gb", "H100_80GB_HBM3": "h100-sxm"}
DTYPES = ("fp16", "bf16", "fp8")
METRICS = ("ttft_ms", "itl_ms", "output_tok_s")
SATURATION_SHARE = 0.9     # below saturation: measured throughput under this share of the curve's peak
CURVE_TOLERANCE = 0.10     # the curve target
CURVE_KEY = ("model", "gpu", "n_gpus", "precision", "isl", "osl")


@dataclass(frozen=True)
class Point:
    row: dict                   # the data file's row (strings)
    predicted: dict             # metric -> whatif's figure

    def measured(self, metric: str) -> float:
        return float(self.row[metric])

    def error(self, metric: str) -> float:
        return self.predicted[metric] / self.measured(metric) - 1.0

    @property
    def curve(self) -> tuple:
        return tuple(self.row[k] for k in CURVE_KEY)


def load(path: Path = DATA) -> list[dict]:
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        where = f"{path.name} line {int(r['source_row'])}"
        if r["model"] not in MODELS or r["gpu"] not in GPUS or r["precision"] not in DTYPES:
            raise ValueError(f"{where}: model/gpu/precision {r['model']}/{r['gpu']}/{r['precision']} not mapped; "
                             f"valid: {sorted(MODELS)}, {sorted(GPUS)}, {DTYPES}")
    return rows


def as_table_row(r: dict) -> dict:
    """The point as an e2e_reference.csv row (the fields its simulation reads), under the rule above."""
    dtype = r["precision"]   # weights, activations and KV cache alike
    return {"id": f"dli-line{r['source_row']}", "model": MODELS[r["model"]], "hardware": GPUS[r["gpu"]],
            "gpus": r["n_gpus"], "tp": r["n_gpus"], "weight_dtype": dtype, "act_dtype": dtype, "kv_dtype": dtype,
            "memory_utilization": "", "engine": "trtllm", "engine_profile": "trtllm-engine",
            "measured_via": "server", "harness": "", "chunked_prefill": "", "scheduler_steps": "",
            "max_num_batched_tokens": "", "concurrency": r["concurrency"], "isl": r["isl"], "osl": r["osl"],
            "figure": "genai-perf avg"}


def score(rows: list[dict]) -> list[Point]:
    out = []
    for r in rows:
        sim = e2e_reference.simulate_point(as_table_row(r))
        out.append(Point(r, {m: sim[m] for m in METRICS}))
    return out


def below_saturation(points: list[Point]) -> list[Point]:
    """The points of each curve whose measured output throughput is under SATURATION_SHARE of its peak."""
    peak: dict[tuple, float] = {}
    for p in points:
        peak[p.curve] = max(peak.get(p.curve, 0.0), p.measured("output_tok_s"))
    return [p for p in points if p.measured("output_tok_s") < SATURATION_SHARE * peak[p.curve]]


def stats(errors: list[float]) -> dict:
    a = sorted(abs(e) for e in errors)
    n = len(a)
    return {"n": n, "mape": sum(a) / n, "median_abs": a[n // 2] if n % 2 else (a[n // 2 - 1] + a[n // 2]) / 2,
            "within_10": sum(e <= 0.10 for e in a) / n, "signed_median": sorted(errors)[n // 2]}


def curves(points: list[Point]) -> dict[tuple, dict]:
    """Per curve, over its points below saturation: the worst |error| of each metric and whether every one is
    within CURVE_TOLERANCE."""
    out: dict[tuple, dict] = {}
    for p in below_saturation(points):
        c = out.setdefault(p.curve, {"points": 0, **{m: 0.0 for m in METRICS}})
        c["points"] += 1
        for m in METRICS:
            c[m] = max(c[m], abs(p.error(m)))
    for c in out.values():
        c["passes"] = all(c[m] <= CURVE_TOLERANCE for m in METRICS)
    return out


def repeat_spread(points: list[Point]) -> dict[str, float]:
    """Median and largest relative spread (max/min - 1) between the set's repeated runs of one point."""
    groups: dict[tuple, list[Point]] = {}
    for p in points:
        groups.setdefault(p.curve + (p.row["concurrency"],), []).append(p)
    out = {}
    for m in METRICS:
        spreads = sorted(max(q.measured(m) for q in g) / min(q.measured(m) for q in g) - 1
                         for g in groups.values() if len(g) > 1)
        out[m] = (spreads[len(spreads) // 2], spreads[-1], len(spreads))
    return out


def report(points: list[Point]) -> str:
    lines = ["whatif simulate vs NIM (TensorRT-LLM) genai-perf sweeps, NVIDIA DLI set: "
             f"{len(points)} points, {len({p.curve for p in points})} curves", ""]
    below = below_saturation(points)
    lines.append(f"{'metric':14}{'points':>8}{'MAPE':>8}{'median':>8}{'<=10%':>7}{'signed med':>11}")
    for label, subset in (("all", points), ("below sat.", below), ("concurrency 1", [p for p in points
                                                                                    if p.row["concurrency"] == "1"])):
        lines.append(label)
        for m in METRICS:
            s = stats([p.error(m) for p in subset])
            lines.append(f"  {m:12}{s['n']:>8}{s['mape']:>8.1%}{s['median_abs']:>8.1%}{s['within_10']:>7.0%}"
                         f"{s['signed_median']:>+11.1%}")
    lines += ["", "per curve, below saturation: worst |error| per metric"]
    lines.append(f"{'model':26}{'gpu':16}{'gpus':>5}{'dtype':>6}{'isl':>6}{'osl':>6}{'pts':>5}"
                 + "".join(f"{m:>14}" for m in METRICS) + "  within 10%")
    table = curves(points)
    for key in sorted(table, key=lambda k: max(table[k][m] for m in METRICS)):
        c = table[key]
        lines.append(f"{key[0]:26}{key[1]:16}{key[2]:>5}{key[3]:>6}{key[4]:>6}{key[5]:>6}{c['points']:>5}"
                     + "".join(f"{c[m]:>14.1%}" for m in METRICS) + f"  {'yes' if c['passes'] else 'no'}")
    passed = sum(c["passes"] for c in table.values())
    lines.append(f"curves within {CURVE_TOLERANCE:.0%} at every point below saturation: {passed} of {len(table)}")
    lines += ["", "run-to-run spread of the set's repeated points (median, largest, of n):"]
    for m, (med, worst, n) in repeat_spread(points).items():
        lines.append(f"  {m:12} {med:.1%}  {worst:.1%}  ({n})")
    return "\n".join(lines)


def main(argv=None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args(argv)
    print(report(score(load())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
