"""whatif's TensorRT-LLM KV pool beside the engine's own KV-sizing log lines at the same launch (diagnostic only;
nothing here feeds a prediction or is mapped).

    python benchmarks/trtllm_dryrun_logs.py

TensorRT-LLM's PyTorch backend sizes its KV pool from one dry run (tensorrt_llm/_torch/pyexecutor/_util.py,
KvCacheCreator.configure_kv_cache_capacity / _cal_max_memory; the 1.1-1.2-era revision stored here, read_file id
843526953): after the warmups (autotuner, generation CUDA graphs, piecewise graphs) it resets the peak, runs dummy
context requests of max_num_tokens tokens, and takes peak = torch's allocated peak + (driver-used - torch-allocated
after empty_cache), then KV = fraction x (device total - peak + the dry run's temporary KV). It logs every term. LOGS
holds those lines from public server logs of DeepSeek-R1-0528 on B200 (github.com/zufayu/ClaudeSkillsE2EPerf,
results/b200_dsr_fp{4,8}/..., trimmed and full server logs): device total 178.35 GiB, the temporary KV 0.27 GiB. For
each, whatif's plan at the same launch (a scored row of that layout and precision as template; max_num_tokens and
the fraction of the log) is printed beside it: whatif's weights, its activations + reserved bytes, its pool, and the
free memory it lacks = (whatif's pool - the logged KV) / fraction."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

GIB = 2 ** 30
LOG_ROOT = "github.com/zufayu/ClaudeSkillsE2EPerf/blob/main/results/"


@dataclass(frozen=True)
class DryRunLog:
    """One server log's KV-sizing lines (GiB a GPU) and its launch."""
    label: str
    path: str                  # under LOG_ROOT
    template: str              # a scored row id of the same layout and precision (serving_reference.csv)
    fraction: float            # kv_cache_config.free_gpu_memory_fraction
    max_num_tokens: int
    peak_gib: float            # "Peak memory during memory usage profiling (torch + non-torch)"
    kv_gib: float              # "Estimated max memory in KV cache"
    torch_start_gib: float     # "Memory used after loading model weights (inside torch)"
    outside_start_gib: float   # "... (outside torch)"


TMP_KV_GIB = 0.27   # "tmp kv_mem 0.27 GiB": the dry run's 258 blocks x 32 tokens x 35,136 B (fp8 MLA latent, 61 layers)

LOGS = (
    DryRunLog("fp8 TP8 EP1, CONC 4", "b200_dsr_fp8/b200_dsr_fp8_mtp0_ep1_tp8_post3/"
              "server_fp8_throughput_chat_ep1_c4.trimmed.log", "dsr1_b200_trtllm_fp8_agg_1024x1024_c64_cfg75",
              0.8, 8192, 91.79, 69.47, 81.86, 7.48),
    DryRunLog("fp8 TP8 EP1, CONC 256, piecewise graphs", "b200_dsr_fp8/b200_dsr_fp8_mtp0_ep1_tp8_post3/"
              "server_fp8_throughput_chat_ep1_c256.trimmed.log", "dsr1_b200_trtllm_fp8_agg_1024x1024_c64_cfg75",
              0.7, 8192, 93.07, 59.89, 81.97, 10.82),
    DryRunLog("NVFP4 TP4 EP4, CONC 64 (1.2.0rc6.post2)", "b200_dsr_fp4/b200_dsr_fp4_mtp0_ep4_tp4_post2/"
              "server_fp4_throughput_chat_ep4_c64.trimmed.log",
              "2026_03_25_deepseek_r1_b200_sxm_trtllm_fp4_agg_8192x1024_c32_tp4_0_ep4_0_1077",
              0.8, 8192, 104.06, 59.65, 93.90, 7.56),
    DryRunLog("NVFP4 TP8 EP8, CONC 256 (1.2.0rc6.post2)", "b200_dsr_fp4/b200_dsr_fp4_mtp0_ep8_tp8_post2/"
              "server_fp4_throughput_reasoning_ep8_c256.trimmed.log", "dsr1_b200_trtllm_fp4_agg_1024x1024_c64_cfg178",
              0.8, 8192, 61.76, 93.48, 48.70, 10.47),
    DryRunLog("NVFP4 TP8 EP8, CONC 4, piecewise graphs (1.2.0rc6.post2)", "b200_dsr_fp4/"
              "b200_dsr_fp4_mtp0_ep8_tp8_post2/server_fp4_throughput_chat_ep8_c4.log",
              "dsr1_b200_trtllm_fp4_agg_1024x1024_c64_cfg178", 0.8, 8192, 62.00, 93.30, 49.13, 12.53),
)


def device_total_gib(log: DryRunLog) -> float:
    """The device total the engine used, from KV = fraction x (total - peak + temporary KV)."""
    return log.kv_gib / log.fraction + log.peak_gib - TMP_KV_GIB


def missing_free_gib(whatif_pool_gib: float, log: DryRunLog) -> float:
    """Free memory (before the fraction) whatif has beyond the engine's, GiB a GPU."""
    return (whatif_pool_gib - log.kv_gib) / log.fraction


def whatif_plan(log: DryRunLog) -> dict:
    """whatif's memory plan at the log's launch: the template row's settings, the log's token budget and fraction."""
    import serving_reference as sr
    from whatif.api import estimate

    row = next(r for r in sr.load() if r["id"] == log.template)
    kw = sr.simulate_kwargs(row, 1)
    kw.update(max_num_batched_tokens=log.max_num_tokens, memory_utilization=log.fraction)
    m = estimate(**{k: v for k, v in kw.items() if k not in ("traffic", "engine", "cluster")}).estimate.memory
    free = m.capacity_bytes - m.budgets[0].fixed_bytes
    return {"weights": m.weights_bytes / GIB, "act_reserved": (m.activation_bytes + m.workspace_bytes) / GIB,
            "capacity": m.capacity_bytes / GIB, "pool": free * log.fraction / GIB}


def main() -> int:
    print(f"{'log':58s} {'total':>6s} {'W':>5s} {'act+rsv':>7s} {'pool':>6s} | {'log: peak-W':>11s} {'KV':>6s} "
          f"{'torch0-W':>8s} {'outside0':>8s} | {'lacks':>5s} {'x pool':>6s}")
    for log in LOGS:
        p = whatif_plan(log)
        print(f"{log.label:58s} {device_total_gib(log):6.2f} {p['weights']:5.1f} {p['act_reserved']:7.2f} "
              f"{p['pool']:6.1f} | {log.peak_gib - TMP_KV_GIB - p['weights']:11.1f} {log.kv_gib:6.2f} "
              f"{log.torch_start_gib - p['weights']:8.1f} {log.outside_start_gib:8.2f} | "
              f"{missing_free_gib(p['pool'], log):5.1f} {log.kv_gib / p['pool']:6.3f}")
    print(f"whatif's B200 capacity {p['capacity']:.2f} GiB (the CUDA runtime's total, b200.yaml runtime_capacity); "
          "GiB a GPU; lacks = free memory whatif has beyond the engine's; sources: " + LOG_ROOT)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
