"""Is the light-load TTFT gap one host cost per eager call, per engine? A diagnostic, nothing mapped.

    python benchmarks/eager_call_cost.py [--max-clients 8] [--isl 1024]

The hypothesis (docs/accuracy.md "Session 65 L"): the host time of an eager (or vLLM graphless) prefill pass is the
number of host-side op calls in it times one per-call cost of the engine's eager Python path (PyTorch dispatch,
module code, custom-op wrapper and autotuner cache lookup: TensorRT-LLM PR #13116 "adds significant Python overhead
on every custom op call"). The call count is whatif's own: the launches forward_pass.time_pass charges the pass
(kernels, times op_launches / module_host factors), read from the launch queue it runs. For the first row of each
deployment group of the light-load slice (light_load_floor.py, prefill outside CUDA graphs) the pass is priced once;
then the queue is rerun at a per-call cost c in place of the engine's (kernels.eager_launch_s or piecewise_call_s),
and the pass difference is added to each row's committed predicted TTFT (one prefill pass a light-load TTFT, as in
moe_sync_price.py). Tables: the gap per call (us) by group, and c per engine fitted on one GPU's rows (MAPE over a
1 us grid), scored on the other GPU's rows, both directions. Nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import statistics
from contextlib import contextmanager

import light_load_floor as llf
import serving_reference as sr
from step_ops import prefill_pass

from whatif.roofline import forward_pass
from whatif.roofline.ops import OpClass, is_overlapped

GROUP = ("system", "engine", "model", "version", "gemm_quant", "tp", "ep", "isl")
GRID_US = range(0, 401)   # per-call host cost candidates, us


@contextmanager
def recorded_queues(calls: list):
    """forward_pass.launch_queue_time, each call's arguments appended to `calls` (one a pipeline stage)."""
    plain = forward_pass.launch_queue_time

    def recording(times, launch_s, gap_s, factors=None, gaps=None, **kw):
        calls.append((times, launch_s, gap_s, factors, gaps))
        return plain(times, launch_s, gap_s, factors, gaps, **kw)

    forward_pass.launch_queue_time = recording
    try:
        yield
    finally:
        forward_pass.launch_queue_time = plain


def host_calls(times, factors) -> float:
    """The launches the queue charges: every non-transfer kernel, an op in `factors` that many times."""
    return sum(t.op.count * ((factors or {}).get(id(t.op), 1.0)) for t in times
               if not is_overlapped(t.op) and t.op.op_class != OpClass.TRANSFER)


def queue_pricer(ref: dict) -> dict:
    """The row's prefill pass: GPU / host ms of the main pass, calls and queue ms of every eager queue the pass
    runs (an MTP row's draft-layer prefill too, native_speculative.prefill_s), the engine's per-call cost (us), and
    a function c_us -> the queues' change (ms) when every call costs c_us instead."""
    queues: list = []
    with recorded_queues(queues):
        p = prefill_pass(ref)
    calls = sum(host_calls(q[0], q[3]) for q in queues)
    base = sum(forward_pass.launch_queue_time(*q) for q in queues)

    def delta_ms(c_us: float) -> float:
        return (sum(forward_pass.launch_queue_time(t, c_us * 1e-6, g, f, gs) for t, _, g, f, gs in queues)
                - base) * 1e3
    launch_us = queues[0][1] * 1e6 if queues else 0.0
    return {"gpu_ms": p.gpu_s * 1e3, "host_ms": p.launch_s * 1e3, "pass_ms": base * 1e3, "calls": calls,
            "launch_us": launch_us, "delta_ms": delta_ms if queues else (lambda c_us: 0.0)}


def slice_rows(max_clients: int, isl: int | None) -> list[dict]:
    """The light-load rows whose prefill ran outside CUDA graphs (of one prompt length), dense and MoE."""
    return llf.eager_rows(max_clients, isl)


def price_groups(rows: list[dict]) -> list[dict]:
    """One record per deployment group: its rows, the gap, the pass parts and the per-call repricer."""
    refs = {r["id"]: r for r in sr.load()}
    out = []
    for key, g in llf.by_group(rows, GROUP).items():
        p = queue_pricer(refs[g[0]["id"]])
        if not p["calls"]:
            continue
        gap = statistics.median(r["gap"] for r in g)
        # the per-call cost at which a host-bound pass would take pass + gap (calls x c = pass + gap)
        out.append(dict(zip(GROUP, key), rows=g, gap=gap, implied_us=(p["pass_ms"] + gap) / p["calls"] * 1e3,
                        gap_per_call_us=gap / p["calls"] * 1e3, **p))
    return out


def score(groups: list[dict], c_us: float) -> tuple[float, float, int, int]:
    """(MAPE before %, MAPE with every call at c_us %, off-by-3x before, after) over the groups' rows."""
    meas = [r["meas"] for g in groups for r in g["rows"]]
    pred = [r["pred"] for g in groups for r in g["rows"]]
    new = [r["pred"] + g["delta_ms"](c_us) for g in groups for r in g["rows"]]
    return llf.mape(meas, pred), llf.mape(meas, new), llf.off_by_3x(meas, pred), llf.off_by_3x(meas, new)


def fit(groups: list[dict]) -> float:
    """The per-call cost (us, 1 us grid) minimizing the groups' TTFT MAPE."""
    cache = {id(g): [g["delta_ms"](c) for c in GRID_US] for g in groups}
    meas = [r["meas"] for g in groups for r in g["rows"]]

    def mape_at(i: int) -> float:
        return llf.mape(meas, [r["pred"] + cache[id(g)][i] for g in groups for r in g["rows"]])
    return GRID_US[min(range(len(GRID_US)), key=mape_at)]


def leave_one_gpu_out(groups: list[dict]) -> list[tuple]:
    """(engine, fit GPU, c us, score GPU, model, rows, MAPE before, after, off-3x before, after), per engine."""
    out = []
    for engine in sorted({g["engine"] for g in groups}):
        eg = [g for g in groups if g["engine"] == engine]
        gpus = sorted({g["system"] for g in eg})
        for fit_gpu in gpus:
            c = fit([g for g in eg if g["system"] == fit_gpu])
            for (gpu, model), mg in llf.by_group(eg, ("system", "model")).items():
                rows = sum(len(g["rows"]) for g in mg)
                out.append((engine, fit_gpu, c, gpu, model, rows, *score(mg, c)))
            for gpu in gpus:
                sg = [g for g in eg if g["system"] == gpu]
                out.append((engine, fit_gpu, c, gpu, "ALL", sum(len(g["rows"]) for g in sg), *score(sg, c)))
    return out


def per_model(groups: list[dict]) -> list[tuple]:
    """(engine, GPU, model, rows, c us fitted to that model's rows alone, MAPE before, after): the spread of c."""
    return [(*k, sum(len(g["rows"]) for g in mg), c, *score(mg, c)[:2])
            for k, mg in llf.by_group(groups, ("engine", "system", "model")).items() for c in [fit(mg)]]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-clients", type=int, default=8, help="the slice's largest N (default 8)")
    ap.add_argument("--isl", type=int, default=1024, help="one prompt length (default 1024; 0: all)")
    ap.add_argument("--drop", default="", help="leave out models whose name contains this (a sensitivity check)")
    args = ap.parse_args(argv)
    rows = [r for r in slice_rows(args.max_clients, args.isl or None) if not (args.drop and args.drop in r["model"])]
    groups = price_groups(rows)
    print("1. the gap per eager call (whatif's launch count of the prefill pass):")
    print("| GPU | engine | model | release | GEMMs | tp / ep | ISL | rows | gap ms | main pass GPU / host ms | calls "
          "| engine us a call | gap / calls us | (queues + gap) / calls us |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for g in groups:
        print(f"| {g['system']} | {g['engine']} | {g['model'].split('/')[-1]} | {g['version'] or '-'} | "
              f"{g['gemm_quant']} | {g['tp']} / {g['ep']} | {g['isl']} | {len(g['rows'])} | {g['gap']:+.0f} | "
              f"{g['gpu_ms']:.1f} / {g['host_ms']:.1f} | {g['calls']:.0f} | {g['launch_us']:.1f} | "
              f"{g['gap_per_call_us']:+.1f} | {g['implied_us']:.1f} |")
    print("\n2. one per-call host cost per engine, fitted on one GPU's rows, scored on both (TTFT MAPE, off by 3x):")
    print("| engine | fit on | c us a call | GPU | model | rows | TTFT MAPE | off by 3x |")
    print("|---|---|---|---|---|---|---|---|")
    for engine, fit_gpu, c, gpu, model, n, before, after, off0, off1 in leave_one_gpu_out(groups):
        name = f"**{model}**" if model == "ALL" else model.split("/")[-1]
        print(f"| {engine} | {fit_gpu} | {c} | {gpu} | {name} | {n} | {before:.1f} -> {after:.1f}% | "
              f"{off0} -> {off1} |")
    print("\n3. the per-call cost each model's rows alone would take (in-sample, a reading):")
    print("| engine | GPU | model | rows | c us a call | TTFT MAPE |")
    print("|---|---|---|---|---|---|")
    for engine, gpu, model, n, c, before, after in per_model(groups):
        print(f"| {engine} | {gpu} | {model.split('/')[-1]} | {n} | {c} | {before:.1f} -> {after:.1f}% |")


if __name__ == "__main__":
    main()
