"""The modern kernel tables (../shared/reference/aiconfigurator/modern/<gpu>/<engine>/<table>.parquet) as
rows of the fitted-roofline fitter (validate/modern_fit.py): gpu, engine, family, kernel_source, version,
ideal (compute s, memory s) per kernel part (c0, m0, c1, m1, ...), fixed-cost items, SM count, latency_s.

Each family's ideal times come from its kernel model's work function (roofline/kernel_models/), evaluated
on the GPU's datasheet ceilings; nothing measured enters a prediction. Rows a model does not describe are
left out here, each with its reason in SKIPPED.
Long because: one row builder per table (sixteen tables), each a short function over the same work functions.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..roofline.kernel_models import (deepep, eager_host, encoder_attention, linear_attention, mla_modules, quantize,
                                      wideep_moe)
from ..roofline.kernel_models.params import ceilings
from .collective_fit import CORPUS_LINKS, link_figures
from .corpus import corpus_gpu

DEFAULT_ROOT = Path(__file__).resolve().parents[3] / "shared" / "reference" / "aiconfigurator" / "modern"
MODEL_CONFIGS = DEFAULT_ROOT.parents[1] / "model_configs"   # the models' published config.json files
ENGINES = {"sglang": "sglang", "trtllm": "trtllm", "vllm": "vllm"}
SKIPPED = {
    "quantize__computescale_perf/sglang": "SGLang's quantizer computes the scale inside the scaling kernel: "
                                          "99.8% of its rows measure 0",
    "msa__msa_context_module_perf": "MiniMax-M3's config.json is not among the published configs "
                                    "(../shared/reference/model_configs): its widths would be guesses",
    "msa__msa_generation_module_perf": "as msa__msa_context_module_perf",
    "dsa rows of GLM-5.2": "no published config.json for GLM-5.2 (its widths would be guesses)",
    "dsa/mla rows in nvfp4 on H100": "H100 has no FP4 tensor-core peak",
    "sglang dsa decode rows past cuda_graph_max_bs": "timed eagerly (the collector graphs a decode only up to "
                                                     "SGLang's cuda_graph_max_bs): host launches, flat 0.9-1.5 ms "
                                                     "whatever the shape, not the module's GPU time",
}


COMPACT_DIR = Path(__file__).resolve().parent / "measurements" / "aiconfigurator_modern"
COMPACT_ROWS = 150   # rows kept per table x GPU x engine in the committed subset


def read_table(table: str, root=DEFAULT_ROOT):
    """Every GPU x engine copy of one table, with gpu, engine and table columns: from the full folder
    (<root>/<gpu>/<engine>/<table>.parquet) or a compact subset (<root>/<table>.csv.gz, COMPACT_DIR)."""
    import pandas as pd
    compact = Path(root) / f"{table}.csv.gz"
    if compact.is_file():
        return pd.read_csv(compact)
    frames = []
    for path in sorted(Path(root).glob(f"*/*/{table}.parquet")):
        gpu, engine = path.parts[-3], path.parts[-2]
        if f"{table}/{engine}" in SKIPPED:
            continue
        f = pd.read_parquet(path)
        f["gpu"], f["engine"], f["table"] = gpu, engine, table
        frames.append(f)
    return pd.concat(frames, ignore_index=True) if frames else None


def _attach(group, parts, items, family, latency_s=None, steps=0.0, clocked=0.0, fixed_s=0.0):
    """The fitter's columns for `group`; latency_s: measured seconds (default: the tables' `latency` column, ms);
    fixed_s: seconds the mechanism fixes and no parameter scales."""
    out = group[["gpu", "engine", "table", "kernel_source", "version"]].copy()
    out["family"] = family
    out["latency_s"] = _col(group, "latency") * 1e-3 if latency_s is None else latency_s
    for i, (c, m, l2) in enumerate(parts):
        out[f"c{i}"] = np.broadcast_to(np.asarray(c, dtype=float), len(group))
        out[f"m{i}"] = np.broadcast_to(np.asarray(m, dtype=float), len(group))
        out[f"l{i}"] = np.broadcast_to(np.asarray(l2, dtype=float), len(group))
    out["items"] = np.broadcast_to(np.asarray(items, dtype=float), len(group))
    out["steps"] = np.broadcast_to(np.asarray(steps, dtype=float), len(group))
    out["clocked"] = np.broadcast_to(np.asarray(clocked, dtype=float), len(group))
    out["fixed_s"] = np.broadcast_to(np.asarray(fixed_s, dtype=float), len(group))
    return out


def _per_gpu(frame, build):
    """build(group, Ceilings, gpu key) -> rows, once per GPU."""
    import pandas as pd
    rows = []
    for gpu, group in frame.groupby("gpu", sort=True):
        c = ceilings(corpus_gpu(gpu))
        built = build(group, c, gpu)
        built["sms"], built["clock"] = c.sms, c.clock
        rows.append(built)
    return pd.concat(rows, ignore_index=True)


def _col(group, name):
    return group[name].to_numpy(dtype=float)


GDN_KERNELS = {"causal_conv1d_fn": "conv1d_prefill", "causal_conv1d_update": "conv1d_decode",
               "chunk_gated_delta_rule": "chunk_prefill", "fused_recurrent_gated_delta_rule": "recurrent_decode"}


def gdn_kernel(source: str, phase: str) -> str | None:
    for prefix, kernel in GDN_KERNELS.items():
        if source.startswith(prefix):
            # A100's SGLang runs no chunked kernel: its fused_recurrent rows are decode steps
            return kernel if kernel != "recurrent_decode" or phase == "generation" else None
    return None


def gdn_rows(frame):
    import pandas as pd

    def build(group, c, gpu):
        out = []
        kernels = [gdn_kernel(s, p) for s, p in zip(group["kernel_source"], group["phase"])]
        group = group.assign(_k=kernels)
        impls = ["flashinfer" if "flashinfer" in s else "fla" for s in group["kernel_source"]]
        group = group.assign(_impl=impls)
        for (kernel, impl, engine), g in group.dropna(subset=["_k"]).groupby(["_k", "_impl", "engine"]):
            # TRT-LLM's collector passes a bf16 initial state and convolves the key channels only (collect_gdn.py); its
            # chunked prefill gets no initial state and returns no final one
            trt = engine == "trtllm"
            state_in = 2.0 if trt else 4.0
            parts, items, (steps, clocked) = linear_attention.gdn_work(
                kernel, _col(g, "batch_size"), _col(g, "seq_len"), _col(g, "num_k_heads"), _col(g, "num_v_heads"),
                _col(g, "head_k_dim"), _col(g, "head_v_dim"), c, _col(g, "d_conv"), impl, state_in,
                _col(g, "num_k_heads") * _col(g, "head_k_dim") if trt else None, linear_attention.conv_impl(engine),
                state_io=not trt, bv=linear_attention.state_bv(engine))
            r = _attach(g, parts, items, linear_attention.gdn_family(kernel, impl, c.arch), steps=steps,
                        clocked=clocked)
            for k in ("batch_size", "seq_len", "num_k_heads", "num_v_heads"):   # the shape (--vs-kernels, --by-gpu)
                r[k] = g[k].to_numpy()
            out.append(r)
        return pd.concat(out)
    return _per_gpu(frame, build)


def encoder_rows(frame):
    import pandas as pd

    def build(g, c, gpu):
        pow2 = (g["kernel_source"] == "triton").to_numpy()   # SGLang's Triton path pads the head to a power of 2
        exp = g["engine"].isin(encoder_attention.EXP_ENGINES).to_numpy() & ~pow2   # FlashAttention's rows
        tile = np.array([encoder_attention.query_tile(e, c.arch, d, s)
                         for e, d, s in zip(g["engine"], g["head_dim"], g["isl"])])
        splits = np.array([encoder_attention.kv_splits(e, c.arch, b, h, s, d, c.sms) for e, b, h, s, d in
                           zip(g["engine"], g["batch_size"], g["num_heads"], g["isl"], g["head_dim"])])
        parts, items = encoder_attention.encoder_attention_work(_col(g, "batch_size"), _col(g, "isl"),
                                                                _col(g, "num_heads"), g["head_dim"].to_numpy(), c,
                                                                pow2_head=pow2, exp=exp, q_tile=tile,
                                                                splits=splits)
        legacy = np.array([encoder_attention.legacy_fmha_v2(e, c.arch, d) for e, d in zip(g["engine"], g["head_dim"])])
        fa2 = np.array([encoder_attention.vllm_fa2(e, c.arch) for e in g["engine"]])
        out = []   # Triton (SGLang on L40S), fmha_v2 (TRT-LLM's B200 head 72), FA2 (vLLM on L40S): own families
        for triton, fallback, two in ((False, False, False), (True, False, False), (False, True, False),
                                      (False, False, True)):
            rows = (pow2 == triton) & (legacy == fallback) & (fa2 == two)
            if rows.any():
                p = [tuple(np.asarray(x)[rows] for x in part) for part in parts]
                out.append(_attach(g[rows], p, np.asarray(items)[rows],
                                   encoder_attention.encoder_family(triton, fallback, two)))
        return pd.concat(out)
    return _per_gpu(frame, build)


def quantize_rows(frame, kind):
    import pandas as pd

    def build(group, c, gpu):
        out = []
        for engine, g in group.groupby("engine"):
            # SGLang's collector times a PyTorch static quantizer (quantize.TORCH_CHAIN), the others a CUDA kernel
            parts, items, steps, clocked = quantize.quantize_terms(kind, engine, _col(g, "m"), _col(g, "k"), c,
                                                                   torch_chain=engine == "sglang")
            rows = _attach(g, parts, items, kind, steps=steps, clocked=clocked)
            stream = quantize.beside_stream(kind, engine, _col(g, "m"), _col(g, "k"), c)
            if stream is not None:   # the stream the rows' bytes run beside (fitted_roofline.under_stream)
                for x, t in zip("ml", stream):
                    rows[f"stream_{x}"] = np.broadcast_to(np.asarray(t, dtype=float), len(g))
            out.append(rows)
        return pd.concat(out)
    # vLLM's compute-scale rows are a difference of two timings (quantize.DIFFERENCE_RESOLUTION_MS): below it, noise
    unresolved = (frame["engine"] == "vllm") & (kind == "quantize_compute_scale") & (
        frame["latency"] < quantize.DIFFERENCE_RESOLUTION_MS)
    return _per_gpu(frame[(frame["latency"] > 0) & ~unresolved], build)


def deepep_rows(frame, mode):
    import pandas as pd

    def build(group, c, gpu):
        link = link_figures(CORPUS_LINKS[gpu])[0]
        signal = deepep.signal_seconds(CORPUS_LINKS[gpu], "nvlink", link)
        out = []
        for phase in ("dispatch", "combine"):
            for (topk, experts), g in group.groupby(["num_topk", "num_experts"]):
                sms = _col(g, f"{phase}_sms") if mode == "normal" else c.sms
                parts, items = deepep.deepep_work(mode, phase, _col(g, "num_token"), _col(g, "hidden_size"), topk,
                                                  experts, sms, c, link, signal_s=signal)
                us = g[f"{phase}_transmit_us"] + g[f"{phase}_notify_us"] if mode == "normal" else g[f"{phase}_avg_t_us"]
                steps = deepep.byte_steps(mode, phase, _col(g, "num_token"), _col(g, "hidden_size"), topk, experts)
                r = _attach(g, parts, items, f"deepep_{mode}_{phase}", us.to_numpy(dtype=float) * 1e-6, steps=steps,
                            fixed_s=deepep.barrier_seconds(mode, signal))
                for k in ("num_token", "hidden_size", "num_topk"):   # the shape (accuracy_modern --vs-kernels)
                    r[k] = g[k].to_numpy()
                out.append(r)
        return pd.concat(out)
    frame = frame.assign(kernel_source=frame["kernel_source"])
    return _per_gpu(frame, build)


def collector_layout(engine: str, phase: str, distribution: str) -> str:
    """SGLang's prefill rows run DeepGEMM's contiguous layout; the collector pads its power-law counts to 128
    (helper.py power_law_deepep_prefill) but passes its uniform ones as drawn (collect_wideep_deepep_moe.py).
    SGLang's decode rows run DeepGEMM's masked layout (DeepEP low-latency), every other row a tuned tile
    (wideep_moe.grouped_gemm_layout)."""
    layout = wideep_moe.grouped_gemm_layout(engine, phase)
    return "unaligned" if layout == "contiguous" and distribution == "uniform" else layout


def wideep_moe_rows(frame, phase):
    def build(g, c, gpu):
        t_c, t_m, t_l2, its, steps = [], [], [], [], []
        engine = g["engine"].iloc[0]
        for r in g.itertuples():
            layout = collector_layout(engine, phase, r.distribution)
            (parts, it), = [wideep_moe.wideep_moe_work(r.num_tokens, r.hidden_size, r.inter_size, r.topk,
                                                      r.num_experts, r.moe_ep_size, r.moe_dtype, r.distribution,
                                                      c, r.moe_tp_size, getattr(r, "num_slots", None), layout)]
            t_c.append(parts[0][0])
            t_m.append(parts[0][1])
            t_l2.append(parts[0][2])
            its.append(it)
            steps.append(wideep_moe.masked_scheduler_steps(r.num_experts, r.moe_ep_size, layout))
        out = _attach(g, [(np.array(t_c), np.array(t_m), np.array(t_l2))], np.array(its),
                      wideep_moe.wideep_family(engine, phase), steps=np.array(steps))
        return out
    return _per_gpu(frame, build)


def model_dims(model: str):
    """MlaDims from the model's published config.json in ../shared/reference/model_configs/, or None."""
    import json
    path = MODEL_CONFIGS / f"{model.replace('/', '--')}_config.json"
    if not path.is_file():
        return None
    cfg = json.loads(path.read_text())
    return mla_modules.MlaDims.from_config(cfg.get("text_config", cfg))


def sglang_decode_graph_max_bs(gpu_mem_bytes: float, tp: int = 1) -> int:
    """SGLang's default cuda_graph_max_bs by GPU memory (server_args.py _handle_gpu_memory_settings): 256 under
    160 GiB at TP < 4 (512 at TP >= 4), 512 above; aiconfigurator's collect_mla_module.py times a decode batch
    under a CUDA graph only up to it (_generation_cuda_graph_enabled_for_tokens), eagerly past it."""
    mib = gpu_mem_bytes / 2**20
    return 512 if mib >= 160 * 1024 or tp >= 4 else 256


# vLLM's MLA decode backends: a context-table row they ran (aiconfigurator's collector records the backend that
# ran; vLLM treats queries up to the backend's decode threshold as decodes: 1 token, FLASHMLA up to 128,
# FLASH_ATTN_MLA up to 512 in the tables) is an absorbed pass over its query tokens, not a dense prefill.
# (vllm/v1/attention/backends/mla/flashmla.py `reorder_batch_threshold: int = 128`, flashattn_mla.py `= 512`,
# "process small prefills with decode pathway"; FLASHINFER_MLA / TRITON_MLA keep the builder's default 1.)
VLLM_DECODE_BACKENDS = frozenset({"FLASHINFER_MLA", "FLASHMLA", "FLASH_ATTN_MLA", "TRITON_MLA"})


def prefill_on_decode_family(kernel: str) -> str:
    """The fit family of vLLM's short context queries run by decode kernel `kernel` (MLA_DECODE_SOURCES): one
    family a kernel, as the decode module's (session 75 F): each GPU's rows ran a decode kernel no other GPU ran
    (B200 trtllm-gen, H100 FlashMLA / FA3, L40S Triton), so a pooled family's leave-one-GPU-out was no test."""
    return f"mla_module_prefill_on_decode_{kernel}"


def module_rows(frame, family, phase, wide_ep=False):
    """MLA / DSA module rows: one work evaluation per (model, kernel, formats) group of columns."""
    import pandas as pd

    def build(group, c, gpu):
        out = []
        keys = ["engine", "model", "kernel_source", "gemm_type", "kv_cache_dtype"]
        for (engine, model, source, gemm, kv), g in group.groupby(keys):
            d = model_dims(model)
            peak = mla_modules.FORMATS[gemm][1]
            if d is None or peak not in c.peak:
                continue   # no published config (GLM-5.2) or a format this GPU has no peak for
            if family == "dsa_module" and phase == "decode" and engine == "sglang":   # eager past the graphs
                g = g[g["batch_size"] <= sglang_decode_graph_max_bs(corpus_gpu(gpu).hbm_capacity.value)]
                if g.empty:
                    continue
            batch, isl, heads, step = (_col(g, k) for k in ("batch_size", "isl", "num_heads", "step"))
            if phase == "prefill":
                new, past = isl, step
            else:   # decode: one new token; the context is `step` (or, in the wide-EP tables, `isl`)
                new, past = np.ones_like(isl), (isl if wide_ep else step)
            steps = 0
            if family == "dsa_module":
                scoring = mla_modules.indexer_scoring_runs(engine, new, past, d.index_topk)
                parts, items = mla_modules.dsa_module_work(phase, batch, new, past, heads, d, gemm, kv, c,
                                                           indexer="skip_indexer" not in source,
                                                           dense="dense_mha" in source,
                                                           all_topk=mla_modules.sparse_all_topk(engine, c.arch),
                                                           scoring=scoring,
                                                           topk_slots=phase == "decode"
                                                           and mla_modules.sparse_topk_slots(engine, c.arch, kv,
                                                                                             source),
                                                           head_pad=mla_modules.sparse_prefill_head_pad(
                                                               engine, c.arch, phase, source,
                                                               dense="dense_mha" in source),
                                                           kv_prefill=mla_modules.sglang_flashmla_kv_prefill(
                                                               engine, c.arch, phase, source,
                                                               dense="dense_mha" in source)
                                                           or mla_modules.vllm_fp8_mixed_batch(
                                                               engine, c.arch, phase, heads, kv, source),
                                                           sglang_topk=engine == "sglang")
                name = f"{family}_{phase}"
                if engine == "trtllm":   # the scoring pass's kernels, where they run
                    steps = mla_modules.INDEXER_SCORING_KERNELS * scoring
                elif engine == "sglang" and phase == "prefill":   # timed eagerly: the path's host launches
                    steps = mla_modules.sglang_prefill_eager_launches(source, gemm)
                elif engine == "vllm" and phase == "prefill":   # timed eagerly: the GEMM format's host launches
                    steps = mla_modules.vllm_prefill_eager_launches(gemm)
            elif phase == "decode":   # each decode kernel its own family, its head tile (MLA_DECODE_TILES)
                kernel = mla_modules.MLA_DECODE_SOURCES[source]
                name, tile, mma, bmm_fp8 = mla_modules.decode_kernel_terms(kernel, c.arch, kv, gemm)
                parts, items = mla_modules.mla_module_work(phase, batch, new, past, heads, d, gemm, kv, c, tile,
                                                           mma=mma, bmm_fp8=bmm_fp8)
                steps = mla_modules.quantize_launches(gemm)
            elif source in VLLM_DECODE_BACKENDS:   # vLLM ran these short "context" queries as decodes
                kernel = mla_modules.MLA_DECODE_SOURCES[source]
                parts, items = mla_modules.mla_module_work("decode", batch, new, past, heads, d, gemm, kv, c,
                                                           mla_modules.MLA_DECODE_TILES[kernel])
                name, steps = prefill_on_decode_family(kernel), mla_modules.quantize_launches(gemm)
            else:
                parts, items = mla_modules.mla_module_work(phase, batch, new, past, heads, d, gemm, kv, c)
                name, steps = f"{family}_{phase}", mla_modules.prefill_quantize_launches(gemm)
            r = _attach(g, parts, items, name, steps=steps)
            r["host_x"] = eager_host.family_host_x(name, engine, c.arch)   # an eager floor is the host's launches
            if family == "dsa_module" and phase == "prefill" and engine in ("sglang", "vllm"):   # timed eagerly: its
                r["eager"] = 1.0   # launches overlap the GPU's work (fitted_roofline.host_overlap)
            for k in ("model", "batch_size", "isl", "step", "num_heads", "gemm_type", "kv_cache_dtype"):   # the shape
                r[k] = g[k].to_numpy()
            out.append(r)
        return pd.concat(out)
    return _per_gpu(frame, build)


def mla_bmm_rows(frame):
    import pandas as pd

    def build(group, c, gpu):
        out = []
        for (engine, op, dtype), g in group.groupby(["engine", "op_name", "bmm_dtype"]):
            d_in, d_out = (128, 512) if op == "mla_gen_pre" else (512, 128)   # DeepSeek-V3's nope, kv_lora, v
            fp8 = mla_modules.mla_bmm_fp8_kernel(engine, c.arch, dtype)
            parts, items = mla_modules.mla_bmm_work(_col(g, "num_tokens"), _col(g, "num_heads"), d_in, d_out,
                                                    dtype, c, fp8, quant_sm_l2=True)
            r = _attach(g, parts, items, mla_modules.mla_bmm_family(engine, c.arch, fp8))
            out.append(r)
        return pd.concat(out)
    return _per_gpu(frame, build)


TABLES = {
    "mla__mla_context_module_perf": lambda f: module_rows(f, "mla_module", "prefill"),
    "mla__mla_generation_module_perf": lambda f: module_rows(f, "mla_module", "decode"),
    "mla__wideep_context_mla_perf": lambda f: module_rows(f, "mla_module", "prefill", wide_ep=True),
    "mla__wideep_generation_mla_perf": lambda f: module_rows(f, "mla_module", "decode", wide_ep=True),
    "sparse_attention__dsa_context_module_perf": lambda f: module_rows(f, "dsa_module", "prefill"),
    "sparse_attention__dsa_generation_module_perf": lambda f: module_rows(f, "dsa_module", "decode"),
    "mla_bmm__mla_bmm_perf": mla_bmm_rows,
    "moe__wideep_context_moe_perf": lambda f: wideep_moe_rows(f, "prefill"),
    "moe__wideep_generation_moe_perf": lambda f: wideep_moe_rows(f, "decode"),
    "moe__wideep_moe_perf": lambda f: wideep_moe_rows(f, "prefill"),
    "linear_attention__gdn_perf": gdn_rows,
    "encoder_attention__encoder_attention_perf": encoder_rows,
    "quantize__scale_matrix_perf": lambda f: quantize_rows(f, "quantize_scale"),
    "quantize__computescale_perf": lambda f: quantize_rows(f, "quantize_compute_scale"),
    "comm__wideep_deepep_ll_perf": lambda f: deepep_rows(f, "ll"),
    "comm__wideep_deepep_normal_perf": lambda f: deepep_rows(f, "normal"),
}


def write_compact(root=DEFAULT_ROOT, out=COMPACT_DIR) -> list[Path]:
    """The committed subset: per table x GPU x engine, every k-th row of the file (at most COMPACT_ROWS)."""
    import pandas as pd
    written = []
    out.mkdir(parents=True, exist_ok=True)
    for table in TABLES:
        frame = read_table(table, root)
        if frame is None:
            continue
        keep = [g.iloc[:: max(1, -(-len(g) // COMPACT_ROWS))] for _, g in frame.groupby(["gpu", "engine"])]
        path = out / f"{table}.csv.gz"
        pd.concat(keep).to_csv(path, index=False, compression={"method": "gzip", "mtime": 0})
        written.append(path)
    return written


def all_rows(root=DEFAULT_ROOT, tables=None):
    """Rows of every table (or those named), ready for modern_fit."""
    import pandas as pd
    out = []
    for table, build in TABLES.items():
        if tables and table not in tables:
            continue
        frame = read_table(table, root)
        if frame is not None:
            out.append(build(frame))
    rows = pd.concat(out, ignore_index=True)
    rows = rows[np.isfinite(rows["latency_s"]) & (rows["latency_s"] > 0)].reset_index(drop=True)
    for c in [c for c in rows.columns if c[0] in "cml" and c[1:].isdigit()] + ["steps", "clocked", "fixed_s"]:
        rows[c] = rows[c].fillna(0.0)
    return rows
