"""Scored serving rows rerun with each GPU's KV pool moved by E GiB, to show how far a row's TTFT turns on the pool
(diagnostic only; nothing here feeds a prediction or is mapped).

    python benchmarks/kv_pool_sensitivity.py --gib -2,-1,1 --query "engine=='vllm' and concurrency==64" [--jobs 1]

E < 0 is a smaller pool: as if the engine's profile peak (or its reserved bytes) were |E| GiB larger a GPU. It goes
in through the row's memory fraction, by the engine's accounting (roofline/memory.py): TensorRT-LLM's `free`
(KV = fraction x free) takes fraction x (1 + E / free); vLLM's `total` and SGLang's `static` (KV = fraction x
capacity - the rest) take fraction + E / capacity. Prints each row's TTFT / TPOT at E = 0 (the committed table's)
and at each E, with the simulated preemptions and KV peak."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import serving_reference as sr  # noqa: E402

GIB = 2 ** 30


def shifted_fraction(engine: str, fraction: float, free_bytes: float, capacity_bytes: float, gib: float) -> float:
    """The memory fraction that moves one GPU's KV pool by `gib` GiB under the engine's accounting."""
    if engine == "trtllm":
        if free_bytes <= 0:
            raise ValueError("free memory after the fixed bytes must be positive")
        return fraction * (1 + gib * GIB / free_bytes)
    return fraction + gib * GIB / capacity_bytes


def shifted_kwargs(row: dict, gib: float, rounds: int = sr.SIM_ROUNDS) -> dict:
    """simulate_kwargs of the row with its KV pool moved by `gib` GiB a GPU."""
    from whatif.api import estimate

    kw = sr.simulate_kwargs(row, rounds)
    if gib:
        memory = estimate(**{k: v for k, v in kw.items() if k not in ("traffic", "engine", "cluster")}).estimate.memory
        free = memory.capacity_bytes - memory.budgets[0].fixed_bytes
        kw["memory_utilization"] = shifted_fraction(row["backend"], memory.utilization, free,
                                                    memory.capacity_bytes, gib)
    return kw


def run(row: dict, gib: float) -> dict:
    from whatif.api import simulate

    kw = shifted_kwargs(row, gib)
    res = simulate(**kw)
    ttft, tpot = sr.client_means(res, kw["traffic"]["concurrency"], sr.profile_rounds(row))
    return {"gib": gib, "ttft_ms": ttft, "tpot_ms": tpot,
            "preemptions": sum(r.preemptions for r in res.records),
            "kv_peak": max((i.get("kv_peak_fraction") or 0.0) for i in res.summary()["replicas"])}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gib", required=True, help="comma-separated GiB a GPU, e.g. -2,-1,1 (negative: smaller pool)")
    p.add_argument("--query", required=True, help="pandas query on the committed table's scored rows")
    a = p.parse_args(argv)
    try:
        shifts = [float(x) for x in a.gib.split(",") if x.strip()]
    except ValueError:
        p.error(f"--gib: {a.gib!r} is not a comma-separated list of numbers (GiB a GPU)")
    table = pd.read_csv(ROOT / "benchmarks" / "data" / "serving_reference.csv")
    try:
        picked = table[table.scored == 1].query(a.query)
    except Exception as exc:   # noqa: BLE001 - a bad query is the user's input: one line, no traceback
        p.error(f"--query: {exc}")
    picked = picked.drop_duplicates(subset=["model", "system", "engine", "version", "isl", "osl", "concurrency",
                                            "tp", "ep", "attention_dp", "gemm_quant", "measured_ttft_ms"])
    rows = [r for r in sr.load() if r["id"] in set(picked.id)]
    lines = []
    for row in rows:
        base = picked[picked.id == row["id"]].iloc[0]
        lines.append({"id": row["id"], "gib": 0.0, "ttft_ms": base.predicted_ttft_ms,
                      "tpot_ms": base.predicted_tpot_ms, "preemptions": base.preemptions,
                      "kv_peak": base.kv_peak_fraction})
        lines += [{"id": row["id"], **run(row, g)} for g in shifts]
    out = pd.DataFrame(lines).merge(picked[["id", "concurrency", "isl", "osl", "measured_ttft_ms",
                                            "measured_tpot_ms"]], on="id")
    out["ttft_x"] = out.ttft_ms / out.measured_ttft_ms
    out["tpot_x"] = out.tpot_ms / out.measured_tpot_ms
    with pd.option_context("display.width", 250, "display.max_rows", 500):
        print(out.round(3).sort_values(["id", "gib"]).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
