"""How much of a light-load TTFT gap also holds up the decodes: read off TPOT, from pairs of serving rows that differ
only in output length. A diagnostic; nothing here feeds a prediction.

    python benchmarks/prefill_hold_from_tpot.py [--query "engine=='sglang' and system=='b200_sxm' and mode=='agg'"]

A cost paid inside the engine's step loop when a request's prompt is prefilled (a slower prefill step, a host stall,
a Triton compile) holds every running decode for its length too (SGLang and TensorRT-LLM run a prompt's step with
the decodes waiting or riding along; vLLM mixes them into the step): with N clients in a closed loop each request's
prompt lands in its decodes' way about N times per its output length, so it raises the mean TPOT by about
N x cost / OSL. A cost outside the loop (the HTTP server, tokenization, the hand-off to the scheduler, the first
token's way back, a wait for the scheduler to poll) delays only that request's first token. Two rows of one
deployment (engine and version, model, GPU, layout, precision, clients, ISL) at output lengths L1 < L2 share the
decode step and the per-prompt cost, so the part of TPOT the simulation misses, measured - predicted, differs
between them by about hold x N x (1/L1 - 1/L2), the hold being the per-prompt cost the simulation misses inside
the loop: hold = (dTPOT(L1) - dTPOT(L2)) / (N (1/L1 - 1/L2)). Next to it, the TTFT gap (measured - predicted) of
the L1 row. Noisy (TPOT is measured to ~0.1 ms; a pair at 4 clients and 1k/8k outputs resolves ~30 ms), so read
medians over pairs.

`--by-prompt` splits that hold by prompt length (session 66 G): of one deployment, rows A (long prompt Lp, short
output Os: 8k/1k) and B (short prompt, long output Ol: 1k/8k) share the decode step's own shortfall d, so
dTPOT_A = N h_long / Os + d and dTPOT_B = N h_short / Ol + d give h_long = (dTPOT_A - dTPOT_B) Os / N + h_short Os / Ol,
h_short read as above from the short prompt's two output lengths. The decode contexts differ (~Lp + Os/2 against
~Ol/2 cached tokens), so a shortfall that grows with context (the full-attention layers' decode) lands in h_long.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "benchmarks" / "data" / "serving_reference.csv"
DEPLOYMENT = ("engine", "version", "model", "system", "mode", "tp", "pp", "attention_dp", "ep", "gemm_quant",
              "moe_quant", "concurrency", "isl")
BANDS = ((1, 8), (9, 32), (33, 128), (129, 10 ** 6))


def hold_ms(d_tpot_short: float, d_tpot_long: float, clients: float, short: int, long: int) -> float:
    """The per-prompt cost inside the step loop that the simulation misses (ms), from the TPOT shortfall
    (measured - predicted, ms) of two rows of one deployment at output lengths short < long."""
    return (d_tpot_short - d_tpot_long) / (clients * (1 / short - 1 / long))


def pairs(table):
    """(deployment key, short row, long row) for every deployment scored at two output lengths (the shortest and
    the longest), one row each (the median of repeated rows' figures)."""
    scored = table.dropna(subset=["predicted_ttft_ms", "predicted_tpot_ms"]).copy()
    scored["d_tpot"] = scored.measured_tpot_ms - scored.predicted_tpot_ms
    scored["d_ttft"] = scored.measured_ttft_ms - scored.predicted_ttft_ms
    keys = [k for k in DEPLOYMENT if k in scored.columns]
    med = scored.fillna({k: "" for k in keys}).groupby(keys + ["osl"], dropna=False)[["d_tpot", "d_ttft"]].median()
    out = []
    for key, grp in med.reset_index().groupby(keys, dropna=False):
        if grp.osl.nunique() < 2:
            continue
        grp = grp.sort_values("osl")
        out.append((dict(zip(keys, key)), grp.iloc[0], grp.iloc[-1]))
    return out


def long_prompt_hold_ms(d_tpot_long_prompt: float, d_tpot_short_prompt: float, clients: float, short_out: int,
                        long_out: int, short_hold_ms: float) -> float:
    """The per-prompt hold the simulation misses for the long prompt (ms), from the TPOT shortfall of its short-output
    row and of the short prompt's long-output row, and the short prompt's own hold (module docstring)."""
    return (d_tpot_long_prompt - d_tpot_short_prompt) * short_out / clients + short_hold_ms * short_out / long_out


def by_prompt(table) -> list[tuple[dict, float, float]]:
    """(deployment key without the prompt length, short prompt's hold ms, long prompt's hold ms) for every deployment
    with a short prompt at two output lengths and a long prompt at the shorter one."""
    holds = {}
    for k, s, long in pairs(table):
        holds[tuple(v for c, v in k.items() if c != "isl")] = (k, int(k["isl"]), s, long)
    scored = table.dropna(subset=["predicted_tpot_ms"]).copy()
    scored["d_tpot"] = scored.measured_tpot_ms - scored.predicted_tpot_ms
    keys = [k for k in DEPLOYMENT if k in scored.columns and k != "isl"]
    med = scored.fillna({k: "" for k in keys}).groupby(keys + ["isl", "osl"], dropna=False).d_tpot.median()
    out = []
    for (*key, isl, osl), d_tpot in med.items():
        hit = holds.get(tuple(key))
        if hit is None or isl <= hit[1] or osl != hit[2].osl:
            continue
        k, _, s, long = hit
        n = k["concurrency"]
        h_short = hold_ms(s.d_tpot, long.d_tpot, n, int(s.osl), int(long.osl))
        out.append(({**k, "isl": int(isl)}, h_short,
                     long_prompt_hold_ms(d_tpot, long.d_tpot, n, int(osl), int(long.osl), h_short)))
    return out


def summary(table) -> list[tuple[str, int, float, float]]:
    """(clients band, pairs, median hold ms, median TTFT gap ms of the short rows) per band with pairs."""
    rows = [(k["concurrency"], hold_ms(s.d_tpot, long.d_tpot, k["concurrency"], int(s.osl), int(long.osl)),
             s.d_ttft) for k, s, long in pairs(table)]
    out = []
    for lo, hi in BANDS:
        band = [(h, g) for n, h, g in rows if lo <= n <= hi]
        if band:
            out.append((f"{lo}-{hi if hi < 10 ** 6 else '+'}", len(band), statistics.median(h for h, _ in band),
                        statistics.median(g for _, g in band)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", default="mode=='agg'", help="pandas query on benchmarks/data/serving_reference.csv")
    ap.add_argument("--by", default="engine,system", help="columns to split the summary by (comma-separated)")
    ap.add_argument("--by-prompt", action="store_true", help="the hold of the long prompt beside the short one's, "
                    "per deployment (module docstring)")
    args = ap.parse_args(argv)
    import pandas as pd

    table = pd.read_csv(TABLE)
    try:
        table = table.query(args.query)
    except Exception as exc:   # noqa: BLE001 - a bad query is the user's input: one line, non-zero exit
        ap.error(f"--query: {exc}")
    by = [c for c in args.by.split(",") if c]
    unknown = [c for c in by if c not in table.columns]
    if unknown:
        ap.error(f"--by: no column {unknown[0]!r}")
    if args.by_prompt:
        print("deployment | clients | short prompt: hold ms | long prompt: hold ms | long - short")
        for k, h_short, h_long in by_prompt(table):
            name = " ".join(str(k[c]) for c in ("engine", "version", "model", "system", "tp", "ep", "gemm_quant"))
            print(f"{name} | {k['concurrency']:g} | {h_short:+.0f} | {h_long:+.0f} ({k['isl']}) "
                  f"| {h_long - h_short:+.0f}")
        return 0
    print("group | clients | pairs | hold inside the step loop, ms a prompt (median) | TTFT gap of the short rows, ms")
    for key, grp in table.groupby(by) if by else [("all", table)]:
        for band, n, hold, gap in summary(grp):
            print(f"{key} | {band} | {n} | {hold:+.0f} | {gap:+.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
