"""The light-load TTFT gap (measured - predicted, ms) by model, engine, GPU, TP/EP and prompt length, beside the
model's structure: a diagnostic on the committed serving table, nothing fitted, nothing mapped.

    python benchmarks/light_load_gap_table.py [--max-clients 8] [--price]

The slice is light_load_floor.py's (aggregated, expressible rows at N <= max-clients, one row per measurement:
the gap-analysis files and database dumps that repeat InferenceX's are dropped). Three tables, arithmetic on the
committed columns (measured / predicted TTFT and TPOT) and on whatif's model specs:
1. per (GPU, engine, model, TP, EP, ISL): layers (MoE layers), routed experts / top-k and experts a rank (routed
   experts / EP), the attention kind (MLA, DSA = MLA + indexer, GQA, GDN hybrid), how the prefill ran
   (light_load_floor.prefill_graph), rows, median measured / predicted TTFT, the gap, the gap a MoE layer and the
   median TPOT ratio (predicted / measured). `--price` adds whatif's prefill pass of one prompt for the group's
   first row (eager_call_cost.queue_pricer: GPU ms, eager host ms, host calls), and the per-call host cost a
   host-bound pass of pass + gap would need.
2. contrasts inside one deployment (model, engine, release, GPU, precision, TP, EP unless varied), the median gap
   of each side over matched pairs: 8k vs 1k prompts (same N), N = 8 vs N = 4 (same ISL; a once-a-run cost spread
   over the 10 N requests the client averages would halve), EP = TP vs EP 1 (same N, ISL: per-local-expert work),
   TensorRT-LLM 1.2.0rc6.post3 (MTP k=3) vs .post2 (no MTP) of one layout, NVFP4 vs FP8 of one layout.
3. what the 1k gap moves with, over the B200 groups of table 1 whose prefill ran outside CUDA graphs: Spearman rank
   correlation of the group gap with layers, MoE layers, experts a rank, the measured TPOT and (with --price)
   whatif's GPU pass and eager host time.
"""
from __future__ import annotations

import argparse
import statistics

import light_load_floor as llf

GROUP = ("system", "engine", "model", "tp", "ep", "isl")


def structure(model: str) -> dict:
    """The model's shape as whatif's spec has it: experts, top-k and the attention kind."""
    from whatif.errors import WhatifError
    from whatif.specs.models import load_model
    try:
        spec = load_model(model)
    except WhatifError:   # no spec: the table shows dashes
        return {"experts": 0, "topk": 0, "attention": "-"}
    if spec.mla is not None:
        kind = "DSA" if spec.indexer is not None else "MLA"
    else:
        kind = "GDN+GQA" if spec.linear_attention is not None else "GQA"
    moe = spec.moe
    return {"experts": moe.num_experts if moe else 0, "topk": moe.experts_per_token if moe else 0, "attention": kind}


def spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman's rank correlation (average ranks for ties); nan under 3 points or a constant side."""
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(v):
            j = i
            while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r
    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return float("nan")
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    return cov / (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5


def tpot_ratio(r: dict) -> float:
    return float(r["predicted_tpot_ms"]) / float(r["measured_tpot_ms"])


def group_table(rows: list[dict], price: bool) -> list[dict]:
    """Table 1's records, one per GROUP."""
    refs = None
    out = []
    for key, g in llf.by_group(rows, GROUP).items():
        rec = dict(zip(GROUP, key), **structure(key[2]), rows=len(g), layers=g[0]["layers"],
                   moe_layers=g[0]["moe_layers"], graph="/".join(sorted({r["graph"] for r in g})),
                   meas=statistics.median(r["meas"] for r in g), pred=statistics.median(r["pred"] for r in g),
                   gap=statistics.median(r["gap"] for r in g),
                   tpot=statistics.median(tpot_ratio(r) for r in g), tpot_meas=statistics.median(
                       float(r["measured_tpot_ms"]) for r in g))
        rec["per_rank"] = rec["experts"] / int(float(rec["ep"])) if rec["experts"] else 0
        if price and key[0] == "b200_sxm":
            import eager_call_cost as ecc
            import serving_reference as sr
            refs = refs or {r["id"]: r for r in sr.load()}
            p = ecc.queue_pricer(refs[g[0]["id"]])
            rec.update(gpu_ms=p["gpu_ms"], host_ms=p["host_ms"], pass_ms=p["pass_ms"], calls=p["calls"],
                       need_us=(p["pass_ms"] + rec["gap"]) / p["calls"] * 1e3 if p["calls"] else float("nan"))
        out.append(rec)
    return out


DEPLOYMENT = ("system", "engine", "model", "version", "gemm_quant", "tp", "ep", "isl", "concurrency", "graph")


def contrast(rows: list[dict], field: str, a, b, fixed: tuple[str, ...] = DEPLOYMENT) -> dict[str, list]:
    """{model: [(gap at field == a, gap at field == b), ...]} over deployments that differ only in `field`."""
    keys = tuple(k for k in fixed if k != field)
    cells: dict[tuple, dict] = {}
    for r in rows:
        cells.setdefault(tuple(r[k] for k in keys), {}).setdefault(r[field], []).append(r["gap"])
    out: dict[str, list] = {}
    for key, by in cells.items():
        if a in by and b in by:
            model = key[keys.index("model")].split("/")[-1] + " " + key[keys.index("engine")]
            out.setdefault(model, []).append((statistics.median(by[a]), statistics.median(by[b])))
    return dict(sorted(out.items()))


def ep_rows(rows: list[dict]) -> list[dict]:
    """The rows with their EP recoded as 'EP1' or 'EP=TP' (other layouts dropped), for the EP contrast."""
    out = []
    for r in rows:
        ep, tp = int(float(r["ep"])), int(float(r["tp"]))
        if ep == 1 or ep == tp:
            out.append(dict(r, ep_kind="EP1" if ep == 1 else "EP=TP"))
    return out


def print_contrasts(rows: list[dict]) -> None:
    print("\n2. contrasts inside one deployment (median gap ms over matched pairs: side A / side B; pairs):")
    print("| contrast | model, engine | pairs | gap A | gap B | B - A |")
    print("|---|---|---|---|---|---|")
    eps = ep_rows(rows)
    cases = (
        ("1k -> 8k prompts", rows, "isl", "1024", "8192", DEPLOYMENT),
        ("N 4 -> 8", rows, "concurrency", "4", "8", DEPLOYMENT),
        ("EP1 -> EP=TP", eps, "ep_kind", "EP1", "EP=TP",
         tuple(k for k in DEPLOYMENT if k != "ep") + ("ep_kind",)),
        ("1.2.0rc6.post2 -> .post3 (MTP)", rows, "version", "1.2.0rc6.post2", "1.2.0rc6.post3", DEPLOYMENT),
        ("fp8 -> nvfp4", rows, "gemm_quant", "fp8", "nvfp4", DEPLOYMENT),
    )
    for name, src, field, a, b, fixed in cases:
        for model, pairs in contrast(src, field, a, b, fixed).items():
            ga, gb = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
            print(f"| {name} | {model} | {len(pairs)} | {ga:.0f} | {gb:.0f} | {gb - ga:+.0f} |")


def print_correlations(table: list[dict], price: bool) -> None:
    sel = [t for t in table if t["system"] == "b200_sxm" and t["isl"] == "1024" and llf.GRAPHED not in t["graph"]
           and t["moe_layers"]]
    print(f"\n3. Spearman rank correlation with the gap, B200 MoE groups at 1k prompts outside CUDA graphs "
          f"({len(sel)} groups of table 1):")
    cols = ["layers", "moe_layers", "experts", "per_rank", "tpot_meas", "pred"] + (
        ["gpu_ms", "host_ms", "calls"] if price else [])
    print("| engine | groups | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for engine in ("all", "sglang", "trtllm", "vllm"):
        part = [t for t in sel if engine in ("all", t["engine"])]
        gaps = [t["gap"] for t in part]
        print(f"| {engine} | {len(part)} | "
              + " | ".join(f"{spearman([float(t[c]) for t in part], gaps):+.2f}" for c in cols) + " |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-clients", type=int, default=8, help="the slice's largest N (default 8)")
    ap.add_argument("--price", action="store_true",
                    help="price whatif's one-prompt prefill pass of each B200 group (slow)")
    a = ap.parse_args(argv)
    rows = llf.light_rows(a.max_clients)
    table = group_table(rows, a.price)
    print(f"{len(rows)} measurements at N <= {a.max_clients}, {len(table)} groups\n")
    print("1. the gap by deployment shape (medians; TPOT ratio = predicted / measured):")
    head = ("| GPU | engine | model | TP | EP | ISL | layers (MoE) | experts / top-k (a rank) | attention | prefill "
            "| rows | measured | predicted | gap | gap / MoE layer | TPOT ratio |")
    extra = " GPU pass | host | calls | need us a call |" if a.price else ""
    print(head + extra)
    print("|---" * (head.count("|") + extra.count("|") - 1) + "|")
    for t in table:
        per_layer = f"{t['gap'] / t['moe_layers']:.2f}" if t["moe_layers"] else "-"
        line = (f"| {t['system']} | {t['engine']} | {t['model'].split('/')[-1]} | {t['tp']} | {t['ep']} | {t['isl']} "
                f"| {t['layers']} ({t['moe_layers']}) | {t['experts']} / {t['topk']} ({t['per_rank']:.0f}) "
                f"| {t['attention']} | {t['graph']} | {t['rows']} | {t['meas']:.0f} | {t['pred']:.0f} "
                f"| {t['gap']:+.0f} | {per_layer} | x{t['tpot']:.2f} |")
        if a.price:
            line += (f" {t['gpu_ms']:.1f} | {t['host_ms']:.1f} | {t['calls']:.0f} | {t['need_us']:.0f} |"
                     if "gpu_ms" in t else " | | | |")
        print(line)
    print_contrasts(rows)
    print_correlations(table, a.price)


if __name__ == "__main__":
    main()
