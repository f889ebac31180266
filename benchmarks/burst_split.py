"""Where a serving row's measured mean TTFT could go: the opening burst or the steady rounds (diagnostic, nothing
fitted, no prediction changed).

    python benchmarks/burst_split.py --query "engine=='trtllm' and system=='b200_sxm' and \
        model.str.contains('DeepSeek') and mode=='agg'" --below 0.3333 [--launch-scale 3.3]

The client averages TTFT over R rounds of N requests (serving_reference.profile_rounds: InferenceX's 10): the first
round is the opening burst (all N prompts sent at once), the rest a steady closed loop. For each selected row of the
committed table (deduplicated on its measurement) this reruns the simulation, takes its burst round B and steady
round S (the mean of rounds 2-3), and prints the two extreme readings of the measured mean M:
- burst needed = R M - (R - 1) S: the burst round the row implies if the steady rounds are right, and the prefill
  throughput (N x 0.9 ISL tokens over 2 x that burst round, the burst draining at a steady rate) it implies, beside
  the simulated one;
- steady needed = (R M - B) / (R - 1): the steady round it implies if the burst is right, and by Little's law the
  requests then waiting for their first token (the measured request rate x that TTFT), beside the simulation's.
`--launch-scale` multiplies the TensorRT-LLM eager host per launch on Blackwell hosts (the scenario's launch_us) as
benchmarks/eager_host_sensitivity.py does: a sensitivity, never a calibration (docs/accuracy.md, session 58 helper M).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from serving_signatures import SA_BENCH_MEAN_OUTPUT, decoding  # noqa: E402

TABLE = ROOT / "benchmarks" / "data" / "serving_reference.csv"
TRTLLM_BLACKWELL_EAGER_US = 21.5   # trtllm.yaml kernels.eager_launch_by_arch blackwell


def burst_needed_ms(measured_ms: float, steady_ms: float, rounds: int) -> float:
    """The opening-burst round mean (ms) a measured mean over `rounds` rounds implies if every later round is
    `steady_ms`."""
    return rounds * measured_ms - (rounds - 1) * steady_ms


def steady_needed_ms(measured_ms: float, burst_ms: float, rounds: int) -> float:
    """The steady round mean (ms) a measured mean over `rounds` rounds implies if the opening burst is `burst_ms`."""
    if rounds < 2:
        raise ValueError(f"rounds: a burst and at least one steady round, not {rounds}")
    return (rounds * measured_ms - burst_ms) / (rounds - 1)


def burst_tokens_per_s(clients: int, isl: int, burst_ms: float) -> float:
    """Prefill tokens per second of an opening burst of `clients` prompts (mean 0.9 ISL) whose mean TTFT is
    `burst_ms`: drained at a steady rate, the last first token comes at about twice the mean."""
    return clients * SA_BENCH_MEAN_OUTPUT * isl / (2 * burst_ms / 1e3)


def waiting(clients: int, ttft_ms: float, osl: int, tpot_ms: float) -> float:
    """Requests waiting for their first token by Little's law: the clients not decoding at a mean output of 0.9 OSL."""
    return clients - decoding(clients, ttft_ms, tpot_ms, SA_BENCH_MEAN_OUTPUT * osl)


def simulated_rounds(row: dict, launch_scale: float = 1.0) -> tuple[list[float], float, int]:
    """(each simulated round's mean TTFT in ms, the simulated TPOT ms, the client's rounds) of a serving row."""
    import serving_reference as sr
    from whatif.api import simulate
    kw = sr.simulate_kwargs(row, min(sr.SIM_ROUNDS, sr.profile_rounds(row)))
    if launch_scale != 1:
        kw["launch_us"] = TRTLLM_BLACKWELL_EAGER_US * launch_scale
    res = simulate(**kw)
    n = kw["traffic"]["concurrency"]
    recs = sorted(res.records, key=lambda r: r.request.id)
    rounds = [statistics.fmean(r.served_ttft_s(res.frontend) for r in recs[k:k + n]) * 1e3
              for k in range(0, len(recs) - n + 1, n)]
    return rounds, sr.client_means(res, n, sr.profile_rounds(row))[1], sr.profile_rounds(row)


def main(argv: list[str] | None = None) -> None:
    import pandas as pd
    import serving_reference as sr
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--query", required=True, help="pandas query on the committed table's columns")
    ap.add_argument("--below", type=float, default=1 / 3, help="only rows predicted below this x measured TTFT")
    ap.add_argument("--launch-scale", type=float, default=1.0, help="eager host per launch x this (sensitivity)")
    args = ap.parse_args(argv)
    table = pd.read_csv(TABLE).query(args.query, engine="python")
    table = table[(table.scored == 1) & (table.predicted_ttft_ms / table.measured_ttft_ms < args.below)]
    table = table.drop_duplicates(["version", "isl", "osl", "concurrency", "tp", "ep", "gemm_quant",
                                   "measured_ttft_ms"]).sort_values(["gemm_quant", "isl", "concurrency"])
    rows = {r["id"]: r for r in sr.load()}
    print("| row | version | quant TP/EP | ISL/OSL | N | TTFT measured | sim burst / steady | burst needed "
          "| burst tok/s sim / needed | steady needed | waiting sim / needed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for _, x in table.iterrows():
        n, isl, osl = int(x.concurrency), int(x.isl), int(x.osl)
        rounds, tpot, total = simulated_rounds(rows[x.id], args.launch_scale)
        burst, steady = rounds[0], statistics.fmean(rounds[1:3])
        b_need = burst_needed_ms(x.measured_ttft_ms, steady, total)
        s_need = steady_needed_ms(x.measured_ttft_ms, burst, total)
        print(f"| {x.id[-34:]} | {x.version} | {x.gemm_quant} {x.tp}/{x.ep} | {isl}/{osl} | {n} "
              f"| {x.measured_ttft_ms:.0f} | {burst:.0f} / {steady:.0f} | {b_need:.0f} "
              f"| {burst_tokens_per_s(n, isl, burst):.0f} / {burst_tokens_per_s(n, isl, b_need):.0f} "
              f"| {s_need:.0f} | {waiting(n, steady, osl, tpot):.2f} / "
              f"{waiting(n, s_need, osl, x.measured_tpot_ms):.2f} |", flush=True)


if __name__ == "__main__":
    main()
