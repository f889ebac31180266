"""A serving row's simulated TPOT split in two: the decode-only steps' time and the stall the prefill-only steps add
(SGLang without --enable-mixed-chunk runs prompts in steps of their own, every decoding sequence waiting), beside
the measured TPOT; and, over the rows, the least-squares read measured ~ a x decode + b x stall.

    python benchmarks/tpot_split.py --query "model.str.contains('Qwen3.5') and moe_quant=='nvfp4'" [--no-compile]

Per row, from the simulator's per-step records (IterationLog) over the steady half of the run (the steps between the
first and the third quartile of request finishes): `decode` = the decode-only steps' mean duration weighted by the
sequences they carry (ms), `stall` = the client's TPOT less `decode` (ms: what the steps with prefill add),
`prefill share` = the window's time in steps with prefill. a and b are a diagnostic of which part is priced off (a
row set whose decode steps are priced right reads a ~ 1; its stalls, b ~ 1); never a calibration: a factor read off
serving rows is a fit, so no prediction may take it. `--no-compile` drops the engine setting prefill_recompile_s (the
FLA L2-norm compile serving_reference maps for GDN models on SGLang before PR #31558) from each run: a sensitivity.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


@dataclass
class Split:
    decode_ms: float           # decode-only steps' duration, weighted by their decoding sequences
    prefill_share: float       # fraction of the window's step time in steps that carry a prefill


def steady_window(finishes: list[float]) -> tuple[float, float]:
    """(first quartile, third quartile) of the request finish times: the run's steady half."""
    f = sorted(finishes)
    if len(f) < 4:
        raise ValueError(f"finishes: need at least 4 requests for a steady window, got {len(f)}")
    return f[len(f) // 4], f[3 * len(f) // 4]


def step_split(steps, start_s: float, end_s: float) -> Split:
    """Split of the steps (a frame with start_s, end_s, duration_s, decode_seqs, prefill_seqs) run wholly inside
    [start_s, end_s]."""
    w = steps[(steps.start_s >= start_s) & (steps.end_s <= end_s)]
    dec = w[w.prefill_seqs == 0]
    seqs = dec.decode_seqs.sum()
    if not seqs or not w.duration_s.sum():
        raise ValueError("steps: no decode-only step inside the window")
    decode_ms = float((dec.duration_s * dec.decode_seqs).sum() / seqs * 1e3)
    return Split(decode_ms, float(w[w.prefill_seqs > 0].duration_s.sum() / w.duration_s.sum()))


def two_part_read(decode_ms, stall_ms, measured_ms) -> tuple[float, float, float]:
    """(a, b, residual MAPE %) of measured ~ a x decode + b x stall, least squares in relative error."""
    import numpy as np
    y = np.asarray(measured_ms, dtype=float)
    parts = np.column_stack([np.asarray(decode_ms, dtype=float), np.asarray(stall_ms, dtype=float)]) / y[:, None]
    (a, b), *_ = np.linalg.lstsq(parts, np.ones_like(y), rcond=None)
    fitted = parts @ np.array([a, b])
    return float(a), float(b), float(np.mean(np.abs(fitted - 1)) * 100)


def row_split(row: dict, no_compile: bool = False) -> tuple[float, Split]:
    """(client TPOT ms, Split) of one row run as serving_reference maps it."""
    import serving_reference as sr
    from whatif.api import simulate
    total = sr.profile_rounds(row)
    kw = sr.simulate_kwargs(row, min(sr.SIM_ROUNDS, total))
    if no_compile and "engine" in kw:
        kw["engine"] = {k: v for k, v in kw["engine"].items() if k != "prefill_recompile_s"}
    res = simulate(**kw)
    _, tpot = sr.client_means(res, kw["traffic"]["concurrency"], total)
    window = steady_window([r.finish_s for r in res.records])
    return tpot, step_split(res.series_frame(), *window)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", required=True, help="a pandas query on benchmarks/data/serving_reference.csv")
    ap.add_argument("--no-compile", action="store_true", help="run without the mapped prefill_recompile_s")
    args = ap.parse_args(argv)
    import pandas as pd
    import serving_reference as sr
    table = pd.read_csv(ROOT / "benchmarks/data/serving_reference.csv")
    try:
        chosen = table[table.scored == 1].query(args.query)
    except Exception as exc:   # noqa: BLE001 - a bad query is the user's input
        print(f"--query: {exc}", file=sys.stderr)
        return 2
    # one run per distinct measurement (the gap-analysis copies repeat InferenceX's rows)
    chosen = chosen.assign(tpot_01=chosen.measured_tpot_ms.round(1)).drop_duplicates(
        ["model", "engine", "system", "isl", "osl", "concurrency", "tpot_01"])
    rows = {r["id"]: r for r in sr.load()}
    got = []
    print(f"{'id':<56} {'meas':>6} {'pred':>6} {'x':>6} {'decode':>6} {'stall':>6} {'prefill share':>13}")
    for rid in chosen.sort_values(["model", "isl", "osl", "concurrency"]).id:
        row = rows[rid]
        tpot, s = row_split(row, args.no_compile)
        m = float(row["silicon_tpot_ms"])
        got.append((s.decode_ms, tpot - s.decode_ms, m))
        print(f"{rid[:56]:<56} {m:6.2f} {tpot:6.2f} {tpot / m:6.3f} {s.decode_ms:6.2f} {tpot - s.decode_ms:6.2f} "
              f"{s.prefill_share * 100:12.1f}%", flush=True)
    if len(got) >= 3:
        a, b, resid = two_part_read(*zip(*got))
        print(f"measured ~ {a:.3f} x decode + {b:.3f} x stall (residual {resid:.2f}%, {len(got)} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
