"""A light-load disaggregated row beside the aggregated rows of its prefill pool's layout (diagnostic).

    python benchmarks/disagg_agg_twins.py [--max-clients 16]

At light load a disaggregated TTFT is one prefill pass on the prefill pool plus the hand-off (KV transfer, the decode
step in flight, the Dynamo hops), and an aggregated TTFT at the same engine, GPU, model architecture, precision, ISL
and layout is the same pass plus the aggregated server's own path. So the two measured / predicted TTFT ratios tell
whether a disaggregated miss is the hand-off's (only the disaggregated rows miss) or the prefill pass's (both miss
alike). Each scored disaggregated row of the committed table (benchmarks/data/serving_reference.csv) at <=
--max-clients clients is matched with the scored aggregated rows whose layout (TP, attention DP, EP by the
mapping's own rule, serving_reference._layout, of the row and of the disaggregated row's prefill_* columns) is the
prefill pool's, same backend, GPU, GEMM precision and ISL, at <= --max-clients clients, releases not matched
(Dynamo's release names its TensorRT-LLM / SGLang image, not the engine's); "any EP" matches TP and DP alone.
DeepSeek-V3 and -R1 are one architecture (model_family). Nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

TABLE = ROOT / "benchmarks" / "data" / "serving_reference.csv"


def model_family(model_path: str) -> str:
    """DeepSeek-V3 and DeepSeek-R1 share one architecture and config (MLA, 256 routed experts, 61 layers)."""
    low = model_path.lower()
    return "deepseek-v3" if "deepseek-v3" in low or "deepseek-r1" in low else low


def _n(value: str) -> int:
    return int(float(value)) if value not in ("", None) else 1


def layout(raw: dict, prefix: str = "") -> tuple[int, int, int]:
    """(TP, attention DP, EP) of a raw serving row, its own (aggregated) or its prefill pool's (prefix 'prefill_'),
    as the serving mapping reads them (serving_reference._layout: the file's tp x ep products undone)."""
    import serving_reference as sr
    lay = sr._layout(raw, prefix)
    return lay["tp"], lay.get("attention_dp", 1), lay.get("ep", 1)


def twin_key(raw: dict, prefix: str = "", with_ep: bool = True) -> tuple:
    lay = layout(raw, prefix)
    return (raw["backend"], raw["system"], model_family(raw["model_path"]), raw["gemm_quant_mode"],
            _n(raw["isl"]), lay if with_ep else lay[:2])


def twins(disagg: list[dict], agg: list[dict], with_ep: bool = True) -> list[tuple[dict, list[dict]]]:
    """Each disaggregated row with the aggregated rows of its prefill pool's key (twin_key; with_ep False: the
    attention TP and DP alone, any MoE EP), in the order given."""
    by_key: dict[tuple, list[dict]] = {}
    for a in agg:
        by_key.setdefault(twin_key(a, with_ep=with_ep), []).append(a)
    return [(d, by_key.get(twin_key(d, "prefill_", with_ep), [])) for d in disagg]


def loose_key(raw: dict) -> tuple:
    """Backend, GPU, architecture, GEMM precision and ISL: twin_key without the layout."""
    return raw["backend"], raw["system"], model_family(raw["model_path"]), raw["gemm_quant_mode"], _n(raw["isl"])


def twin_factor(disagg_row: dict, agg: list[dict]) -> tuple[float | None, str]:
    """The median measured / predicted TTFT of the aggregated rows that best match a disaggregated row's prefill
    pool (its layout with EP, else its attention TP and DP, else any layout of its loose_key) and which match it
    was; (None, 'none') without any. What the aggregated rows say the prefill pass misses by (a what-if's factor:
    disagg_first_token_parts.py --prefill-scale twin)."""
    for with_ep, name in ((True, "same EP"), (False, "any EP")):
        found = twins([disagg_row], agg, with_ep)[0][1]
        if found:
            return statistics.median(ratio(t) for t in found), f"{name} ({len(found)})"
    found = [a for a in agg if loose_key(a) == loose_key(disagg_row)]
    if found:
        return statistics.median(ratio(t) for t in found), f"any layout ({len(found)})"
    return None, "none"


def summary(rows: list[dict]) -> str:
    """'rows, N range, median meas/pred (range)' of a list of twins, or 'none'."""
    if not rows:
        return "none"
    rs = sorted(ratio(t) for t in rows)
    ns = sorted({int(float(t["concurrency"])) for t in rows})
    return f"{len(rows)}, N {ns[0]}-{ns[-1]}, x{statistics.median(rs):.2f} (x{rs[0]:.2f}-{rs[-1]:.2f})"


def ratio(row: dict) -> float:
    """Measured over predicted TTFT of a committed row (> 1: whatif under-predicts)."""
    return float(row["measured_ttft_ms"]) / float(row["predicted_ttft_ms"])


def scored(table: Path, max_clients: int) -> tuple[list[dict], list[dict]]:
    """(disaggregated, aggregated) scored rows at <= max_clients, each the raw serving row with the committed
    measured / predicted TTFT, the aggregated ones deduplicated by measurement."""
    import serving_reference as sr
    raw = {r["id"]: r for r in sr.load()}
    disagg, agg, seen = [], [], set()
    with open(table, newline="") as fh:
        for row in csv.DictReader(fh):
            if not row["predicted_ttft_ms"] or float(row["concurrency"] or 0) > max_clients or row["id"] not in raw:
                continue
            r = dict(raw[row["id"]], measured_ttft_ms=row["measured_ttft_ms"],
                     predicted_ttft_ms=row["predicted_ttft_ms"], concurrency=row["concurrency"])
            if row["mode"] == "disagg":
                disagg.append(r)
            elif (twin_key(r), r["concurrency"], r["measured_ttft_ms"]) not in seen:
                seen.add((twin_key(r), r["concurrency"], r["measured_ttft_ms"]))
                agg.append(r)
    return disagg, agg


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-clients", type=int, default=16)
    ap.add_argument("--table", type=Path, default=TABLE)
    args = ap.parse_args(argv)
    disagg, agg = scored(args.table, args.max_clients)
    print(f"{'disaggregated row':<46} {'prefill tp/adp/ep':>17} {'N':>4} {'meas/pred':>9}   aggregated twins "
          f"(rows, N, median meas/pred, range): same EP | any EP")
    loose = dict((d["id"], ts) for d, ts in twins(disagg, agg, with_ep=False))
    for d, ts in twins(disagg, agg):
        lay = "/".join(map(str, layout(d, "prefill_")))
        print(f"{d['id'][-46:]:<46} {lay:>17} {float(d['concurrency']):>4.0f} x{ratio(d):>8.2f}   "
              f"{summary(ts)} | {summary(loose[d['id']])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
