"""Each serving row off by 3x in TTFT beside the nearest row of its own deployment curve that whatif predicts well,
and what the pair says: arithmetic on the committed table's columns only (no simulation, nothing fitted).

A curve (`family`) is one model, GPU, engine, release, mode, ISL/OSL, layout and precision across concurrency N. A
row's nearest well-predicted neighbour is the family row at another N (or the same N measured again) with TTFT
within x0.5-2 of measured, nearest in log N. Per row and neighbour: measured and predicted TTFT, the additive gap
(measured - predicted, ms), and the clients in service by Little's law on a closed loop (session 67 J): a client's
cycle is TTFT + (OSL - 1) x TPOT, so N x decode / cycle are decoding and the rest wait for a first token.

The verdict, by rule (first that holds):
- `whatif at KV capacity`: the simulation preempted or its KV peak reached 0.95: both sides sit at the pool's edge,
  where TTFT is a cliff and a few percent of pool or TPOT moves it by multiples;
- `queue whatif lacks`: the deployment kept >= 10% of N fewer clients in service than whatif (whatif's pool did
  not bind): a cap (KV pool, batch limit) or a stall the run had and whatif does not;
- `outlier of its curve`: its measured TTFT is above the measured TTFT at the next higher N of its curve, or its
  launch was measured twice and the two differ by > x1.5: run-to-run state, nothing a model takes from the row;
- `floor`: the row's gap is within x0.5-2 of its well-predicted neighbour's: one missing per-request cost, not a
  load effect, whose ratio reads 3x only where the priced TTFT is small;
- `curve-wide`: the other rows of its curve read a median ratio under x0.5: the whole curve is under-predicted and
  this row only crosses the 3x line;
- `lone row`: its curve has no other row; `unexplained` otherwise.

usage: python benchmarks/off3x_neighbours.py [--all] [--csv PATH]
(--all keeps the TensorRT-LLM 1.0.0rc3 and SGLang disaggregated rows, left out by default: sessions 67 J / 69 C.)"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

TABLE = Path(__file__).parent / "data" / "serving_reference.csv"
FAMILY = ["model", "system", "engine", "version", "mode", "isl", "osl", "tp", "pp", "attention_dp", "ep",
          "gemm_quant", "moe_quant"]
WELL = (0.5, 2.0)        # a neighbour's TTFT ratio band
OFF = 3.0                # off by 3x
QUEUE_SHARE = 0.10       # fewer clients in service than whatif, as a share of N, that count as a queue
KV_EDGE = 0.95           # simulated KV peak at the pool's edge
TWIN_SPREAD = 1.5        # two measurements of one launch differing by more than this


def in_service(n: float, ttft_ms: float, tpot_ms: float, osl: int) -> float:
    """Clients decoding in a closed loop of n (Little's law): n x decode time / cycle time."""
    decode = (osl - 1) * tpot_ms
    return n * decode / (ttft_ms + decode) if ttft_ms + decode > 0 else float("nan")


def family_key(row) -> tuple:
    return tuple("" if pd.isna(row[c]) else row[c] for c in FAMILY)


def nearest_well(row, family: pd.DataFrame):
    """The family row (not `row`) predicted within WELL, nearest in log concurrency; None if none."""
    others = family[(family.id != row.id) & family.ratio.between(*WELL)]
    if others.empty:
        return None
    dist = (others.concurrency / row.concurrency).map(lambda x: abs(math.log(x)))
    return others.loc[dist.idxmin()]


def twin_spread(row, family: pd.DataFrame) -> float:
    """max / min measured TTFT over the family's rows at the row's N (1.0 when measured once)."""
    same = family[family.concurrency == row.concurrency].measured_ttft_ms
    return float(same.max() / same.min()) if len(same) > 1 else 1.0


def verdict(row, neighbour, family: pd.DataFrame) -> str:
    """The first rule of the module docstring that holds for `row`."""
    if row.preemptions > 0 or row.kv_peak_fraction >= KV_EDGE:
        return "whatif at KV capacity"
    if (row.in_service_predicted - row.in_service_measured) / row.concurrency >= QUEUE_SHARE:
        return "queue whatif lacks"
    higher = family[family.concurrency > row.concurrency].sort_values("concurrency")
    if (not higher.empty and row.measured_ttft_ms > higher.measured_ttft_ms.iloc[0]) \
            or twin_spread(row, family) > TWIN_SPREAD:
        return "outlier of its curve"
    if neighbour is not None and neighbour.gap_ms > 0 and 0.5 <= row.gap_ms / neighbour.gap_ms <= 2.0:
        return "floor"
    others = family[family.concurrency != row.concurrency]
    if others.empty:
        return "lone row"
    if others.ratio.median() < 0.5:
        return "curve-wide"
    return "unexplained"


def load(path: Path = TABLE) -> pd.DataFrame:
    t = pd.read_csv(path)
    t = t[t["scored" if "scored" in t else "expressible"] == 1].copy()
    t["version"] = t.version.fillna("unrecorded")
    t["ratio"] = t.predicted_ttft_ms / t.measured_ttft_ms
    t["gap_ms"] = t.measured_ttft_ms - t.predicted_ttft_ms
    t["in_service_measured"] = [in_service(n, a, b, o) for n, a, b, o in
                                zip(t.concurrency, t.measured_ttft_ms, t.measured_tpot_ms, t.osl)]
    t["in_service_predicted"] = [in_service(n, a, b, o) for n, a, b, o in
                                 zip(t.concurrency, t.predicted_ttft_ms, t.predicted_tpot_ms, t.osl)]
    return t


def excluded(t: pd.DataFrame) -> pd.Series:
    """The groups other sessions own: TensorRT-LLM 1.0.0rc3 and SGLang disaggregated rows."""
    return ((t.engine == "trtllm") & (t.version == "1.0.0rc3")) | ((t.engine == "sglang") & (t["mode"] == "disagg"))


def table(t: pd.DataFrame, keep_all: bool = False) -> pd.DataFrame:
    """One line per off-by-3x row: the row, its nearest well-predicted neighbour and the verdict."""
    t = t.assign(_family=[family_key(r) for _, r in t.iterrows()])
    off = t[(t.ratio > OFF) | (t.ratio < 1 / OFF)]
    if not keep_all:
        off = off[~excluded(off)]
    lines = []
    for _, row in off.iterrows():
        family = t[t._family == row._family]
        nb = nearest_well(row, family)
        lines.append({
            "engine": row.engine, "version": row.version, "model": row.model.split("/")[-1], "system": row.system,
            "isl": row.isl, "osl": row.osl, "tp": row.tp, "ep": row.ep, "adp": row.attention_dp,
            "quant": row.gemm_quant if isinstance(row.gemm_quant, str) else "16-bit", "N": int(row.concurrency),
            "ttft_m": round(row.measured_ttft_ms), "ttft_p": round(row.predicted_ttft_ms),
            "x": round(row.ratio, 2), "tpot_x": round(row.predicted_tpot_ms / row.measured_tpot_ms, 2),
            "gap_ms": round(row.gap_ms), "serv_m": round(row.in_service_measured, 1),
            "serv_p": round(row.in_service_predicted, 1), "kv_p": row.kv_peak_fraction,
            "nb_N": None if nb is None else int(nb.concurrency),
            "nb_ttft_m": None if nb is None else round(nb.measured_ttft_ms),
            "nb_x": None if nb is None else round(nb.ratio, 2),
            "nb_gap_ms": None if nb is None else round(nb.gap_ms),
            "twins": round(twin_spread(row, family), 2),
            "verdict": verdict(row, nb, family), "id": row.id})
    return pd.DataFrame(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--all", action="store_true", help="keep the TensorRT-LLM 1.0.0rc3 and SGLang disagg rows")
    p.add_argument("--csv", type=Path, default=TABLE, help="the scored serving table (default: the committed one)")
    a = p.parse_args(argv)
    if not a.csv.exists():
        p.error(f"--csv: {a.csv} does not exist; pass a serving_reference table")
    out = table(load(a.csv), a.all)
    if out.empty:
        print("no row off by 3x")
        return 0
    out = out.sort_values(["verdict", "engine", "version", "model", "isl", "osl", "N"])
    # one line per measurement: twin ids (the same launch in two source files, same numbers) print once
    shown = out.drop_duplicates(subset=[c for c in out.columns if c != "id"]).drop(columns="id")
    with pd.option_context("display.width", 250, "display.max_rows", 500, "display.max_columns", 40):
        print(shown.to_string(index=False))
    print(f"\n{len(out)} rows ({len(shown)} distinct measurements):",
          ", ".join(f"{v} {n}" for v, n in out.verdict.value_counts().items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
