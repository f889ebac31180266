"""A deployment's TTFT miss split into its light-load level and its growth with load (issue 37, session 71 H): a
diagnostic on the committed table, nothing fitted and nothing fed to a prediction.

A deployment is one engine release, GPU, model, layout, precision and ISL/OSL measured at several client counts N
(repeated measurements of one N are averaged). Per deployment whose lowest N is light (<= LIGHT clients):
- level: predicted / measured TTFT at that lowest N0;
- growth at N: (predicted(N) / predicted(N0)) / (measured(N) / measured(N0)): 1 when the prediction rises with load
  as the measurement does, below 1 when the measured TTFT gains a cost with load that the prediction lacks.
The row's ratio predicted / measured is level x growth, so a miss that is flat in N (growth 1) is a light-load miss
carried through every band, and a cost that grows with load shows as growth below 1.
`--rate` adds, per engine release and model, the weighted least-squares fit measured = a x predicted + c x rate + b
(weights 1 / measured, so relative errors), rate = N / measured TPOT: the tokens a second (per ms) the server's front
end streams. A front-end cost per streamed token (vLLM's one API-server process detokenizing and sending every
running request's token each step) would make c positive; c near 0 leaves it no room.

    python benchmarks/ttft_growth.py [--query "engine=='vllm'"] [--by-version] [--rate] [--csv PATH]
"""
from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from pathlib import Path

TABLE = Path(__file__).resolve().parent / "data" / "serving_reference.csv"
LIGHT = 8   # clients: a deployment's lowest N at or below this is its light-load point
BANDS = ((0, 8), (8, 32), (32, 128), (128, 100_000))   # (low, high] client bands
DEPLOYMENT = ("system", "engine", "model", "version", "tp", "ep", "attention_dp", "gemm_quant", "isl", "osl")


def band(n: float) -> int:
    """The index in BANDS of N's (low, high] client band."""
    return next(i for i, (low, high) in enumerate(BANDS) if low < n <= high)


def band_name(i: int) -> str:
    low, high = BANDS[i]
    return f"N ({low},{high}]" if high < BANDS[-1][1] else f"N > {low}"


def deployments(rows: list[dict]) -> dict[tuple, dict[float, tuple[float, float, float, float]]]:
    """Deployment key -> {N: mean (measured TTFT, predicted TTFT, measured TPOT, predicted TPOT)} in ms."""
    acc: dict[tuple, dict[float, list]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        acc[tuple(str(r[k]) for k in DEPLOYMENT)][float(r["concurrency"])].append(
            tuple(float(r[k]) for k in ("measured_ttft_ms", "predicted_ttft_ms", "measured_tpot_ms",
                                        "predicted_tpot_ms")))
    return {key: {n: tuple(statistics.fmean(v) for v in zip(*ms)) for n, ms in by_n.items()}
            for key, by_n in acc.items()}


def level_and_growth(by_n: dict[float, tuple]) -> list[dict] | None:
    """Per N above the lowest: N, level (pred/meas at the lowest N0), growth, ratio, TPOT ratio, stream rate;
    None when the lowest N is above LIGHT or there is no other N."""
    ns = sorted(by_n)
    n0 = ns[0]
    if n0 > LIGHT or len(ns) < 2:
        return None
    m0, p0 = by_n[n0][0], by_n[n0][1]
    out = []
    for n in ns[1:]:
        m, p, mt, pt = by_n[n]
        out.append({"n": n, "level": p0 / m0, "growth": (p / p0) / (m / m0), "ratio": p / m, "tpot_ratio": pt / mt,
                    "rate": n / mt})
    return out


def table(rows: list[dict], by_version: bool = True) -> list[dict]:
    """Medians of level, growth, ratio and TPOT ratio by GPU, engine (, model, release) and client band."""
    groups = defaultdict(list)
    for key, by_n in deployments(rows).items():
        for point in level_and_growth(by_n) or ():
            system, engine, model, version = key[:4]
            head = (system, engine, model.split("/")[-1], version[:12]) if by_version else (system, engine)
            groups[(*head, band(point["n"]))].append(point)
    return [{"group": " ".join((*k[:-1], band_name(k[-1]))), "points": len(v),
             **{f: statistics.median(p[f] for p in v) for f in ("level", "growth", "ratio", "tpot_ratio")}}
            for k, v in sorted(groups.items())]


def rate_fit(rows: list[dict]) -> tuple[float, float, float]:
    """(a, c, b) of measured TTFT = a x predicted + c x rate + b, weighted by 1 / measured (least squares)."""
    import numpy as np
    m = np.array([float(r["measured_ttft_ms"]) for r in rows])
    x = np.array([[float(r["predicted_ttft_ms"]), float(r["concurrency"]) / float(r["measured_tpot_ms"]), 1.0]
                  for r in rows])
    coef, *_ = np.linalg.lstsq(x / m[:, None], np.ones(len(rows)), rcond=None)
    return float(coef[0]), float(coef[1]), float(coef[2])


def selected(query: str | None, path: Path = TABLE) -> list[dict]:
    """Scored aggregated rows of the table with both predictions, filtered by a pandas query."""
    import pandas as pd
    t = pd.read_csv(path)
    t = t[(t.scored == 1) & (t["mode"] == "agg")].dropna(subset=["predicted_ttft_ms", "predicted_tpot_ms"])
    if query:
        t = t.query(query, engine="python")
    return t.fillna({"gemm_quant": "none", "ep": 1, "attention_dp": 1}).to_dict("records")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--query", help="pandas query on the committed table's columns")
    ap.add_argument("--by-version", action="store_true", help="split by model and engine release")
    ap.add_argument("--rate", action="store_true", help="fit measured = a pred + c rate + b per release and model")
    ap.add_argument("--csv", type=Path, default=TABLE)
    args = ap.parse_args(argv)
    rows = selected(args.query, args.csv)
    print("| group | points | level | growth | ratio | TPOT ratio |\n|---|---|---|---|---|---|")
    for g in table(rows, args.by_version):
        print(f"| {g['group']} | {g['points']} | x{g['level']:.2f} | x{g['growth']:.2f} | x{g['ratio']:.2f} "
              f"| x{g['tpot_ratio']:.2f} |")
    if args.rate:
        groups = defaultdict(list)
        for r in rows:
            groups[(r["system"], r["engine"], r["model"].split("/")[-1], str(r["version"])[:12])].append(r)
        print("\n| release | rows | max rate tok/ms | a | c ms per tok/ms | b ms |\n|---|---|---|---|---|---|")
        for key, rs in sorted(groups.items()):
            if len(rs) >= 20:
                a, c, b = rate_fit(rs)
                top = max(float(r["concurrency"]) / float(r["measured_tpot_ms"]) for r in rs)
                print(f"| {' '.join(key)} | {len(rs)} | {top:.1f} | {a:.3f} | {c:.2f} | {b:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
