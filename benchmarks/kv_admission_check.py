"""Whether a KV-cache fraction could have held the clients a run kept decoding (issue 37, session 73 J): a diagnostic,
nothing fitted and nothing fed to a prediction.

TensorRT-LLM's capacity scheduler (GUARANTEED_NO_EVICT, the default of trtllm-serve and of Dynamo's trtllm worker)
admits a request only when the blocks it needs to finish, ceil((ISL + OSL) / tokens_per_block), are free beside what
the running ones still need, so at most floor(pool_blocks / that) requests are admitted at any time. The clients a
closed loop keeps decoding on average, N x D / (TTFT + D) with D = (OSL - 1) x TPOT (Little's law on the client
means; ttft_residual.residual_parts), can never exceed that cap. A measured mean above the cap that whatif's memory
plan gives at fraction f rules f out for that launch, under whatif's accounting of the rest of the memory; the least
fraction is the one whose pool just admits the measured mean (a lower bound: the peak in decode is above the mean).

The same rows' shortfall beside the campaign's rows whose pool does not bind (--shortfall): predicted minus measured
mean in decode by model, N (64, 128) and whether whatif's pool binds; a KV pool smaller than whatif's would show as a
larger shortfall where it binds.

Per row: whatif's pool (KV blocks of one replica, from the simulator's memory plan at the row's mapped launch with the
fraction replaced), the cap, the measured and the predicted (committed table) mean in decode.

    PYTHONPATH=$PWD python benchmarks/kv_admission_check.py [--fractions 0.8 0.7] [--peak 0.85] [--shortfall]
"""
from __future__ import annotations

import argparse
import csv
import importlib.util
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TABLE = HERE / "data" / "serving_reference.csv"
TOKENS_PER_BLOCK = 32   # TensorRT-LLM KvCacheConfig tokens_per_block default (engine_profiles/trtllm.yaml block_size)


def admission_cap(pool_blocks: int, isl: int, osl: int, block: int = TOKENS_PER_BLOCK) -> int:
    """Requests GUARANTEED_NO_EVICT can hold at once: the pool over the blocks one request needs to finish."""
    return pool_blocks // math.ceil((isl + osl) / block)


def least_fraction(in_decode: float, isl: int, osl: int, pool_blocks: int, fraction: float,
                   block: int = TOKENS_PER_BLOCK) -> float:
    """The smallest KV fraction whose pool (linear in the fraction: it takes that share of the same free memory)
    admits `in_decode` requests at once: in_decode x blocks per request over the pool at `fraction`, x fraction."""
    return fraction * in_decode * math.ceil((isl + osl) / block) / pool_blocks


def mean_in_decode(n: float, ttft_ms: float, tpot_ms: float, osl: int) -> float:
    """Clients of a closed loop of n decoding on average: n x D / (TTFT + D), D = (OSL - 1) x TPOT."""
    decode = (osl - 1) * tpot_ms
    return n * decode / (ttft_ms + decode)


def campaign_rows(path: Path = TABLE) -> list[dict]:
    """The committed TensorRT-LLM 1.0.0rc3 rows with a measured and a predicted TTFT, TPOT and KV peak."""
    keys = ("measured_ttft_ms", "measured_tpot_ms", "predicted_ttft_ms", "predicted_tpot_ms", "kv_peak_fraction")
    with open(path, newline="") as fh:
        return [r for r in csv.DictReader(fh) if r["engine"] == "trtllm" and r["version"] == "1.0.0rc3"
                and all(r.get(k) for k in keys)]


def shortfall(row: dict) -> float:
    """Predicted minus measured mean in decode of one committed row (clients)."""
    osl, n = int(row["osl"]), float(row["concurrency"])
    return (mean_in_decode(n, float(row["predicted_ttft_ms"]), float(row["predicted_tpot_ms"]), osl)
            - mean_in_decode(n, float(row["measured_ttft_ms"]), float(row["measured_tpot_ms"]), osl))


def shortfall_table(rows: list[dict], peak: float, heavy: float = 64) -> list[tuple]:
    """(model, N, binds, rows, mean shortfall, median predicted / measured TTFT) over the rows at N >= heavy."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if float(r["concurrency"]) >= heavy:
            key = (r["model"].split("/")[-1], float(r["concurrency"]), float(r["kv_peak_fraction"]) > peak)
            groups.setdefault(key, []).append(r)
    out = []
    for key in sorted(groups):
        g = groups[key]
        ratios = sorted(float(r["predicted_ttft_ms"]) / float(r["measured_ttft_ms"]) for r in g)
        out.append((*key, len(g), sum(map(shortfall, g)) / len(g), ratios[len(ratios) // 2]))
    return out


def _serving_reference():
    spec = importlib.util.spec_from_file_location("serving_reference", HERE / "serving_reference.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["serving_reference"] = module
    spec.loader.exec_module(module)
    return module


def pool_blocks(sr, row: dict, fraction: float) -> int:
    """KV blocks of one replica whatif plans for the row's mapped launch with the KV fraction `fraction`."""
    from whatif.api import simulate

    kw = sr.simulate_kwargs(row, 1)
    kw["memory_utilization"] = fraction
    return int(simulate(**kw).summary()["replicas"][0]["kv_blocks"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fractions", type=float, nargs="+", default=[0.8, 0.7])
    ap.add_argument("--peak", type=float, default=0.85, help="kv_peak_fraction above which whatif's pool binds")
    ap.add_argument("--shortfall", action="store_true", help="the grouped shortfall table instead (no simulation)")
    args = ap.parse_args()
    if args.shortfall:
        print("model | N | pool binds | rows | mean shortfall (clients) | median TTFT predicted / measured")
        for model, n, binds, count, mean, ratio in shortfall_table(campaign_rows(), args.peak):
            print(f"{model} | {n:.0f} | {binds} | {count} | {mean:.2f} | x{ratio:.2f}")
        return
    sr = _serving_reference()
    source = {r["id"]: r for r in sr.load()}
    head = ["model", "tp", "ISL/OSL", "N", "in decode measured", "predicted"]
    head += [f"cap at {f:.2f}" for f in args.fractions] + ["least fraction"]
    print(" | ".join(head))
    for row in (r for r in campaign_rows() if float(r["kv_peak_fraction"]) > args.peak):
        isl, osl, n = int(row["isl"]), int(row["osl"]), float(row["concurrency"])
        pools = [pool_blocks(sr, source[row["id"]], f) for f in args.fractions]
        caps = [admission_cap(p, isl, osl) for p in pools]
        measured = mean_in_decode(n, float(row["measured_ttft_ms"]), float(row["measured_tpot_ms"]), osl)
        predicted = mean_in_decode(n, float(row["predicted_ttft_ms"]), float(row["predicted_tpot_ms"]), osl)
        cells = [row["model"].split("/")[-1], row["tp"], f"{isl}/{osl}", f"{n:.0f}", f"{measured:.1f}",
                 f"{predicted:.1f}"] + [f"{c}{' (<)' if measured > c else ''}" for c in caps]
        cells.append(f"{least_fraction(measured, isl, osl, pools[0], args.fractions[0]):.3f}")
        print(" | ".join(cells))


if __name__ == "__main__":
    main()
