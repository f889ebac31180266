"""Signatures in the measured TTFT of the serving set (benchmarks/data/serving_reference.csv joined with
reference/aiconfigurator-serving/silicon_calibration.csv for each row's source), read from the measurements alone:
no simulation, nothing fitted.

- Decode-time slope: within one run (engine, version, source file, model, GPU) at one layout, input length and
  N clients, the rows differ only in output length; a closed loop of N clients whose requests each wait for the
  next completion of another (one slot short) measures TTFT = base + D / N, D = (OSL - 1) x TPOT, the time one
  request decodes (completions come D / N apart). `slope` is the least-squares slope of measured TTFT on D / N
  over a group's output lengths: ~1 is that wait, ~0 a TTFT that does not depend on the output length (what an
  engine that admits a prompt at the next step shows).
- Light-load excess: measured minus predicted TTFT (ms) at a run's lowest concurrency, where queueing is least:
  a constant per request the prediction lacks.
- Prefill stall vs request path (added in session 51): two rows of one run that differ only in output length
  o1 < o2 see the other N - 1 clients' prefills (about one each per request when TTFT << decode time) spread over
  o - 1 tokens, so the TPOT excess over the prediction, e_o = measured - predicted TPOT, is e_o = base + (N - 1) S /
  (o - 1), S the time each prefill step stalls the running decodes beyond its prediction; the twins give S =
  (e_o1 - e_o2) / ((N - 1) (1 / (o1 - 1) - 1 / (o2 - 1))). A request's own TTFT excess then splits into S (its own
  prefill step, longer than priced) and the rest R = TTFT excess - S, a cost on its path outside the step loop
  (waiting for the scheduler to read it, tokenization, HTTP, streaming the first token) that running decodes do not
  see. Nothing fitted; a reading of the measured rows against the prediction.
- Excess by load (added in session 52): one layout's TTFT excess at each N <= 16. A cost on the request's path
  that holds no GPU adds the same ms at every N; a prefill step longer than priced also delays the prompts queued
  behind it, so its excess grows with N once prefills queue (while they rarely do, flat fits either).
- Token-rate ceiling: the output tokens per second a run's closed loop streamed (N x OSL / (TTFT + D)) at its
  highest concurrency, by TP size: a rate that stays put while the GPUs double is a limit outside them (the
  serving path streaming every token, or the client).
- Heavy load (added in session 53, issue 37): at N >= 64 a closed loop's request rate is N / (TTFT + D) and the
  requests decoding at a time N x D / (TTFT + D) (Little's law), each read from the measured and from the predicted
  TTFT and TPOT, by TP. A measured rate that stays put while TP doubles and the prediction's grows is a limit outside
  the GPUs (the serving path); measured requests in service well below the prediction's, with TPOT matched, are
  requests held before their first token (admission, KV capacity or the serving path), not slower steps.

- TPOT across TP (added in session 59, issue 37): one run's measured TPOT at its largest TP over its second largest, at
  the same lengths and N, against the predicted ratio. GPU-bound steps shorten as predicted; a ratio near 1 where the
  prediction gives ~0.8 is a per-token time TP does not shorten (host time per step, or the serving path).

- Decode slots in service (added in session 53): a disaggregated row's requests decoding at once, by Little's law
  X x D with X = N / (TTFT + D) the served rate and D = (mean output - 1) x TPOT (sa-bench's mean output 0.9 x OSL),
  per decode rank (workers x attention-DP ranks), against N / ranks, the max batch the set's decode_batch_size
  implies (every db-dump row has N = workers x ranks x decode_batch_size: the figure follows the load, not the
  launch). A count that sits below N / ranks at the same value at both input lengths is a cap on the decode side
  (the launch's max batch), not a prefill queue, which grows with the prompt.

- Excess across TP (added in session 59): one engine, model, GPU and input length at N <= 8, the excess against
  the predicted TTFT over TP sizes. A prefill priced at x r misses (1/r - 1) of its price, shrinking as TP shrinks
  the step (slope ~1/r - 1 on the predicted TTFT, intercept ~0); a cost per request off the GPU step misses the
  same ms at every TP (slope ~0).
- Measured TTFT across TP (added in session 59, helper J): the same groups, the measured TTFT at the largest TP over
  the smallest against the predicted ratio. Near 1 against a priced ~0.5: a time every rank repeats whatever the TP
  (an eager step's host time, the serving path), which is what an excess growing with TP is when the priced step
  shrinks under it.
- Excess per cell against the layers (added in session 60, helper G): the same excess at N <= 8 with each release,
  GPU, model and GEMM precision apart, beside the model's layers: a host time per layer is the same ms a layer in the
  cells of one release and GPU at 1k and 8k alike; a price per token grows from 1k to 8k; a cost per request is the
  same ms whatever the layers.
- TTFT miss, split by the closed loop (added in session 56): a closed loop's cycle is TTFT + D, so measured minus
  predicted TTFT is exactly (measured cycle - predicted cycle) + (predicted D - measured D). The first term is the
  rate (the prediction serves the N clients faster or slower: prefill or admission capacity); the second is decode
  time the prediction spends where the measurement waited for a first token: a decode priced slow throttles the
  simulated arrivals and hides a prefill queue, so TTFT reads low with the rate right.

`python benchmarks/serving_signatures.py [--engine trtllm] [--max-clients 32]` prints both per run.

Long because: each signature is a small function over the same loaded rows plus its table in main(); split, every
part would re-implement the loader and grouping (completion_wait.py imports them instead).
"""
from __future__ import annotations

import argparse
import csv
import functools
import re
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "data" / "serving_reference.csv"
REFERENCE = HERE.parent / "reference" / "aiconfigurator-serving" / "silicon_calibration.csv"
MIN_OUTPUTS = 3   # output lengths a group needs for a slope


def source(reference_row: dict) -> str:
    """The run a row comes from: its source file (or database dump) as silicon_data_source names it."""
    text = reference_row["silicon_data_source"]
    m = re.search(r"source_file=([^;]*)", text)
    return (m[1].rsplit("/data/", 1)[-1] if m else text.split(";")[0]).strip()


def load(results: Path = RESULTS, reference: Path = REFERENCE) -> list[dict]:
    """Expressible rows of the result table, each with its reference row's `source` and decode pool's ranks
    (`decode_ranks`: decode_num_workers x decode_attention_dp_size, '' for an aggregated row)."""
    with open(reference, newline="") as fh:
        refs = {r["id"]: (source(r), _decode_ranks(r)) for r in csv.DictReader(fh)}
    with open(results, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["scored"] == "1" and r["measured_ttft_ms"]]
    for r in rows:
        r["source"], r["decode_ranks"] = refs.get(r["id"], ("", ""))
    return rows


def _decode_ranks(reference_row: dict) -> str:
    workers = reference_row.get("decode_num_workers", "")
    if not workers:
        return ""
    return str(int(float(workers)) * int(float(reference_row.get("decode_attention_dp_size") or 1)))


def decode_per_client_ms(row: dict) -> float:
    """D / N: one request's decode time (ms) over the clients, the gap between completions in a closed loop."""
    return (int(float(row["osl"])) - 1) * float(row["measured_tpot_ms"]) / float(row["concurrency"])


def fit_line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(slope, intercept) of the least-squares line through the points (xs distinct)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("fit_line: the x values are all equal")
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def run_of(row: dict) -> tuple:
    return (row["engine"], row["version"], row["source"], row["model"], row["system"], row["mode"])


def output_groups(rows: list[dict], max_clients: int = 32) -> dict[tuple, list[dict]]:
    """Aggregated rows at N <= max_clients keyed (run, tp, isl, N), only groups of >= MIN_OUTPUTS output lengths:
    rows of one run that differ only in output length."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["mode"] == "agg" and float(r["concurrency"]) <= max_clients:
            groups.setdefault((run_of(r), r["tp"], r["isl"], r["concurrency"]), []).append(r)
    return {k: v for k, v in groups.items() if len({m["osl"] for m in v}) >= MIN_OUTPUTS}


def slopes(rows: list[dict], max_clients: int = 32) -> dict[tuple, list[tuple]]:
    """Per run, (tp, isl, N, slope, intercept ms) of each group of >= MIN_OUTPUTS output lengths at N <= max_clients."""
    out: dict[tuple, list[tuple]] = {}
    for (run, tp, isl, n), members in output_groups(rows, max_clients).items():
        slope, icpt = fit_line([decode_per_client_ms(m) for m in members],
                               [float(m["measured_ttft_ms"]) for m in members])
        out.setdefault(run, []).append((int(tp), int(isl), int(float(n)), slope, icpt))
    return out


def light_load_excess(rows: list[dict]) -> dict[tuple, tuple[int, float, float, int]]:
    """Per run: (lowest N, median measured - predicted TTFT ms, median predicted / measured, rows) at that N."""
    by_run: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["predicted_ttft_ms"]:
            by_run.setdefault(run_of(r), []).append(r)
    out = {}
    for run, members in by_run.items():
        n = min(float(m["concurrency"]) for m in members)
        low = [m for m in members if float(m["concurrency"]) == n]
        diff = statistics.median(float(m["measured_ttft_ms"]) - float(m["predicted_ttft_ms"]) for m in low)
        ratio = statistics.median(float(m["predicted_ttft_ms"]) / float(m["measured_ttft_ms"]) for m in low)
        out[run] = (int(n), diff, ratio, len(low))
    return out


def prefill_stall(rows: list[dict], max_clients: int = 16) -> dict[tuple, list[tuple]]:
    """Per run, (model-level key: tp, ep, gemm quant, isl, N; S ms, R ms) of each twin pair (the shortest and the
    longest output length of a group at N <= max_clients, N >= 2): S the extra stall a prefill step puts on the
    running decodes, R the rest of the shortest-output row's TTFT excess (module docstring)."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        n = float(r["concurrency"])
        if r["mode"] == "agg" and 2 <= n <= max_clients and r.get("predicted_tpot_ms") and r.get("predicted_ttft_ms"):
            key = (r["tp"], r.get("ep", ""), r.get("gemm_quant", ""), r["isl"], r["concurrency"])
            groups.setdefault((run_of(r), key), []).append(r)
    out: dict[tuple, list[tuple]] = {}
    for (run, key), members in groups.items():
        short = min(members, key=lambda m: int(float(m["osl"])))
        long = max(members, key=lambda m: int(float(m["osl"])))
        o1, o2 = int(float(short["osl"])), int(float(long["osl"]))
        if o2 <= o1:
            continue
        excess = [float(m["measured_tpot_ms"]) - float(m["predicted_tpot_ms"]) for m in (short, long)]
        n = float(short["concurrency"])
        stall = (excess[0] - excess[1]) / ((n - 1) * (1 / (o1 - 1) - 1 / (o2 - 1)))
        rest = float(short["measured_ttft_ms"]) - float(short["predicted_ttft_ms"]) - stall
        out.setdefault(run, []).append((*key, stall, rest))
    return out


def excess_by_load(rows: list[dict], max_clients: int = 16) -> dict[tuple, list[tuple]]:
    """Per run, (tp, ep, gemm quant, isl, osl; {N: median measured - predicted TTFT ms}) of each layout and length
    pair measured at 2+ concurrencies N <= max_clients (added in session 52). A cost on the request's path that
    holds no GPU (R) adds the same ms at every N; a longer prefill step (S) also delays the prompts queued behind
    it, so its excess grows with N once prefills queue (while they rarely do, a flat excess fits either)."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["mode"] == "agg" and r.get("predicted_ttft_ms") and float(r["concurrency"]) <= max_clients:
            key = (r["tp"], r.get("ep", ""), r.get("gemm_quant", ""), r["isl"], r["osl"])
            groups.setdefault((run_of(r), key), []).append(r)
    out: dict[tuple, list[tuple]] = {}
    for (run, key), members in groups.items():
        loads = sorted({int(float(m["concurrency"])) for m in members})
        if len(loads) < 2:
            continue
        excess = {n: statistics.median(float(m["measured_ttft_ms"]) - float(m["predicted_ttft_ms"])
                                       for m in members if int(float(m["concurrency"])) == n) for n in loads}
        out.setdefault(run, []).append((*key, excess))
    return out


def light_load_by_tp(rows: list[dict], max_clients: int) -> dict[tuple, dict[int, list[dict]]]:
    """The aggregated rows with a prediction at N <= max_clients, by (engine, model, GPU, input length), then TP."""
    groups: dict[tuple, dict[int, list[dict]]] = {}
    for r in rows:
        if r["mode"] == "agg" and r.get("predicted_ttft_ms") and float(r["concurrency"]) <= max_clients:
            key = (r["engine"], r["model"], r["system"], int(r["isl"]))
            groups.setdefault(key, {}).setdefault(int(r["tp"]), []).append(r)
    return groups


def excess_across_tp(rows: list[dict], max_clients: int = 8) -> dict[tuple, tuple[list[tuple], tuple | None]]:
    """Per (engine, model, GPU, input length) at N <= max_clients (aggregated rows; added in session 59): ([(tp,
    rows, median measured - predicted TTFT ms, median predicted TTFT ms)], the least-squares (slope, intercept ms) of
    the excess on the predicted TTFT over the TP sizes, None under 3 sizes). A prefill step priced at x r of its real
    time misses (1/r - 1) of its price at every TP, so the excess falls with the predicted TTFT as TP grows (slope
    ~0.45 at x0.69, intercept ~0); a cost per request outside the GPU step misses the same ms at every TP (slope ~0,
    the intercept that cost); an excess that grows while the predicted TTFT falls is a per-request cost growing with
    TP (the engine's ranks, not its kernels)."""
    groups = light_load_by_tp(rows, max_clients)
    out: dict[tuple, tuple[list[tuple], tuple | None]] = {}
    for key, by_tp in groups.items():
        points = [(tp, len(ms), statistics.median(float(m["measured_ttft_ms"]) - float(m["predicted_ttft_ms"])
                                                  for m in ms),
                   statistics.median(float(m["predicted_ttft_ms"]) for m in ms)) for tp, ms in sorted(by_tp.items())]
        line = fit_line([p[3] for p in points], [p[2] for p in points]) if len(points) >= 3 else None
        out[key] = (points, line)
    return out


def measured_across_tp(rows: list[dict], max_clients: int = 8) -> dict[tuple, tuple[int, int, float, float, float]]:
    """Per (engine, model, GPU, input length) at N <= max_clients over 3+ TP sizes (aggregated rows; added in session
    59, helper J): (smallest TP, largest TP, median measured TTFT ms at the largest, measured ratio largest / smallest,
    predicted ratio the same). A step bound by the GPUs shortens with TP as priced; a measured ratio near 1 where the
    predicted one is <= 0.7 is a TTFT TP does not shorten, the same ms on every rank: the host time of an eager step
    each rank repeats (its Python per layer, the same at TP1 and TP8) or the serving path. Its excess over the
    prediction then grows with TP only because the priced GPU step shrinks (excess_across_tp's negative slope)."""
    groups = light_load_by_tp(rows, max_clients)
    out: dict[tuple, tuple[int, int, float, float, float]] = {}
    for key, by_tp in groups.items():
        if len(by_tp) < 3:
            continue
        lo, hi = min(by_tp), max(by_tp)
        meas = {t: statistics.median(float(m["measured_ttft_ms"]) for m in by_tp[t]) for t in (lo, hi)}
        pred = {t: statistics.median(float(m["predicted_ttft_ms"]) for m in by_tp[t]) for t in (lo, hi)}
        out[key] = (lo, hi, meas[hi], meas[hi] / meas[lo], pred[hi] / pred[lo])
    return out


def excess_by_cell(rows: list[dict], max_clients: int = 8) -> dict[tuple, dict[tuple[int, int], tuple[int, float]]]:
    """Per cell (engine, version, GPU, model, GEMM quant mode) at N <= max_clients (aggregated rows; added in session
    60, helper G): {(input length, TP): (rows, median measured - predicted TTFT ms)}. light_load_by_tp pools releases
    and precisions; this keeps them apart, so one cell is one launch. Read against the model's layers (model_layers):
    a host time per layer (eager launches the prediction prices short) is the same ms a layer in the cells of one
    release and GPU, at 1k and 8k alike; a price per token grows from 1k to 8k; a cost per request is the same ms
    whatever the layers."""
    cells: dict[tuple, dict[tuple[int, int], list[float]]] = {}
    for r in rows:
        if r["mode"] == "agg" and r.get("predicted_ttft_ms") and float(r["concurrency"]) <= max_clients:
            key = (r["engine"], r["version"], r["system"], r["model"], r.get("gemm_quant", ""))
            gap = float(r["measured_ttft_ms"]) - float(r["predicted_ttft_ms"])
            cells.setdefault(key, {}).setdefault((int(r["isl"]), int(r["tp"])), []).append(gap)
    return {key: {at: (len(gaps), statistics.median(gaps)) for at, gaps in sorted(by.items())}
            for key, by in cells.items()}


@functools.cache
def model_layers(model: str) -> tuple[int, int]:
    """(layers, MoE layers) of a model as whatif's spec gives them; (0, 0) where it has none."""
    from whatif.errors import WhatifError
    from whatif.specs.models import load_model
    try:
        spec = load_model(model)
    except WhatifError:   # a model whatif has no spec for: the table shows no layers
        return 0, 0
    return spec.num_layers, spec.num_moe_layers


def tokens_per_s(row: dict) -> float:
    """Output tokens per second the row's closed loop streamed: N requests of OSL tokens every TTFT + D."""
    cycle_ms = float(row["measured_ttft_ms"]) + (int(float(row["osl"])) - 1) * float(row["measured_tpot_ms"])
    return float(row["concurrency"]) * int(float(row["osl"])) / cycle_ms * 1e3


def rate_by_tp(rows: list[dict]) -> dict[tuple, tuple[int, dict[int, float]]]:
    """Per run and input length: (its highest N, {tp: the most output tokens/s any output length streamed there})."""
    top: dict[tuple, float] = {}
    for r in rows:
        key = (run_of(r), r["isl"])
        top[key] = max(top.get(key, 0.0), float(r["concurrency"]))
    out: dict[tuple, tuple[int, dict[int, float]]] = {}
    for r in rows:
        key = (run_of(r), r["isl"])
        if r["mode"] != "agg" or float(r["concurrency"]) != top[key]:
            continue
        rates = out.setdefault(key, (int(top[key]), {}))[1]
        rates[int(r["tp"])] = max(rates.get(int(r["tp"]), 0.0), tokens_per_s(r))
    return {k: v for k, v in out.items() if len(v[1]) > 1}


def tpot_across_tp(rows: list[dict], min_clients: int = 32) -> dict[tuple, tuple[int, int, float, float]]:
    """Per run, input/output length and N >= min_clients (aggregated rows with a prediction): (the second largest
    TP, the largest, measured TPOT at the largest / at the second, predicted the same). A step bound by the GPUs
    shortens with TP as the prediction does; a measured ratio near 1 where the predicted one is ~0.8 is a step time
    (or a token delivery) that TP does not shorten: host time per step (Python per layer or per request) or the
    serving path."""
    by_key: dict[tuple, dict[int, tuple[float, float]]] = {}
    for r in rows:
        if r["mode"] != "agg" or float(r["concurrency"]) < min_clients or not r.get("predicted_tpot_ms"):
            continue
        key = (run_of(r), int(r["isl"]), int(float(r["osl"])), int(float(r["concurrency"])))
        by_key.setdefault(key, {}).setdefault(int(r["tp"]), (float(r["measured_tpot_ms"]),
                                                             float(r["predicted_tpot_ms"])))
    out: dict[tuple, tuple[int, int, float, float]] = {}
    for key, by_tp in by_key.items():
        if len(by_tp) < 2:
            continue
        hi = max(by_tp)
        lo = max(t for t in by_tp if t < hi)   # the two largest TP sizes: both well past the light-load regime
        out[key] = (lo, hi, by_tp[hi][0] / by_tp[lo][0], by_tp[hi][1] / by_tp[lo][1])
    return out


def cycle_ms(row: dict, which: str = "measured") -> float:
    """One client's cycle (ms) at the row's `which` (measured / predicted) means: TTFT + D, D = (OSL - 1) x TPOT."""
    return float(row[f"{which}_ttft_ms"]) + (int(float(row["osl"])) - 1) * float(row[f"{which}_tpot_ms"])


def requests_per_s(row: dict, which: str = "measured") -> float:
    """Requests a closed loop of N clients completes per second: N / cycle (served_per_s at the full OSL)."""
    return served_per_s(float(row["concurrency"]), float(row[f"{which}_ttft_ms"]), float(row[f"{which}_tpot_ms"]),
                        int(float(row["osl"])))


def served_per_s(clients: float, ttft_ms: float, tpot_ms: float, mean_output: float) -> float:
    """Requests a closed loop of `clients` completes per second: N / cycle, cycle = TTFT + D, D = (mean output - 1)
    x TPOT (each client sends its next request as the last one completes). 0 for an empty cycle."""
    cycle = ttft_ms + max(mean_output - 1, 0) * tpot_ms
    return clients / cycle * 1e3 if cycle > 0 else 0.0


def decoding(clients: float, ttft_ms: float, tpot_ms: float, mean_output: float) -> float:
    """Requests decoding at a time in a closed loop of `clients` (Little's law): the served rate x D; the rest wait
    for their first token. With served_per_s, the one scalar rule the diagnostics share."""
    return served_per_s(clients, ttft_ms, tpot_ms, mean_output) * max(mean_output - 1, 0) * tpot_ms / 1e3


def in_service(row: dict, which: str = "measured") -> float:
    """Requests decoding at a time (Little's law) at the row's `which` means and full OSL."""
    return decoding(float(row["concurrency"]), float(row[f"{which}_ttft_ms"]), float(row[f"{which}_tpot_ms"]),
                    int(float(row["osl"])))


def heavy_load(rows: list[dict], min_clients: int = 64) -> dict[tuple, dict[int, tuple]]:
    """Per run, input/output length and N >= min_clients (aggregated rows): {tp: (measured req/s, predicted req/s,
    measured in service, predicted in service, predicted / measured TTFT)}, the first row of each TP."""
    out: dict[tuple, dict[int, tuple]] = {}
    for r in rows:
        if r["mode"] != "agg" or float(r["concurrency"]) < min_clients or not r.get("predicted_tpot_ms"):
            continue
        key = (run_of(r), int(r["isl"]), int(float(r["osl"])), int(float(r["concurrency"])))
        out.setdefault(key, {}).setdefault(int(r["tp"]), (
            requests_per_s(r), requests_per_s(r, "predicted"), in_service(r), in_service(r, "predicted"),
            float(r["predicted_ttft_ms"]) / float(r["measured_ttft_ms"])))
    return out


def cycle_split(rows: list[dict], min_clients: int = 64) -> dict[tuple, tuple[int, float, float, float, float]]:
    """Per run (aggregated rows at N >= min_clients): (rows, median predicted / measured request rate, median
    predicted / measured TTFT, median measured and predicted share of the cycle spent decoding). At heavy load TTFT is
    the small rest of a cycle (N / rate - D): a rate right within a few % with TTFT off by 2-10x says the prediction
    splits the cycle wrongly (holds too few requests before their first token), not that its steps are too fast."""
    by_run: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["mode"] == "agg" and float(r["concurrency"]) >= min_clients and r.get("predicted_tpot_ms"):
            by_run.setdefault(run_of(r), []).append(r)
    out = {}
    for run, members in by_run.items():
        med = statistics.median
        out[run] = (len(members), med(requests_per_s(m, "predicted") / requests_per_s(m) for m in members),
                    med(float(m["predicted_ttft_ms"]) / float(m["measured_ttft_ms"]) for m in members),
                    med(in_service(m) / float(m["concurrency"]) for m in members),
                    med(in_service(m, "predicted") / float(m["concurrency"]) for m in members))
    return out


RANGE_RATIO = 0.8   # the clients' --random-range-ratio (serving_reference.CLIENT_RANGE_RATIO): lengths in [0.8 L, L]
SA_BENCH_MEAN_OUTPUT = (1 + RANGE_RATIO) / 2   # the mean of a length uniform in [0.8 L, L]: 0.9 L


def decode_in_service(row: dict) -> tuple[float, float] | None:
    """(requests decoding per decode rank by Little's law, N / decode ranks) of a disaggregated row, else None."""
    if not row.get("decode_ranks"):
        return None
    n, ranks = float(row["concurrency"]), int(row["decode_ranks"])
    decoding_now = decoding(n, float(row["measured_ttft_ms"]), float(row["measured_tpot_ms"]), mean_output(row))
    return decoding_now / ranks, n / ranks


def mean_output(row: dict) -> float:
    """The client's mean output length: sa-bench's 0.9 x OSL for a db-dump row, OSL otherwise."""
    return int(float(row["osl"])) * (SA_BENCH_MEAN_OUTPUT if row.get("source", "").startswith("db-dump") else 1)


def ttft_miss_terms(row: dict) -> tuple[float, float]:
    """(rate term, decode term) ms with measured - predicted TTFT = rate + decode: rate = measured cycle - predicted
    cycle (TTFT + D each), decode = predicted D - measured D, D = (mean output - 1) x TPOT."""
    decode = {w: (mean_output(row) - 1) * float(row[f"{w}_tpot_ms"]) for w in ("measured", "predicted")}
    cycle = {w: float(row[f"{w}_ttft_ms"]) + decode[w] for w in decode}
    return cycle["measured"] - cycle["predicted"], decode["predicted"] - decode["measured"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", default="", help="only runs of this engine (trtllm, vllm, sglang)")
    ap.add_argument("--max-clients", type=int, default=32, help="slopes only at N up to this (default 32)")
    ap.add_argument("--min-clients", type=int, default=64, help="heavy load: N from this (default 64)")
    args = ap.parse_args(argv)
    rows = [r for r in load() if not args.engine or r["engine"] == args.engine]
    print(f"decode-time slope of measured TTFT on D/N (groups of >= {MIN_OUTPUTS} output lengths, "
          f"N <= {args.max_clients}):")
    print("| engine | version | source | groups | median slope | slope range | median intercept ms |")
    print("|---|---|---|---|---|---|---|")
    for run, groups in sorted(slopes(rows, args.max_clients).items()):
        s = [g[3] for g in groups]
        print(f"| {run[0]} | {run[1]} | {run[2]} | {len(groups)} | {statistics.median(s):.2f} | "
              f"{min(s):.2f} .. {max(s):.2f} | {statistics.median(g[4] for g in groups):.0f} |")
    print("\nlight load: measured - predicted TTFT at each run's lowest concurrency:")
    print("| engine | version | source | model | GPU | mode | N | rows | median excess ms | median pred/meas |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for run, (n, diff, ratio, count) in sorted(light_load_excess(rows).items()):
        print(f"| {' | '.join(run)} | {n} | {count} | {diff:.0f} | x{ratio:.2f} |")
    print("\nprefill stall S (ms a prefill step holds running decodes beyond its prediction) and the rest R of the "
          "TTFT excess, from output-length twins at N <= 16:")
    print("| engine | version | source | model | twins | median S ms | median R ms | median TTFT excess ms |")
    print("|---|---|---|---|---|---|---|---|")
    for run, pairs in sorted(prefill_stall(rows).items()):
        s_ms, r_ms = [p[-2] for p in pairs], [p[-1] for p in pairs]
        print(f"| {run[0]} | {run[1]} | {run[2]} | {run[3]} | {len(pairs)} | {statistics.median(s_ms):.0f} | "
              f"{statistics.median(r_ms):.0f} | {statistics.median(a + b for a, b in zip(s_ms, r_ms)):.0f} |")
    print("\nTTFT excess (measured - predicted ms) by concurrency, N <= 16: rising is a longer prefill step (S) "
          "delaying queued prompts; flat fits either while prefills rarely queue:")
    print("| engine | version | source | model | tp | ep | gemm | isl/osl | excess ms by N |")
    print("|---|---|---|---|---|---|---|---|---|")
    for run, layouts in sorted(excess_by_load(rows).items()):
        for tp, ep, gemm, isl, osl, excess in sorted(layouts, key=lambda g: g[:5]):
            by_n = ", ".join(f"{n}: {ms:.0f}" for n, ms in excess.items())
            print(f"| {run[0]} | {run[1]} | {run[2]} | {run[3]} | {tp} | {ep} | {gemm} | {isl}/{osl} | {by_n} |")
    print("\nTTFT excess across TP at N <= 8 (measured - predicted ms / predicted ms), and its line on the predicted "
          "TTFT: slope ~1/r - 1 with intercept ~0 is a prefill priced at x r; slope ~0 a cost per request:")
    print("| engine | model | GPU | isl | excess / predicted ms by TP | slope | intercept ms |")
    print("|---|---|---|---|---|---|---|")
    for (engine, model, gpu, isl), (points, line) in sorted(excess_across_tp(rows).items()):
        if line is not None:
            cells = ", ".join(f"TP{tp} {gap:.0f} / {pred:.0f}" for tp, _, gap, pred in points)
            print(f"| {engine} | {model} | {gpu} | {isl} | {cells} | {line[0]:.2f} | {line[1]:.0f} |")
    print("\nmeasured TTFT at N <= 8 from the smallest to the largest TP (a ratio near 1 where the predicted one is "
          "<= 0.7: a time TP does not shorten):")
    print("| engine | model | GPU | isl | TP | measured ms at the largest | measured ratio | predicted ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for (engine, model, gpu, isl), (lo, hi, ms, m_ratio, p_ratio) in sorted(measured_across_tp(rows).items()):
        print(f"| {engine} | {model} | {gpu} | {isl} | {lo}-{hi} | {ms:.0f} | x{m_ratio:.2f} | x{p_ratio:.2f} |")
    print("\nTTFT excess at N <= 8 per cell (one release, GPU, model and GEMM precision) against the layers: "
          "measured - predicted ms by TP at 1k and 8k prompts, and the 1k excess per layer (median over TP):")
    print("| engine | version | GPU | model | gemm | layers (MoE) | 1k by TP | 8k by TP | 1k ms / layer |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (engine, version, gpu, model, gemm), by in sorted(excess_by_cell(rows).items()):
        layers, moe = model_layers(model)
        cell = {isl: ", ".join(f"TP{tp} {gap:.0f}" for (i, tp), (_, gap) in by.items() if i == isl) or "-"
                for isl in (1024, 8192)}
        one_k = [gap for (i, _), (_, gap) in by.items() if i == 1024]
        per_layer = f"{statistics.median(one_k) / layers:.2f}" if one_k and layers else "-"
        print(f"| {engine} | {version or '?'} | {gpu} | {model.split('/')[-1]} | {gemm} | {layers} ({moe}) | "
              f"{cell[1024]} | {cell[8192]} | {per_layer} |")
    print("\ndisaggregated rows: requests decoding per decode rank (Little's law) against N / ranks:")
    print("| engine | GPU | id | isl | N | decode ranks | N / ranks | decoding per rank | TTFT ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: (r["engine"], r["system"], r["id"])):
        found = decode_in_service(r)
        if found:
            print(f"| {r['engine']} | {r['system']} | {r['id']} | {r['isl']} | {r['concurrency']} | "
                  f"{r['decode_ranks']} | {found[1]:g} | {found[0]:.1f} | {float(r['measured_ttft_ms']):.0f} |")
    print("\ndisaggregated rows: measured - predicted TTFT split by the closed loop (rate + decode terms, s):")
    print("| engine | GPU | id | N | TTFT meas / pred s | rate term s | decode term s |")
    print("|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: (r["engine"], r["system"], r["id"])):
        if r["mode"] == "disagg" and r.get("predicted_tpot_ms"):
            rate, dec = ttft_miss_terms(r)
            print(f"| {r['engine']} | {r['system']} | {r['id']} | {r['concurrency']} | "
                  f"{float(r['measured_ttft_ms']) / 1e3:.2f} / {float(r['predicted_ttft_ms']) / 1e3:.2f} | "
                  f"{rate / 1e3:.2f} | {dec / 1e3:.2f} |")
    print("\noutput tokens/s streamed at each run's highest concurrency, by TP (runs with 2+ TP sizes):")
    print("| engine | version | source | model | isl | N | tokens/s by TP |")
    print("|---|---|---|---|---|---|---|")
    for (run, isl), (n, rates) in sorted(rate_by_tp(rows).items()):
        by_tp = ", ".join(f"TP{tp} {rate:,.0f}" for tp, rate in sorted(rates.items()))
        print(f"| {run[0]} | {run[1]} | {run[2]} | {run[3]} | {isl} | {n} | {by_tp} |")

    print("\nmeasured TPOT at the largest TP over the second largest (predicted), N >= 32, same lengths and N:")
    print("| engine | version | model | GPU | isl/osl | N | TP | measured x | predicted x |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (run, isl, osl, n), (lo, hi, meas, pred) in sorted(tpot_across_tp(rows).items()):
        print(f"| {run[0]} | {run[1]} | {run[3]} | {run[4]} | {isl}/{osl} | {n} | {lo}->{hi} | x{meas:.2f} | "
              f"x{pred:.2f} |")

    print(f"\nheavy load (N >= {args.min_clients}): requests/s measured (predicted) and requests in service measured / "
          "predicted (Little's law), by TP:")
    print("| engine | version | model | GPU | isl/osl | N | by TP: req/s meas (pred), in service meas/pred, TTFT x |")
    print("|---|---|---|---|---|---|---|")
    for (run, isl, osl, n), by_tp in sorted(heavy_load(rows, args.min_clients).items()):
        cells = "; ".join(f"TP{tp} {m:.1f} ({p:.1f}), {sm:.0f}/{sp:.0f}, x{x:.2f}"
                          for tp, (m, p, sm, sp, x) in sorted(by_tp.items()))
        print(f"| {run[0]} | {run[1]} | {run[3]} | {run[4]} | {isl}/{osl} | {n} | {cells} |")
    print(f"\ncycle split at N >= {args.min_clients}, per run: median predicted / measured request rate and TTFT, "
          "and the share of the cycle spent decoding (measured, predicted):")
    print("| engine | version | source | model | GPU | rows | rate x | TTFT x | decoding share meas / pred |")
    print("|---|---|---|---|---|---|---|---|---|")
    for run, (count, rate, ttft, share, pshare) in sorted(cycle_split(rows, args.min_clients).items()):
        print(f"| {run[0]} | {run[1]} | {run[2].rsplit('/', 1)[-1]} | {run[3]} | {run[4]} | {count} | x{rate:.2f} | "
              f"x{ttft:.2f} | {share:.2f} / {pshare:.2f} |")


if __name__ == "__main__":
    main()
