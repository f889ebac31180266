"""Accuracy of the fitted-roofline kernel models of the 2025-26 op families against NVIDIA aiconfigurator's
modern kernel tables (Gated DeltaNet, DSA and whole MLA modules, wide-EP MoE, DeepEP, encoder attention,
MLA batched GEMMs, quantize kernels).

    python benchmarks/accuracy_modern.py [--root DIR] [--table NAME ...] [--write] [--by-gpu] [--pairs]
                                         [--vs-kernels] [--on-decode] [--floors] [--by-kernel] [--floor-share]
                                         [--floor-transfer] [--donor-cover] [--by-query]

A GPU's prediction is its datasheet ceilings times one parameter set per family x engine, so parameters
transfer between GPUs: leave-one-GPU-out (fitted on the other GPUs that measured the family, scored on the
one left out), in-sample (each GPU fitted on itself) and pooled (fitted on all: the shipped fit). Absolute
% error: MAPE, median, worst. `--pairs`: fitted on one GPU alone, scored on each other one. `--write`
writes whatif/roofline/data/modern_fit.yaml (and the precompiled bundle): the families of the tables read
(all, or those of --table); the others keep their written fits. `--vs-kernels`: on the MLA and DSA
generation-module rows (up to 8 GPUs of TP) and the GDN decode-kernel rows (the heads of Qwen3-Next /
Qwen3.5 at TP 1-8; and the GDN chunked-prefill rows at batch 1), each fit's leave-one-GPU-out error beside the
forward pass's own kernels (whatif estimate's ops, estimate(module_fits=False)), on the same rows: which fits
price a pass (roofline/module_fits.py). `--on-decode`: vLLM's short context rows that ran a decode backend, priced by
that decode kernel's own fit (fitted on the generation table alone) beside their own family in-sample.
`--floors`: each engine's whole MLA module at its smallest shapes (<= 16 tokens, <= 16 heads), per GPU and
kernel: the fixed cost a fit's floor carries from one GPU to another. `--by-kernel`: the per-GPU table split further
by the kernel each row ran and its GEMM format (where a family's leave-one-out error lives); `--by-query` by the
query length a sequence, with how many donor GPUs measured that band. `--floor-share`: each
cell over 15% leave-one-GPU-out scored again with its fit's floor swapped for the left-out GPU's own (how much of
the miss is a fixed cost no datasheet term carries between GPUs; a diagnosis, not a prediction). `--floor-transfer`:
whether a GPU's floor carries from one op family to another (validate/floor_transfer.py): every cell scored with its
leave-one-GPU-out floor times the GPU's factor from the OTHER families, and the smallest rows' GPU ratios predicted
leave-one-family-out. `--donor-cover`: each cell over 15% leave-one-GPU-out split by kernel and GEMM format, with its
donor GPUs and whether a donor ran that kernel and that format (where one did not, the table cannot test the cell).

Long because: one report script for sixteen tables, each report a short function over the same fitted rows.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whatif.validate import floor_transfer as ft  # noqa: E402
from whatif.validate import modern_fit as mf  # noqa: E402
from whatif.validate import modern_rows as mr  # noqa: E402


MLA_DECODE = "mla__mla_generation_module_perf"
DSA_DECODE = "sparse_attention__dsa_generation_module_perf"
# A table whose fits take a term from another table's family (modern_fit.COMPUTE_FROM) is loaded with that table
DONOR_TABLES = {DSA_DECODE: "sparse_attention__dsa_context_module_perf"}
QUANT = {"bfloat16": None, "fp8_block": "fp8-block", "nvfp4": "nvfp4"}


def kernels_summed(frame, roles):
    """Seconds of each MLA / DSA generation-module row as the forward pass's kernels summed, module fits off
    (NaN: not expressible)."""
    import numpy as np

    from whatif.api import estimate
    from whatif.errors import WhatifError
    from whatif.roofline.ops import graph_role
    from whatif.specs.models import load_model
    from whatif.validate.corpus import GPU_PROFILES
    out, memo = [], {}
    for r in frame.itertuples():
        tp = load_model(r.model).num_heads // int(r.num_heads)
        if not 1 <= tp <= 8:
            out.append(np.nan)   # more GPUs than one bare GPU profile's node
            continue
        key = (r.model, r.gpu, r.engine, tp, int(r.batch_size), int(r.step), r.kv_cache_dtype, r.gemm_type)
        if key in memo:
            out.append(memo[key])
            continue
        kw = dict(model=r.model, hardware=GPU_PROFILES[r.gpu], kernel_engine=r.engine, tp=tp, gpus=tp,
                  batch=int(r.batch_size), prompt=max(1, int(r.step)), output=2, with_max_batch=False,
                  kv_dtype="fp8" if r.kv_cache_dtype == "fp8" else "bf16", quantization=QUANT[r.gemm_type])
        try:
            ops = [t for t in estimate(**kw, module_fits=False).decode.op_times if graph_role(t.op) in roles]
        except WhatifError:   # a context past the model's window (the DSA tables reach 163,839 cached tokens)
            memo[key] = np.nan
            out.append(np.nan)
            continue
        layers = max(t.op.count for t in ops)   # one layer's module (the dense and MoE layers run the same)
        memo[key] = sum(t.time_s for t in ops if t.op.count == layers)
        out.append(memo[key])
    return np.array(out)


def median_ratios(out, by):
    """Median predicted / measured of the kernels summed and of the leave-one-GPU-out fit (the sign of the error)."""
    r = out.assign(kernels_x=out["kernels_s"] / out["latency_s"], fit_loo_x=out["loo_s"] / out["latency_s"])
    return r.groupby(by)[["kernels_x", "fit_loo_x"]].median().round(2)


def with_donors(tables):
    """`tables` (None: every table) and the tables their fits take a term from (DONOR_TABLES)."""
    return tables and sorted(set(tables) | {DONOR_TABLES[t] for t in tables if t in DONOR_TABLES})


def vs_kernels(root, table=MLA_DECODE) -> str:
    import numpy as np

    from whatif.roofline.module_fits import DSA_MODULE_ROLES, MLA_MODULE_ROLES
    out = mf.insample_and_loo(mr.all_rows(root, with_donors([table])))
    out = out[out["table"] == table]
    out["kernels_s"] = kernels_summed(out, DSA_MODULE_ROLES if table == DSA_DECODE else MLA_MODULE_ROLES)
    # a family one GPU measured (vLLM's and SGLang's MLA decode kernels) has no leave-one-out: in-sample beside it
    out = out[np.isfinite(out["kernels_s"]) & np.isfinite(out["insample_s"])]
    from whatif.validate.accuracy import ape_table
    cols = {"kernels_s": "kernels", "loo_s": "fit_loo", "insample_s": "fit_in", "pooled_s": "fit_pooled"}
    table = ape_table(out, cols, [out["gpu"], out["engine"]], {"mape": "mean", "med": "median"})
    table = table.join(median_ratios(out, ["gpu", "engine"]))
    out = out.assign(rows="all rows")
    total = ape_table(out, cols, [out["rows"]], {"mape": "mean", "med": "median"})
    return f"{table.to_string()}\n{total.to_string(header=False)}   ({len(out)} rows)"


GDN_TABLE = "linear_attention__gdn_perf"
GDN_MODELS = {(16, 32): "Qwen/Qwen3-Next-80B-A3B-Instruct", (16, 64): "Qwen/Qwen3.5-397B-A17B"}   # (k, v) heads
GDN_ROLES = {"gdn_recurrent_decode": "linear_attention", "gdn_conv1d_decode": "short_conv"}


def gdn_kernels_summed(out):
    """Seconds of each GDN decode row as the forward pass prices its op (the recurrence, the short conv) with
    module fits off; NaN where no shipped model has the row's heads at TP 1-8 or the row is not a decode kernel."""
    import numpy as np

    from whatif.api import estimate
    from whatif.roofline.ops import graph_role
    from whatif.validate.corpus import GPU_PROFILES
    layouts = {(k // tp, v // tp): (m, tp) for (k, v), m in GDN_MODELS.items() for tp in (1, 2, 4, 8)}
    memo, res = {}, []
    for r in out.itertuples():
        role, at = GDN_ROLES.get(r.family), layouts.get((r.num_k_heads, r.num_v_heads))
        if role is None or at is None:
            res.append(np.nan)
            continue
        key = (r.gpu, r.engine, *at, int(r.batch_size))
        if key not in memo:
            e = estimate(model=at[0], hardware=GPU_PROFILES[r.gpu], kernel_engine=r.engine, tp=at[1], gpus=at[1],
                         batch=int(r.batch_size), prompt=16, output=2, with_max_batch=False, module_fits=False)
            memo[key] = {graph_role(t.op).value: t.time_s for t in e.decode.op_times}
        res.append(memo[key][role])
    return np.array(res)


def vs_kernels_gdn(root) -> str:
    """GDN decode kernels: the fits (leave-one-GPU-out, pooled) beside the forward pass's own ops, same rows."""
    import numpy as np

    from whatif.validate.accuracy import ape_table
    out = mf.insample_and_loo(mr.all_rows(root, [GDN_TABLE]))
    out = out[out["family"].isin(list(GDN_ROLES))].reset_index(drop=True)
    out["kernels_s"] = gdn_kernels_summed(out)
    out = out[np.isfinite(out["kernels_s"]) & np.isfinite(out["loo_s"])]
    cols = {"kernels_s": "kernels", "loo_s": "fit_loo", "pooled_s": "fit_pooled"}
    table = ape_table(out, cols, [out["family"], out["gpu"], out["engine"]], {"mape": "mean", "med": "median"})
    table = table.join(median_ratios(out, ["family", "gpu", "engine"]))
    total = ape_table(out, cols, [out["family"]], {"mape": "mean", "med": "median"})
    return f"{table.to_string()}\n{total.to_string()}   ({len(out)} rows)"


def gdn_prefill_kernels(out):
    """Seconds of each batch-1 GDN chunked-prefill row as a prefill pass's gated_deltanet op, module fits off (NaN:
    no shipped model has the row's heads at TP 1-8, more state-pass CTAs than SMs, or under 64 / over 16k tokens)."""
    import numpy as np

    from whatif.api import estimate
    from whatif.validate.corpus import GPU_PROFILES
    layouts = {(k // tp, v // tp): (m, tp) for (k, v), m in GDN_MODELS.items() for tp in (1, 2, 4, 8)}
    memo, res = {}, []
    for r in out.itertuples():
        at = layouts.get((r.num_k_heads, r.num_v_heads))
        tokens = r.steps * 64 if r.clocked == 64 else r.clocked   # batch 1, one wave: steps are its chunks
        if at is None or r.batch_size != 1 or 2 * r.num_v_heads > r.sms or not 64 <= tokens <= 16384:
            res.append(np.nan)
            continue
        key = (r.gpu, r.engine, *at, int(tokens))
        if key not in memo:
            e = estimate(model=at[0], hardware=GPU_PROFILES[r.gpu], kernel_engine=r.engine, tp=at[1], gpus=at[1],
                         batch=1, prompt=int(tokens), output=2, with_max_batch=False, module_fits=False)
            (p, _) = e.prefill[0]
            whole = p.batch.groups == ((int(tokens), 0, 1),)   # one pass of the whole prompt, not a chunk of it
            memo[key] = next(t.time_s for t in p.op_times if t.op.name == "gated_deltanet") if whole else np.nan
        res.append(memo[key])
    return np.array(res)


def vs_kernels_gdn_prefill(root) -> str:
    """GDN chunked prefill: the fits (leave-one-GPU-out, pooled) beside a prefill pass's own op, same rows."""
    import numpy as np

    from whatif.validate.accuracy import ape_table
    out = mf.insample_and_loo(mr.all_rows(root, [GDN_TABLE]))
    out = out[out["family"].str.startswith("gdn_chunk_prefill")].reset_index(drop=True)
    out["kernels_s"] = gdn_prefill_kernels(out)
    out = out[np.isfinite(out["kernels_s"]) & np.isfinite(out["loo_s"])]
    cols = {"kernels_s": "kernels", "loo_s": "fit_loo", "pooled_s": "fit_pooled"}
    table = ape_table(out, cols, [out["family"], out["gpu"], out["engine"]], {"mape": "mean", "med": "median"})
    table = table.join(median_ratios(out, ["family", "gpu", "engine"]))
    out = out.assign(rows="all rows")
    total = ape_table(out, cols, [out["rows"]], {"mape": "mean", "med": "median"})
    return f"{table.to_string()}\n{total.to_string(header=False)}   ({len(out)} rows)"


DEEPEP_TABLES = ["comm__wideep_deepep_ll_perf", "comm__wideep_deepep_normal_perf"]
DEEPEP_LINKS = {"a100_sxm": "nvlink-3", "h100_sxm": "nvlink-4", "b200_sxm": "nvlink-5"}


def vs_collective_deepep(root) -> str:
    """DeepEP rows (8 GPUs of one node): the fits beside what the forward pass prices an EP dispatch / combine
    at (roofline/moe.py: an NCCL all-to-all of tokens x top-k x hidden x 1 B, an fp8-expert model's), same rows."""
    import numpy as np

    from whatif.roofline import collective_timing
    from whatif.specs.hardware import load_component
    from whatif.validate.accuracy import ape_table
    out = mf.insample_and_loo(mr.all_rows(root, DEEPEP_TABLES))
    links = {g: load_component(n, "link") for g, n in DEEPEP_LINKS.items()}
    sent = out["num_token"].to_numpy(float) * out["num_topk"].to_numpy(float) * out["hidden_size"].to_numpy(float)
    out["kernels_s"] = [collective_timing.collective_seconds("all_to_all", b, 8, links[g], e)
                        for b, g, e in zip(sent, out["gpu"], out["engine"])]
    out = out[np.isfinite(out["loo_s"])]
    cols = {"kernels_s": "nccl_a2a", "loo_s": "fit_loo", "insample_s": "fit_in"}
    table = ape_table(out, cols, [out["family"], out["gpu"]], {"mape": "mean", "med": "median"})
    return table.join(median_ratios(out, ["family", "gpu"])).to_string()


ARCH = {"b200_sxm": "blackwell", "h100_sxm": "hopper", "l40s": "ada", "a100_sxm": "ampere"}


def on_decode_kernel_by_decode_fits(root) -> str:
    """vLLM's context rows that ran a decode backend (mla_module_prefill_on_decode_<kernel>), priced by that
    decode kernel's own shipped fit (mla_module_decode_<kernel>, fitted on the generation table's rows only):
    the rows are the fit's out-of-table check; beside it the rows' own family in-sample (one GPU a kernel: no
    leave-one-GPU-out)."""
    import numpy as np

    from whatif.roofline.kernel_models import mla_modules as mm
    from whatif.roofline.kernel_models.fitted_roofline import family_params
    from whatif.validate.accuracy import ape_table
    out = mf.insample_and_loo(mr.all_rows(root, ["mla__mla_context_module_perf"]))
    out = out[out["family"].str.startswith("mla_module_prefill_on_decode_")].copy()
    out["decode_fit_s"] = np.nan
    for (gpu, source), g in out.groupby(["gpu", "kernel_source"]):
        family = mm.mla_decode_family(mm.MLA_DECODE_SOURCES[source])
        out.loc[g.index, "decode_fit_s"] = mf.predict(g, family_params(family, "vllm", ARCH[gpu]))
    cols = {"decode_fit_s": "decode_kernel_fit", "insample_s": "own_family_in"}
    by = [out["gpu"], out["kernel_source"]]
    table = ape_table(out, cols, by, {"mape": "mean", "med": "median"})
    out = out.assign(rows="all rows")
    total = ape_table(out, cols, [out["rows"]], {"mape": "mean", "med": "median"})
    return f"{table.to_string()}\n{total.to_string(header=False)}   ({len(out)} rows)"


MLA_MODULE_TABLES = ["mla__mla_context_module_perf", "mla__mla_generation_module_perf",
                     "mla__wideep_context_mla_perf", "mla__wideep_generation_mla_perf"]


def module_floors(root) -> str:
    """Median and smallest time (us) of each engine's MLA module at its smallest shapes (context: <= 16 tokens in
    the batch; decode: <= 2 sequences of <= 1,024 cached tokens; <= 16 heads; bf16 GEMMs, or the engine's one
    format where it has no bf16 rows), by GPU and kernel:
    the fixed cost a fitted floor (seconds, shared by the GPUs) carries when a GPU is left out."""
    import pandas as pd
    out = []
    for table in MLA_MODULE_TABLES:
        f = mr.read_table(table, root)
        if f is None:
            continue
        bf16 = f.groupby("engine")["gemm_type"].transform(lambda s: (s == "bfloat16").any())
        f = f[((f["gemm_type"] == "bfloat16") | ~bf16) & (f["num_heads"] <= 16)]   # SGLang's: fp8_block only
        past = f["isl"] if "wideep" in table else f["step"]   # the wide-EP decode tables hold the context in isl
        ctx = "context" in table
        f = f[f["batch_size"] * f["isl"] <= 16] if ctx else f[(f["batch_size"] <= 2) & (past <= 1024)]
        g = f.groupby(["engine", "gpu", "kernel_source", "gemm_type"])["latency"]
        out.append(pd.DataFrame({"table": table.split("__")[1], "rows": g.size(), "median_us": g.median() * 1e3,
                                 "min_us": g.min() * 1e3}))
    return pd.concat(out).reset_index().sort_values(["engine", "table", "gpu"]).round(1).to_string(index=False)


def by_kernel(out) -> str:
    """Leave-one-GPU-out and in-sample % error by family x engine x GPU x the kernel the rows ran x GEMM format
    (rows without a format column: one group), with the median LOO predicted / measured."""
    import numpy as np
    import pandas as pd
    out = out[np.isfinite(out["loo_s"])].copy()
    out["gemm"] = out["gemm_type"].fillna("-") if "gemm_type" in out else "-"
    out["loo_x"] = out["loo_s"] / out["latency_s"]
    for k in ("loo", "insample"):
        out[k] = (out[f"{k}_s"] / out["latency_s"] - 1.0).abs() * 100.0
    g = out.groupby(["family", "engine", "gpu", "kernel_source", "gemm"])
    return pd.DataFrame({"rows": g.size(), "loo_mape": g["loo"].mean(), "loo_x": g["loo_x"].median(),
                         "in_mape": g["insample"].mean()}).round(2).to_string()


QUERY_BANDS = ((1, 1, "1"), (2, 255, "2-255"), (256, 10**9, "256+"))   # tokens a sequence: decode, short, long


def by_query(out):
    """Leave-one-GPU-out and in-sample % error by family x engine x GPU x the rows' query length a sequence
    (QUERY_BANDS; tables with an `isl` column), and how many donor GPUs have rows of that family in that band:
    a band only the left-out GPU measured is a shape the fit never saw there (vLLM's H100 ran queries under 256
    as decodes, so B200's and L40S's short prefills meet one donor)."""
    import numpy as np
    import pandas as pd
    out = out[np.isfinite(out["loo_s"]) & out.get("isl", pd.Series(np.nan, out.index)).notna()].copy()
    out["band"] = ""
    for lo, hi, name in QUERY_BANDS:
        out.loc[(out["isl"] >= lo) & (out["isl"] <= hi), "band"] = name
    out["loo_x"] = out["loo_s"] / out["latency_s"]
    for k in ("loo", "insample"):
        out[k] = (out[f"{k}_s"] / out["latency_s"] - 1.0).abs() * 100.0
    cells = []
    for (family, engine, gpu, band), g in out.groupby(["family", "engine", "gpu", "band"]):
        fam = out[(out["family"] == family) & (out["engine"] == engine) & (out["gpu"] != gpu)]
        donors, with_band = fam["gpu"].nunique(), fam.loc[fam["band"] == band, "gpu"].nunique()
        cells.append({"family": family, "engine": engine, "gpu": gpu, "query": band, "rows": len(g),
                      "loo_mape": round(g["loo"].mean(), 1), "loo_x": round(g["loo_x"].median(), 2),
                      "in_mape": round(g["insample"].mean(), 1), "donors_with_band": f"{with_band} of {donors}",
                      "share_of_gpu_ape": 0.0, "_ape": g["loo"].sum()})
    t = pd.DataFrame(cells)
    if t.empty:
        return t
    total = t.groupby(["family", "engine", "gpu"])["_ape"].transform("sum")
    t["share_of_gpu_ape"] = (100.0 * t["_ape"] / total).round(1)
    return t.drop(columns="_ape")


def donor_cover(out, min_loo=15.0):
    """Cells (family x engine x left-out GPU x kernel x GEMM format) over min_loo % LOO, each with its donor GPUs
    and whether the left-out GPU's kernel and its GEMM format ran on any donor: where one did not, the table does
    not test that kernel or format leave-one-GPU-out (the fit is one kernel per family; issue 38 "where the table
    allows"). `out`: mf.insample_and_loo's rows; the donors are the other GPUs with a LOO figure (those of the
    current release: a GPU measured with another, mf.current_release, is no donor)."""
    import numpy as np
    import pandas as pd
    out = out.copy()
    out["gemm"] = out["gemm_type"].fillna("-") if "gemm_type" in out else "-"
    scored = out[np.isfinite(out["loo_s"])].copy()
    ran = {k: set(g["gpu"]) for k, g in scored.groupby(["family", "engine", "kernel_source"])}
    fmt = {k: set(g["gpu"]) for k, g in scored.groupby(["family", "engine", "gemm"])}
    gpus = {k: set(g["gpu"]) for k, g in scored.groupby(["family", "engine"])}
    scored["loo"] = (scored["loo_s"] / scored["latency_s"] - 1.0).abs() * 100.0
    rows = []
    for (fam, eng, gpu, src, gemm), g in scored.groupby(["family", "engine", "gpu", "kernel_source", "gemm"]):
        if g["loo"].mean() <= min_loo:
            continue
        rows.append({"family": fam, "engine": eng, "gpu": gpu, "kernel_source": src, "gemm": gemm, "rows": len(g),
                     "loo_mape": round(g["loo"].mean(), 1), "donors": "+".join(sorted(gpus[(fam, eng)] - {gpu})),
                     "kernel_on_donor": bool(ran[(fam, eng, src)] - {gpu}),
                     "format_on_donor": gemm == "-" or bool(fmt[(fam, eng, gemm)] - {gpu})})
    return pd.DataFrame(rows)


GPU_PAIRS = (("b200_sxm", "h100_sxm"), ("l40s", "h100_sxm"), ("b200_sxm", "l40s"))


def floor_transfer(rows) -> str:
    """The cross-family floor test (validate/floor_transfer.py): smallest rows' GPU ratios, then every cell's MAPE
    with its LOO floor times the GPU's factor from the other families."""
    small = ft.smallest_rows(rows)
    parts = ["== smallest rows (2nd percentile, us) per family x engine x GPU ==",
             small.pivot_table(index=["family", "engine"], columns="gpu", values="p2_us").round(2).to_string()]
    for a, b in GPU_PAIRS:
        table, s = ft.smallest_ratio_lofo(small, a, b)
        parts.append(f"\n{a} / {b}: {s['families']} families, median x{s['median_x']:.2f}, geometric sd "
                     f"x{s['geo_sd_x']:.2f}; ratio predicted from the other families: {s['err_pred_pct']:.1f}% off "
                     f"(same seconds: {s['err_same_seconds_pct']:.1f}%), closer in {s['pred_better']}")
    table = ft.floor_transfer_table(rows)
    parts += ["\n== cells: MAPE %, LOO | LOO floor x GPU factor from other families (all engines, same engine) | "
              "own floor (oracle) | in-sample ==", table.round(2).to_string(),
              "\n== summary (mean cell MAPE %, cells over 15%, the own / LOO floor ratio's median error x) ==",
              ft.transfer_summary(table).round(2).to_string()]
    return "\n".join(parts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(mr.DEFAULT_ROOT), help="the modern/ folder of kernel tables")
    ap.add_argument("--table", action="append", help=f"only these tables; valid: {', '.join(mr.TABLES)}")
    ap.add_argument("--write", action="store_true", help="write whatif/roofline/data/modern_fit.yaml")
    ap.add_argument("--by-gpu", action="store_true", help="also the table per family x engine x GPU")
    ap.add_argument("--pairs", action="store_true",
                    help="also fit on each GPU alone and score on each other GPU (every pair the tables have)")
    ap.add_argument("--vs-kernels", action="store_true",
                    help="MLA decode module: the fit beside the forward pass's kernels summed, same rows")
    ap.add_argument("--on-decode", action="store_true",
                    help="vLLM's short context rows run as decodes, priced by their decode kernel's own fit")
    ap.add_argument("--floors", action="store_true",
                    help="each engine's MLA module at its smallest shapes, by GPU and kernel (its fixed cost)")
    ap.add_argument("--by-kernel", action="store_true",
                    help="also the per-GPU table split by the kernel each row ran and its GEMM format")
    ap.add_argument("--floor-share", action="store_true",
                    help="cells over 15%% LOO, rescored with the left-out GPU's own floor (how much is fixed cost)")
    ap.add_argument("--donor-cover", action="store_true",
                    help="cells over 15%% LOO: donors, and whether their kernel and GEMM format ran on a donor GPU")
    ap.add_argument("--by-query", action="store_true",
                    help="also the per-GPU table split by query length a sequence, and the donors that ran each band")
    ap.add_argument("--floor-transfer", action="store_true",
                    help="every cell's LOO floor times its GPU's factor from the other families (cross-family test)")
    args = ap.parse_args(argv)
    bad = [t for t in args.table or [] if t not in mr.TABLES]
    if bad:
        print(f"accuracy_modern: --table {bad[0]} is not valid; valid: {', '.join(mr.TABLES)}", file=sys.stderr)
        return 2
    import pandas as pd
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    if args.vs_kernels:
        print("== MLA generation module: % error, forward-pass kernels summed | module fit (LOGO, pooled) ==")
        print(vs_kernels(args.root))
        print("\n== DSA generation module: % error, forward-pass kernels summed | module fit (LOGO, pooled) ==")
        print(vs_kernels(args.root, DSA_DECODE))
        print("\n== GDN decode kernels: % error, forward-pass op | kernel fit (LOGO, pooled) ==")
        print(vs_kernels_gdn(args.root))
        print("\n== GDN chunked prefill (batch 1): % error, a prefill pass's op | kernel fit (LOGO, pooled) ==")
        print(vs_kernels_gdn_prefill(args.root))
        print("\n== DeepEP: % error, the forward pass's NCCL all-to-all | DeepEP fit (LOGO, in-sample) ==")
        print(vs_collective_deepep(args.root))
        return 0
    if args.on_decode:
        print("== vLLM context rows run by a decode kernel: % error, that kernel's decode fit | its own family, "
              "in-sample ==")
        print(on_decode_kernel_by_decode_fits(args.root))
        return 0
    if args.floors:
        print("== MLA modules at their smallest shapes (<= 16 heads): time by engine, GPU and kernel ==")
        print(module_floors(args.root))
        return 0
    rows = mr.all_rows(args.root, with_donors(args.table))
    if args.floor_transfer:
        print(floor_transfer(rows))
        return 0
    out = mf.insample_and_loo(rows)
    print("== fitted-roofline families: absolute % error (leave-one-GPU-out | in-sample | pooled) ==")
    print(mf.error_table(out, by=("family", "engine")).to_string())
    if args.by_gpu:
        print("\n== by GPU ==")
        print(mf.error_table(out).to_string())
    if args.by_kernel:
        print("\n== by GPU, kernel and GEMM format (leave-one-GPU-out rows) ==")
        print(by_kernel(out))
    if args.by_query:
        print("\n== by GPU and query length a sequence (leave-one-GPU-out rows; donor GPUs that ran the band) ==")
        print(by_query(out).to_string(index=False))
    if args.donor_cover:
        print("\n== cells over 15% LOO: donor GPUs; the left-out GPU's kernel / GEMM format run on a donor ==")
        print(donor_cover(out).to_string(index=False))
    if args.floor_share:
        print("\n== cells over 15% LOO: MAPE, LOO fit | its floor (and step) the left-out GPU's own | in-sample ==")
        print(mf.floor_share_table(rows, min_loo=15.0).to_string())
    if args.pairs:
        print("\n== fit on one GPU, score on another (fit_on == score_on: in-sample) ==")
        print(mf.pair_table(rows).to_string())
    for what, why in mr.SKIPPED.items():
        print(f"not fitted: {what}: {why}")
    if args.write:
        mf.write_fit(rows)
        print("\nwrote whatif/roofline/data/modern_fit.yaml")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
