"""Which measurements a model name holds: a slice's rows by model, load band and input length, split by the run
(image and measurement date) and paired with the same measurement filed under another model name.

    python benchmarks/model_twins.py [--query "<pandas query on the committed table>"] [--isl 8192]
        [--band 17-64] [--csv benchmarks/data/serving_reference.csv]

The serving file holds the same InferenceX measurement more than once: aiconfigurator's silicon rows name
DeepSeek-R1's TensorRT-LLM runs "DeepSeek-V3" (`dsr1_b200_trtllm_*_cfgN`, measured=... in silicon_data_source), and
the InferenceX dumps (`2026_03_25_*`, `2026_04_06_*`, image=...) file them again as DeepSeek-R1. Two rows are twins
when their engine, GPU, mode, lengths, concurrency, layout, precision and measured TTFT and TPOT all agree. A gap
between two model names' median ratios then reads as a difference in which runs each holds (docs/accuracy.md,
"TensorRT-LLM DeepSeek-R1 against DeepSeek-V3 on B200", session 59), not in the model. Diagnostic only: nothing here
feeds a prediction.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

DEFAULT_QUERY = "engine=='trtllm' and system=='b200_sxm' and model.str.contains('DeepSeek')"
TWIN_KEY = ("engine", "system", "mode", "isl", "osl", "concurrency", "tp", "attention_dp", "ep", "gemm_quant",
            "measured_ttft_ms", "measured_tpot_ms")
BANDS = ((1, 4), (5, 16), (17, 64), (65, 10**9))


def band_of(concurrency: float) -> str:
    """The load band a concurrency falls in (the briefs' 1-4 / 5-16 / 17-64 / 65+)."""
    for lo, hi in BANDS:
        if lo <= concurrency <= hi:
            return f"{lo}-{hi}" if hi < 10**9 else f"{lo}+"
    raise ValueError(f"concurrency: {concurrency} is below 1; valid: a client count >= 1")


def image_and_date(source: str, version: str | None) -> str:
    """The run a row records: its image's release (or 'unversioned') and the day it was measured."""
    date = re.search(r"measured=(\d{4}-\d\d-\d\d)", source or "")
    release = version if isinstance(version, str) and version else "unversioned"
    return f"{release} {date.group(1) if date else '?'}"


def twin_key(row) -> tuple:
    """What two rows of the same measurement share (their ids and model names differ)."""
    return tuple(round(row[k], 4) if isinstance(row[k], float) else row[k] for k in TWIN_KEY)


def annotate(frame, sources: dict[str, str]):
    """The table's rows with ratio, band, run and whether another model name holds the same measurement."""
    d = frame.copy()
    d["ratio"] = d["predicted_ttft_ms"] / d["measured_ttft_ms"]
    d["band"] = [band_of(c) for c in d["concurrency"]]
    d["run"] = [image_and_date(sources.get(i, ""), v) for i, v in zip(d["id"], d["version"])]
    d["short"] = d["model"].str.split("/").str[-1]
    keys = [twin_key(r) for _, r in d.iterrows()]
    names: dict[tuple, set] = {}
    for k, m in zip(keys, d["short"]):
        names.setdefault(k, set()).add(m)
    d["twin_in"] = [",".join(sorted(names[k] - {m})) for k, m in zip(keys, d["short"])]
    return d


def summary(d, isl: int | None = None, band: str | None = None) -> str:
    """Median TTFT ratio by model x ISL x band x mode x run, with the share of rows another model name also holds."""
    if isl is not None:
        d = d[d["isl"] == isl]
    if band is not None:
        d = d[d["band"] == band]
    g = d.groupby(["short", "isl", "band", "mode", "run"], sort=True)
    out = g.agg(rows=("ratio", "size"), ratio=("ratio", "median"),
                twins=("twin_in", lambda s: int((s != "").sum())))
    return out.round(2).to_string()


def main(argv=None) -> int:
    import pandas as pd
    import serving_reference as sr
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", default=DEFAULT_QUERY)
    ap.add_argument("--csv", type=Path, default=ROOT / "benchmarks" / "data" / "serving_reference.csv")
    ap.add_argument("--isl", type=int)
    ap.add_argument("--band", choices=[band_of(lo) for lo, _ in BANDS])
    args = ap.parse_args(argv)
    frame = pd.read_csv(args.csv).query(args.query, engine="python")
    frame = frame[(frame["scored"] == 1) & frame["predicted_ttft_ms"].notna()]
    sources = {r["id"]: r.get("silicon_data_source", "") for r in sr.load()}
    print(summary(annotate(frame, sources), args.isl, args.band))
    return 0


if __name__ == "__main__":
    sys.exit(main())
