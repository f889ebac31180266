"""The one-completion wait in a run's measured TTFT, row by row (issue 37, session 66 D): a diagnostic, nothing
fitted and nothing fed to a prediction.

A closed loop of N clients whose every request waits for another request to complete before its prompt is taken
(one slot short, or one request more than the slots) measures TTFT = base + D / N, D = (OSL - 1) x TPOT the time one
request decodes, D / N the gap between completions (serving_signatures.py's slope, ~1 in the TensorRT-LLM 1.0.0rc3
Llama-3.1-8B run, ~0 in the same release's Qwen3-32B and Qwen3-235B runs). Per row, with the rows of its group
(serving_signatures.output_groups: one run, layout, ISL and N, differing only in output length):
- base_others: the mean of measured TTFT - D / N over the group's *other* rows (the TTFT without the wait);
- wait share w = (measured TTFT - base_others) / (D / N): ~1 the row waited one completion gap, ~0 it did not.
w presumes the other rows waited, so it is read only in runs whose median slope (serving_signatures.slopes) is ~1;
in a run without the wait (slope ~0) it reads ~mean(other D) / own D, no information.
A launch setting (max batch, KV, CUDA-graph sizes) holds for a whole run, so a run whose rows mix w ~1 and w ~0 waits
for a reason that changes from row to row. Per run the table also scores, as arithmetic on the committed columns,
the committed TTFT with the gap added from the prediction's own TPOT (predicted TTFT + (OSL - 1) x predicted TPOT / N)
against the committed TTFT as it is: what modelling the wait would be worth, not a prediction whatif makes.

    python benchmarks/completion_wait.py [--engine trtllm] [--max-clients 32]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from serving_signatures import decode_per_client_ms, load, output_groups, slopes  # noqa: E402

NO_WAIT = 0.3   # a wait share below this: the row did not wait a completion gap
WAIT_RUN = (0.7, 1.5)  # a run whose median slope lies in this range waits one gap (serving_signatures: ~1 vs ~0)


def wait_shares(rows: list[dict], max_clients: int = 32) -> list[tuple[dict, float]]:
    """(row, wait share w) for every row of a group of >= 3 output lengths at N <= max_clients (module docstring)."""
    out = []
    for members in output_groups(rows, max_clients).values():
        waitless = [float(m["measured_ttft_ms"]) - decode_per_client_ms(m) for m in members]
        for i, m in enumerate(members):
            base_others = statistics.fmean(w for j, w in enumerate(waitless) if j != i)
            out.append((m, (float(m["measured_ttft_ms"]) - base_others) / decode_per_client_ms(m)))
    return out


def with_wait_ms(row: dict) -> float:
    """The committed predicted TTFT plus one completion gap priced from the predicted TPOT (ms)."""
    n = float(row["concurrency"])
    return float(row["predicted_ttft_ms"]) + (int(float(row["osl"])) - 1) * float(row["predicted_tpot_ms"]) / n


def ttft_score(pairs: list[tuple[float, float]]) -> tuple[float, int]:
    """(MAPE %, rows off by more than 3x) of (predicted, measured) ms pairs."""
    if not pairs:
        raise ValueError("ttft_score: no rows")
    ratios = [p / m for p, m in pairs]
    return 100 * statistics.fmean(abs(r - 1) for r in ratios), sum(r > 3 or r < 1 / 3 for r in ratios)


def by_run(shares: list[tuple[dict, float]]) -> dict[tuple, list[tuple[dict, float]]]:
    out: dict[tuple, list[tuple[dict, float]]] = {}
    for row, w in shares:
        if row.get("predicted_ttft_ms") and row.get("predicted_tpot_ms"):
            out.setdefault((row["engine"], row["version"], row["model"], row["system"]), []).append((row, w))
    return out


def run_slopes(rows: list[dict], max_clients: int) -> dict[tuple, float]:
    """Median decode-time slope per (engine, version, model, GPU), from serving_signatures.slopes."""
    return {(run[0], run[1], run[3], run[4]): statistics.median(g[3] for g in groups)
            for run, groups in slopes(rows, max_clients).items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", default="", help="only runs of this engine (trtllm, vllm, sglang)")
    ap.add_argument("--max-clients", type=int, default=32, help="groups at N up to this (default 32)")
    args = ap.parse_args(argv)
    rows = [r for r in load() if not args.engine or r["engine"] == args.engine]
    runs = by_run(wait_shares(rows, args.max_clients))
    slope = run_slopes(rows, args.max_clients)
    print(f"per run (groups of >= 3 output lengths, N <= {args.max_clients}): median slope of TTFT on D/N; committed "
          "TTFT against committed + one completion gap (predicted TPOT), MAPE and rows off by 3x:")
    print("| engine | version | model | GPU | rows | median slope | committed | + gap |")
    print("|---|---|---|---|---|---|---|---|")
    for key, members in sorted(runs.items()):
        measured = [float(r["measured_ttft_ms"]) for r, _ in members]
        now = ttft_score([(float(r["predicted_ttft_ms"]), m) for (r, _), m in zip(members, measured)])
        gap = ttft_score([(with_wait_ms(r), m) for (r, _), m in zip(members, measured)])
        engine, version, model, gpu = key
        print(f"| {engine} | {version or '?'} | {model.split('/')[-1]} | {gpu} | {len(members)} | "
              f"{slope.get(key, float('nan')):.2f} | {now[0]:.1f}%, {now[1]} | {gap[0]:.1f}%, {gap[1]} |")
    print(f"\nruns whose median slope is in {WAIT_RUN}: wait share w, and the rows that did not wait (w < {NO_WAIT}):")
    print("| engine | version | model | tp | isl/osl | N | w | measured ms | D/N ms | predicted ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key, members in sorted(runs.items()):
        if not WAIT_RUN[0] < slope.get(key, 0.0) < WAIT_RUN[1]:
            continue
        shares = [w for _, w in members]
        print(f"| {key[0]} | {key[1]} | {key[2].split('/')[-1]} | all | {len(members)} rows | | median "
              f"{statistics.median(shares):.2f} | | | |")
        for r, w in sorted(members, key=lambda m: (int(m[0]["tp"]), int(m[0]["isl"]), int(m[0]["osl"]))):
            if w < NO_WAIT:
                print(f"| {key[0]} | {key[1]} | {key[2].split('/')[-1]} | {r['tp']} | {r['isl']}/{r['osl']} | "
                      f"{r['concurrency']} | {w:.2f} | {float(r['measured_ttft_ms']):.0f} | "
                      f"{decode_per_client_ms(r):.0f} | {float(r['predicted_ttft_ms']):.0f} |")


if __name__ == "__main__":
    main()
