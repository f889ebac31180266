"""Host time of SGLang's attention module in an eager prefill, read off aiconfigurator's context-module tables.

    python benchmarks/eager_module_host.py [--root PATH] [--trtllm]

aiconfigurator times SGLang's whole attention module of a prefill eagerly: CUDA events around one Python call of
`self_attn(...)` with a synchronize after each (collector/sglang/collect_wideep_attn.py, run_attention_torch: the
MLA module of DeepSeek-V3, SGLang 0.5.10; the DSA context module of GLM-5 / DeepSeek-V3.2, SGLang 0.5.14, its
dense-MHA path at <= 2,048 tokens; `dsa_sparse`: its indexer path, the same calls after a prefix past the
2,048-token top-k, flat at 1.0-1.6 ms up to 16k cached tokens, session 59). Each call starts on an idle GPU, so
where its kernels are short the GPU waits on the host and the time is the module's host time: the tables are
flat at 0.5-0.9 ms from 4 to ~2,048 tokens.
Printed per GPU, module and GEMM format: that floor (median of the rows of <= 2,048 tokens a call), the same in
host launches (floor / the host's eager launch, the SGLang profile's kernels.eager_launch_s / _by_arch), the
leave-one-GPU-out error of predicting a GPU's floor from the other GPU's launches, and whatif's own count of the
module's kernels in a prefill pass (roofline/module_host.py), which whatif otherwise charges one launch each.
Nothing fitted here is applied by this script; roofline/module_host.py reads its launches from the engine profile.

`--trtllm` sets TensorRT-LLM's tables of the same modules beside them (session 57). Those were not timed eagerly:
collector/trtllm/collect_mla_module.py (MLA and DSA context modules, 1.3.0rc20) captures one `attn_module.forward`
in a CUDA graph and times its replays (collector/helper.py benchmark_with_power, allow_graph_fail=False: a failed
capture raises, no eager row is written), so their smallest calls read the module's GPU time alone, 0.04-0.24 ms,
under what an eager call of whatif's kernels in the module would cost the host (kernels x TensorRT-LLM's eager
launch). No table here holds TensorRT-LLM's module host time, so trtllm.yaml has no eager_module_launches.

`--moe` (session 62) reads SGLang's routed-MoE core of a prefill the same way: collector/sglang/
collect_wideep_deepep_moe.py times `moe_layer.experts.run_moe_core(dispatch_output)` (DeepEP normal mode's
experts: DeepGEMM's contiguous grouped GEMMs and their scatter / activation / gather, SGLang 0.5.10) with CUDA events
around one Python call, synchronized before and after, so eagerly; its uniform rows are flat at 0.30-0.44 ms up to
128 tokens a rank. That is the path of a `--moe-a2a-backend deepep` launch, which no serving row read runs (the B200
DeepSeek launches run --moe-runner-backend flashinfer_trtllm, serving_reference.SGLANG_A2A_RECIPES): printed, not
mapped. `--vllm` reads vLLM 0.24's DSA context module, the one vLLM module table timed eagerly
(collector/vllm/collect_mla_module.py: use_cuda_graph = not (attn_type == "dsa" and is_context); its MLA modules
are CUDA-graph replays): flat at 1.3-2.3 ms a call up to 1,024 tokens, at vLLM's eager launch (versions/vllm-0.6.yaml,
the same measured 22.0 / 21.5 us) 60-105 launches where whatif counts 14 kernels in the module; no serving row runs
a DSA model on vLLM.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_ROOT = ROOT.parent / "shared" / "reference" / "aiconfigurator" / "modern"
MAX_TOKENS = 2048   # tokens a call at most: where the module is host-bound (its GPU time under its launches)
TABLES = {   # module -> (table, rows of the eager host floor)
    "mla": "mla__wideep_context_mla_perf.parquet",
    "dsa": "sparse_attention__dsa_context_module_perf.parquet",
    "dsa_sparse": "sparse_attention__dsa_context_module_perf.parquet",   # its indexer (sparse) path
}
SPARSE_MAX_PAST = 16384   # cached tokens at most for the sparse path's floor (its GPU time still under its host's)
GPU_ARCHS = {"h100_sxm": "hopper", "b200_sxm": "blackwell"}   # the tables' GPUs and their architectures
# TensorRT-LLM's tables of the same modules: CUDA-graph replays (collect_mla_module.py), so GPU time only.
TRTLLM_TABLES = {
    "mla": "mla__mla_context_module_perf.parquet",
    "dsa": "sparse_attention__dsa_context_module_perf.parquet",
}
SMALLEST_CALL = 16   # tokens a call at most: the graph's least GPU work, the floor an eager call could not go under
# SGLang's DeepEP-normal MoE core (collect_wideep_deepep_moe.py, eager): flat while a rank holds few tokens.
MOE_TABLE = "moe__wideep_context_moe_perf.parquet"
MOE_MAX_TOKENS_A_RANK = 128   # num_tokens / moe_ep_size at most (the tables rise from 256 a rank on H100 EP2)
# vLLM's DSA context module (collect_mla_module.py runs it eagerly): flat up to 1,024 tokens a call on both GPUs.
VLLM_TABLES = {"dsa": "sparse_attention__dsa_context_module_perf.parquet"}
VLLM_MAX_TOKENS = 1024
VLLM_HOST_PROFILE = "vllm-0.6"   # the profile carrying vLLM's measured eager launch (V1's vllm.yaml has none)


def host_launch_s(engine: str = "sglang") -> dict[str, float]:
    """Each table GPU's host time per eager launch, as the engine's profile gives it (kernels.eager_launch_s and
    _by_arch; SGLang's measured by eager_host_cost.py, TensorRT-LLM's taken from vLLM's)."""
    from whatif.specs.engines import load_engine
    spec = load_engine(engine)
    return {gpu: spec.on_host_of(arch).eager_launch_s for gpu, arch in GPU_ARCHS.items()}


def floors(root: Path = DEFAULT_ROOT) -> dict[tuple[str, str, str], tuple[float, int]]:
    """{(gpu, module, gemm format): (median ms of an eager module call at <= MAX_TOKENS tokens, rows)}."""
    def calls(d, module):
        if module == "dsa_sparse":   # the indexer path: <= MAX_TOKENS new tokens after a prefix past the top-k
            d = d[(d["batch_size"] * d["isl"] <= MAX_TOKENS) & (d["step"] + d["isl"] > MAX_TOKENS)
                  & (d["step"] <= SPARSE_MAX_PAST)]
            return d[d["kernel_source"].str.contains("indexer") & ~d["kernel_source"].str.contains("skip")]
        d = d[(d["batch_size"] * d["isl"] <= MAX_TOKENS) & (d["step"] == 0)]
        # DSA: the dense-MHA path (no indexer) that short prompts take
        return d[d["kernel_source"].str.contains("dense")] if module == "dsa" else d
    return _median_floors(root, "sglang", TABLES, calls)


def trtllm_graph_floors(root: Path = DEFAULT_ROOT) -> dict[tuple[str, str, str], tuple[float, int]]:
    """{(gpu, module, gemm format): (median ms of TensorRT-LLM's graph-replayed module at <= SMALLEST_CALL tokens a
    call, rows)}: no prefix, bf16 KV, 8+ heads (the SGLang tables' head counts)."""
    def calls(d, module):
        return d[(d["batch_size"] * d["isl"] <= SMALLEST_CALL) & (d["step"] == 0) & (d["num_heads"] >= 8)
                 & (d["kv_cache_dtype"] == "bfloat16")]
    return _median_floors(root, "trtllm", TRTLLM_TABLES, calls)


def moe_core_floors(root: Path = DEFAULT_ROOT) -> dict[tuple[str, str, str], tuple[float, int]]:
    """{(gpu, "moe_core", moe dtype): (median ms of SGLang's eager DeepEP-normal MoE core, rows)}: uniform routing
    (the collector fills every local expert alike), <= MOE_MAX_TOKENS_A_RANK tokens a rank."""
    import pandas as pd
    out = {}
    for gpu in GPU_ARCHS:
        path = root / gpu / "sglang" / MOE_TABLE
        if not path.is_file():
            continue
        d = pd.read_parquet(path)
        d = d[(d["distribution"] == "uniform") & (d["num_tokens"] <= MOE_MAX_TOKENS_A_RANK * d["moe_ep_size"])]
        for fmt, rows in d.groupby("moe_dtype"):
            out[(gpu, "moe_core", fmt)] = (float(rows["latency"].median()), len(rows))
    return out


def vllm_dsa_floors(root: Path = DEFAULT_ROOT) -> dict[tuple[str, str, str], tuple[float, int]]:
    """{(gpu, "dsa", gemm format): (median ms of vLLM's eager DSA context module, rows)}: no prefix, <=
    VLLM_MAX_TOKENS tokens a call, every head count and KV dtype."""
    def calls(d, module):
        return d[(d["batch_size"] * d["isl"] <= VLLM_MAX_TOKENS) & (d["step"] == 0)]
    return _median_floors(root, "vllm", VLLM_TABLES, calls)


def _median_floors(root: Path, engine: str, tables: dict, calls) -> dict[tuple[str, str, str], tuple[float, int]]:
    """{(gpu, module, gemm format): (median ms, rows)} of each GPU's `engine` module table, over the rows
    calls(frame, module) keeps (floors' and trtllm_graph_floors' shared reading)."""
    import pandas as pd
    out = {}
    for gpu in GPU_ARCHS:
        for module, table in tables.items():
            path = root / gpu / engine / table
            if not path.is_file():
                continue
            for gemm, rows in calls(pd.read_parquet(path), module).groupby("gemm_type"):
                out[(gpu, module, gemm)] = (float(rows["latency"].median()), len(rows))
    return out


def launches(table: dict, engine: str = "sglang") -> dict[tuple[str, str, str], float]:
    """The floors as host launches of the GPU's host: floor / the engine's eager launch there."""
    host = host_launch_s(engine)
    return {k: ms * 1e-3 / host[k[0]] for k, (ms, _) in table.items()}


def leave_one_gpu_out(table: dict, engine: str = "sglang") -> dict[tuple[str, str, str], float]:
    """Relative error of each GPU's floor predicted from the other GPUs' mean launches x its own host launch."""
    n, host = launches(table, engine), host_launch_s(engine)
    out = {}
    for (gpu, module, gemm), (ms, _) in table.items():
        others = [v for (g, m, f), v in n.items() if g != gpu and (m, f) == (module, gemm)]
        if others:
            out[(gpu, module, gemm)] = statistics.mean(others) * host[gpu] * 1e3 / ms - 1
    return out


def _prefill(model: str, quantization: str | None, tp: int, prompt: int, engine: str):
    from whatif import api
    r = api.estimate(model, "dgx-b200", tp=tp, prompt=prompt, output=2, batch=1, kernel_engine=engine,
                     quantization=quantization)
    (p, _), = r.prefill
    return p


def whatif_module_kernels(model: str, quantization: str | None, tp: int = 8, prompt: int = 1024,
                          engine: str = "sglang") -> int:
    """Kernels whatif counts in one layer's attention module of an `engine` prefill of `prompt` tokens."""
    from whatif.roofline.module_host import module_kernels_per_layer
    return round(module_kernels_per_layer(_prefill(model, quantization, tp, prompt, engine).op_times))


def whatif_moe_kernels(model: str, quantization: str | None, tp: int = 8, prompt: int = 1024,
                       engine: str = "sglang") -> float:
    """Kernels whatif counts in one MoE layer's routed experts (router to down projection) of a prefill."""
    from whatif.roofline.ops import graph_role
    from whatif.specs.op_kinds import OpRole
    roles = {OpRole.ROUTER, OpRole.ROUTER_TOPK, OpRole.MOE_DISPATCH, OpRole.EXPERT_UP, OpRole.EXPERT_ACT,
             OpRole.EXPERT_DOWN, OpRole.MOE_COMBINE}
    times = _prefill(model, quantization, tp, prompt, engine).op_times
    mod = [t for t in times if graph_role(t.op) in roles]
    layers = sum(t.op.count for t in mod if graph_role(t.op) == OpRole.ROUTER)
    return sum(t.op.count for t in mod) / layers if layers else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(DEFAULT_ROOT), help="the modern/ folder of kernel tables")
    ap.add_argument("--trtllm", action="store_true", help="also TensorRT-LLM's (graph-timed) tables of the modules")
    ap.add_argument("--moe", action="store_true", help="also SGLang's eager DeepEP-normal MoE core (not mapped)")
    ap.add_argument("--vllm", action="store_true", help="also vLLM's eager DSA context module (not mapped)")
    args = ap.parse_args()
    print_eager(floors(Path(args.root)), "sglang", None, "GEMMs")
    print("\nwhatif's kernels in one layer's attention module of a 1,024-token SGLang prefill (TP8):")
    for model, quant in (("deepseek-ai/DeepSeek-R1", "fp8"), ("zai-org/GLM-5", "fp8")):
        print(f"  {model} {quant}: {whatif_module_kernels(model, quant)}")
    if args.trtllm:
        print_trtllm(Path(args.root))
    if args.moe:
        print_eager(moe_core_floors(Path(args.root)), "sglang",
                    f"SGLang's DeepEP-normal MoE core (run_moe_core, eager), <= {MOE_MAX_TOKENS_A_RANK} tokens a rank; "
                    f"whatif's routed-MoE kernels a layer (DeepSeek-R1 fp8, flashinfer_trtllm path): "
                    f"{whatif_moe_kernels('deepseek-ai/DeepSeek-R1', 'fp8'):.0f}")
    if args.vllm:
        print_eager(vllm_dsa_floors(Path(args.root)), VLLM_HOST_PROFILE,
                    f"vLLM's DSA context module (eager), <= {VLLM_MAX_TOKENS} tokens a call; whatif's kernels in "
                    f"the module (GLM-5 fp8, vLLM): {whatif_module_kernels('zai-org/GLM-5', 'fp8', engine='vllm')}")
    return 0


def print_eager(table: dict, engine: str, title: str | None, column: str = "format") -> None:
    """A table of eager floors as `engine`'s host launches, with their leave-one-GPU-out error (`column`: what the
    key's third field is; no title: the first table, printed bare)."""
    n, logo = launches(table, engine), leave_one_gpu_out(table, engine)
    if title:
        print(f"\n{title}:")
    print(f"| GPU | module | {column} | rows | eager floor ms | host launches | leave-one-GPU-out |")
    print("|---|---|---|---|---|---|---|")
    for k in sorted(table):
        ms, rows = table[k]
        err = f"{logo[k]:+.1%}" if k in logo else "-"
        print(f"| {k[0]} | {k[1]} | {k[2]} | {rows} | {ms:.3f} | {n[k]:.1f} | {err} |")


def print_trtllm(root: Path) -> None:
    """TensorRT-LLM's graph-timed floors of the same modules, as TensorRT-LLM eager launches: fewer than whatif's
    kernels in the module (7 MLA, 14 DSA), so no eager call, i.e. no host time, is in them."""
    host = host_launch_s("trtllm")
    print(f"\nTensorRT-LLM's tables of the modules (CUDA-graph replays), calls of <= {SMALLEST_CALL} tokens:")
    print("| GPU | module | GEMMs | rows | graph floor ms | as TensorRT-LLM eager launches |")
    print("|---|---|---|---|---|---|")
    for (gpu, module, gemm), (ms, rows) in sorted(trtllm_graph_floors(root).items()):
        print(f"| {gpu} | {module} | {gemm} | {rows} | {ms:.3f} | {ms * 1e-3 / host[gpu]:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
