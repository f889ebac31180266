"""What the light-load TTFT gap scales with, read from the committed serving table: a diagnostic, nothing mapped.

    python benchmarks/light_load_floor.py [--max-clients 8]

The slice: aggregated, scored rows at N <= max-clients on both GPUs, one row per measurement (the gap-analysis
files and database dumps repeat InferenceX's; repeats are dropped on engine, release, GPU, model, lengths, N, layout,
precision and measured TTFT to 0.1 ms). gap = measured - committed predicted TTFT (ms). Three tables:
1. the gap by GPU, engine, model, release, prompt band and how the row's prefill step ran: `eager` (TensorRT-LLM's
   context steps outside CUDA graphs unless piecewise graphs are set, which InferenceX's DeepSeek recipes do only from
   64 clients, docs/accuracy.md session 55; SGLang's recipes set no prefill graphs), `graphless` (a vLLM step above
   its capture ceiling, vllm/v1/cudagraph_dispatcher.py) or `graphed<=2048` (a vLLM launch the mapping gives
   --max-cudagraph-capture-size 2048, serving_reference.VLLM_CAPTURE_2048: a 1k prompt replays piecewise graphs);
2. per (GPU, engine, model) group, which shape of missing cost fits best, each fitted to the group itself (a reading,
   never a prediction): a constant added to the prediction (c), a floor under it (max(pred, F)), both (a + max), or
   a scale and a constant (k x pred + c; added in session 67: run at --max-clients 64 it tells a miss that grows
   with the priced TTFT, i.e. with the steps and waits the simulation prices, from a per-request constant);
3. a leave-one-GPU-out check of the one shape a mechanism could carry across models: a TensorRT-LLM eager floor of
   h ms per MoE layer, max(pred, h x MoE layers), h fitted on one GPU's TensorRT-LLM rows, scored on the other's.
"""
from __future__ import annotations

import argparse
import statistics
from collections import defaultdict

import serving_reference as sr
import serving_signatures as sg

GRAPHED, GRAPHLESS, EAGER = "graphed<=2048", "graphless", "eager"


def prefill_graph(result: dict, ref: dict) -> str:
    """How a row's prefill step ran (module docstring, table 1)."""
    if result["engine"] != "vllm":
        return EAGER
    kw: dict = {}
    sr.vllm_capture_size(ref, kw)
    return GRAPHED if "cuda_graph_sizes" in kw else GRAPHLESS


def light_rows(max_clients: int = 8) -> list[dict]:
    """The slice, one row per measurement, each with gap, ratio, layers, moe_layers, graph, date, isl_band."""
    refs = {r["id"]: r for r in sr.load()}
    seen, out = set(), []
    for r in sg.load():
        if r["mode"] != "agg" or float(r["concurrency"]) > max_clients or not r["predicted_ttft_ms"]:
            continue
        key = (r["engine"], r["version"], r["system"], r["model"], r["isl"], r["osl"], r["concurrency"], r["tp"],
               r["ep"], r["gemm_quant"], round(float(r["measured_ttft_ms"]), 1))
        if key in seen:
            continue
        seen.add(key)
        ref = refs[r["id"]]
        meas, pred = float(r["measured_ttft_ms"]), float(r["predicted_ttft_ms"])
        layers, moe = sg.model_layers(r["model"])
        isl = int(float(r["isl"]))
        out.append(dict(r, meas=meas, pred=pred, gap=meas - pred, layers=layers, moe_layers=moe,
                        graph=prefill_graph(r, ref), date=sr.measured_date(ref) or "",
                        isl_band="<=1k" if isl <= 1024 else ("2-4k" if isl <= 4096 else "8k")))
    return out


def eager_rows(max_clients: int, isl: int | None, moe_only: bool = False) -> list[dict]:
    """light_rows whose prefill ran outside CUDA graphs, of one prompt length (None: any), of MoE models only if
    `moe_only` (the slice the eager-host diagnostics price: moe_sync_price.py, eager_call_cost.py)."""
    return [r for r in light_rows(max_clients) if r["graph"] != GRAPHED and (not moe_only or r["moe_layers"])
            and (isl is None or int(float(r["isl"])) == isl)]


def mape(meas: list[float], pred: list[float]) -> float:
    return 100 * statistics.fmean(abs(p / m - 1) for m, p in zip(meas, pred))


def best_constant(meas: list[float], pred: list[float]) -> tuple[float, float]:
    """(c ms, MAPE %) of the best measured = pred + c, c on a 1 ms grid in [-100, 400)."""
    return min(((c, mape(meas, [p + c for p in pred])) for c in range(-100, 400)), key=lambda t: t[1])


def best_floor(meas: list[float], pred: list[float]) -> tuple[float, float]:
    """(F ms, MAPE %) of the best measured = max(pred, F), F on a 1 ms grid in [0, 800)."""
    return min(((f, mape(meas, [max(p, f) for p in pred])) for f in range(0, 800)), key=lambda t: t[1])


def best_both(meas: list[float], pred: list[float]) -> tuple[float, float, float]:
    """(a ms, F ms, MAPE %) of the best measured = a + max(pred, F), both on a 2 ms grid."""
    return min(((a, f, mape(meas, [a + max(p, f) for p in pred])) for a in range(0, 200, 2)
                for f in range(0, 400, 2)), key=lambda t: t[2])


def best_scale_constant(meas: list[float], pred: list[float]) -> tuple[float, float, float]:
    """(k, c ms, MAPE %) of the best measured = k x pred + c, k on a 0.02 grid in [0.5, 3), c on a 4 ms grid in
    [-100, 300): whether a group's miss grows with the priced TTFT (a step priced low, k > 1) or stays flat (c)."""
    return min(((k / 50, c, mape(meas, [k / 50 * p + c for p in pred])) for k in range(25, 150)
                for c in range(-100, 300, 4)), key=lambda t: t[2])


def by_group(rows: list[dict], keys: tuple[str, ...]) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[tuple(r[k] for k in keys)].append(r)
    return dict(sorted(groups.items()))


def per_moe_layer_floor(rows: list[dict]) -> float:
    """h (ms a MoE layer, 0.01 ms grid in [0, 6)) minimizing the rows' MAPE of max(pred, h x MoE layers)."""
    meas, pred, moe = [r["meas"] for r in rows], [r["pred"] for r in rows], [r["moe_layers"] for r in rows]
    return min((h / 100 for h in range(600)),
               key=lambda h: mape(meas, [max(p, h * n) for p, n in zip(pred, moe)]))


def off_by_3x(meas: list[float], pred: list[float]) -> int:
    return sum(p / m < 1 / 3 or p / m > 3 for m, p in zip(meas, pred))


def leave_one_gpu_out(rows: list[dict]) -> list[tuple]:
    """(fit GPU, h, GPU, model, n, MAPE before, MAPE after, off-3x before, after) over the TensorRT-LLM rows."""
    trt = [r for r in rows if r["engine"] == "trtllm"]
    gpus = sorted({r["system"] for r in trt})
    out = []
    for fit_gpu in gpus:
        h = per_moe_layer_floor([r for r in trt if r["system"] == fit_gpu])
        for (gpu, model), g in by_group(trt, ("system", "model")).items():
            meas, pred = [r["meas"] for r in g], [r["pred"] for r in g]
            new = [max(r["pred"], h * r["moe_layers"]) for r in g]
            out.append((fit_gpu, h, gpu, model, len(g), mape(meas, pred), mape(meas, new), off_by_3x(meas, pred),
                        off_by_3x(meas, new)))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-clients", type=int, default=8, help="the slice's largest N (default 8)")
    rows = light_rows(ap.parse_args(argv).max_clients)
    print(f"{len(rows)} measurements\n\n1. gap by prefill step (median ms; measured / predicted TTFT, dates):")
    print("| GPU | engine | model | release | prefill | prompts | rows | gap | measured | predicted | dates |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for key, g in by_group(rows, ("system", "engine", "model", "version", "graph", "isl_band")).items():
        dates = sorted(r["date"] for r in g if r["date"]) or ["-"]
        print(f"| {' | '.join(key)} | {len(g)} | {statistics.median(r['gap'] for r in g):.0f} | "
              f"{statistics.median(r['meas'] for r in g):.0f} | {statistics.median(r['pred'] for r in g):.0f} | "
              f"{dates[0][5:]}..{dates[-1][5:]} |")
    print("\n2. shape of the missing cost per group (each fitted to the group: a reading, not a prediction):")
    print("| GPU | engine | model | layers (MoE) | rows | MAPE now | c | MAPE pred+c | F | F / layer "
          "| MAPE max(pred,F) | a, F | MAPE a+max | k, c | MAPE k*pred+c |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (gpu, engine, model), g in by_group([r for r in rows if r["graph"] != GRAPHED],
                                            ("system", "engine", "model")).items():
        if len(g) < 8:
            continue
        meas, pred = [r["meas"] for r in g], [r["pred"] for r in g]
        (c, m_c), (f, m_f), (a, f2, m_b) = best_constant(meas, pred), best_floor(meas, pred), best_both(meas, pred)
        k, c2, m_k = best_scale_constant(meas, pred)
        layers, moe = g[0]["layers"], g[0]["moe_layers"]
        print(f"| {gpu} | {engine} | {model} | {layers} ({moe}) | {len(g)} | {mape(meas, pred):.1f}% | {c:.0f} | "
              f"{m_c:.1f}% | {f:.0f} | {f / layers:.1f} | {m_f:.1f}% | {a:.0f}, {f2:.0f} | {m_b:.1f}% | "
              f"{k:.2f}, {c2:.0f} | {m_k:.1f}% |")
    print("\n3. a TensorRT-LLM eager floor of h ms a MoE layer, fitted on one GPU, scored on both:")
    print("| fit on | h ms | GPU | model | rows | TTFT MAPE | off by 3x |")
    print("|---|---|---|---|---|---|---|")
    for fit_gpu, h, gpu, model, n, before, after, off0, off1 in leave_one_gpu_out(rows):
        print(f"| {fit_gpu} | {h:.2f} | {gpu} | {model} | {n} | {before:.1f} -> {after:.1f}% | {off0} -> {off1} |")


if __name__ == "__main__":
    main()
