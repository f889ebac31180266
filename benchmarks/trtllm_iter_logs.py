"""TensorRT-LLM's own per-iteration log lines (`print_iter_log: true`) beside whatif's price of the same eager context
step, and public same-recipe TTFTs beside the InferenceX rows (diagnostic only; nothing here feeds a prediction or is
mapped; docs/accuracy.md "Session 71 N").

    python benchmarks/trtllm_iter_logs.py

How the two timings are taken (tensorrt_llm/_torch/pyexecutor/py_executor.py `_profiler` / `profile_step`, the
1.2/1.3-era revision stored here, read_file id 3542389387): on rank 0, `profile_step` runs once per executor-loop
iteration; `host_step_time` is the wall time between two consecutive calls, i.e. the whole iteration on the host
(fetch and schedule, launch this step's forward, and, under the overlap scheduler, `_process_previous_batch`, which
waits for the PREVIOUS step's sampled tokens: so it holds waiting for the GPU). At each call a CUDA event is recorded
on the stream, and the line prints `prev_device_step_time`, the stream span of the previous iteration (its kernels
plus any stream idle while the host launched), so the device time of iteration i is printed on line i + 1.
`states` is the last forward's batch (stale on a line with `num_scheduled_requests: 0`). Reading used here: a step
that follows an idle iteration and whose device span equals its host time is host-bound at that host time (the GPU
finished no later than the host's last launch); a device span above the host time is GPU-bound, and the next line's
host time then holds the wait for the rest.

STEPS are context iterations read from public server logs of DeepSeek-R1-0528 NVFP4 on 4 B200 (TP4, EP4, no attention
DP, eager context: no torch_compile_config / piecewise graphs, `moe_config.backend: TRTLLM`, overlap scheduler on),
release 1.3.0rc10 (github.com/zufayu/ClaudeSkillsE2EPerf results/b200_dsr_fp4/b200_dsr_fp4_mtp0_ep4_tp4_rc10/
server_fp4_throughput_{chat,summarize}_ep4_c4.log, read_file ids 53190118018 / 53726771826). RUNS are the same
repository's benchmark results (benchmark_serving.py with InferenceX's arguments: --random-range-ratio 0.8, N clients,
10N prompts after warm-ups; the recipe's yaml as InferenceX's dsr1_fp{4,8}_b200_trt.sh writes it) beside the scored
InferenceX rows of the same layout and precision."""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

LOG_ROOT = "github.com/zufayu/ClaudeSkillsE2EPerf/blob/main/results/"
RC10 = "b200_dsr_fp4/b200_dsr_fp4_mtp0_ep4_tp4_rc10/"
# a scored row of the logs' layout and precision (NVFP4 TP4 EP4, B200): whatif's pass is priced on its mapping
TP4_EP4_TEMPLATE = "2026_04_06_deepseek_r1_b200_sxm_trtllm_fp4_agg_1024x8192_c8_tp4_ep4_1683"

_LINE = re.compile(
    r"iter = (?P<iter>\d+),.*?host_step_time = (?P<host>[\d.]+)ms, prev_device_step_time = (?P<dev>[\d.]+ms|N/A),"
    r".*?num_scheduled_requests: (?P<sched>\d+), states = \{'num_ctx_requests': (?P<ctx_req>\d+), "
    r"'num_ctx_tokens': (?P<ctx_tok>\d+), 'num_generation_tokens': (?P<gen>\d+)")


def parse_iter_line(line: str) -> dict | None:
    """One `print_iter_log` line as numbers (ms; prev_device_ms None on the first iteration), None if not one."""
    m = _LINE.search(line)
    if m is None:
        return None
    dev = m["dev"]
    return {"iter": int(m["iter"]), "host_ms": float(m["host"]),
            "prev_device_ms": None if dev == "N/A" else float(dev[:-2]), "scheduled": int(m["sched"]),
            "ctx_requests": int(m["ctx_req"]), "ctx_tokens": int(m["ctx_tok"]), "gen_tokens": int(m["gen"])}


def device_times(lines: list[dict]) -> dict[int, float]:
    """{iteration: its device span (ms)}: line i + 1's prev_device_step_time belongs to iteration i."""
    return {a["iter"]: b["prev_device_ms"] for a, b in zip(lines, lines[1:])
            if b["prev_device_ms"] is not None and b["iter"] == a["iter"] + 1}


def bound(host_ms: float, device_ms: float, tol: float = 0.01) -> str:
    """'host' when the device span is no longer than the host's iteration (within tol), else 'GPU'."""
    return "host" if device_ms <= host_ms * (1 + tol) else "GPU"


@dataclass(frozen=True)
class Step:
    """One logged context iteration (1.3.0rc10, NVFP4 TP4 EP4, B200) and what preceded it."""
    label: str
    log: str                # under LOG_ROOT + RC10
    iteration: int
    prompts: int            # context requests in the step (equal prompts: the client's warm-up prompt)
    prompt_tokens: int      # tokens of each
    gen_tokens: int         # decode tokens riding along
    host_ms: float          # host_step_time
    device_ms: float        # the next line's prev_device_step_time
    after_idle: bool        # the iteration before scheduled nothing (so host_ms holds no wait)
    template: str = TP4_EP4_TEMPLATE   # the scored row whose mapping prices the step


# the contrast: the same client's run of 1.2.0rc6.post2, NVFP4 TP8 EP8, with piecewise CUDA graphs over the context
# step (torch_compile_config capture_num_tokens 1-8192), b200_dsr_fp4_mtp0_ep8_tp8_post2/
# server_fp4_throughput_chat_ep8_c4.log (read_file id 53134659444); priced as whatif's eager TP8 EP8 pass
POST2_PIECEWISE = "b200_dsr_fp4/b200_dsr_fp4_mtp0_ep8_tp8_post2/server_fp4_throughput_chat_ep8_c4.log"
TP8_EP8_TEMPLATE = "dsr1_b200_trtllm_fp4_agg_1024x1024_c64_cfg178"


STEPS = (
    Step("1k, alone after an idle iteration", "server_fp4_throughput_chat_ep4_c4.log", 854, 1, 992, 0,
         58.43, 58.44, True),
    Step("3 x 1k + 1 decode", "server_fp4_throughput_chat_ep4_c4.log", 855, 3, 992, 1, 63.73, 87.54, False),
    Step("7.2k + 2 decodes", "server_fp4_throughput_summarize_ep4_c4.log", 3, 1, 7238, 2, 177.73, 183.28, False),
    Step("7.2k + 3 decodes", "server_fp4_throughput_summarize_ep4_c4.log", 4, 1, 7238, 3, 183.16, 183.34, False),
)
PIECEWISE_STEPS = (
    Step("piecewise: 1k alone after idle", POST2_PIECEWISE, 854, 1, 992, 0, 21.85, 41.97, True, TP8_EP8_TEMPLATE),
    Step("piecewise: 3 x 1k + 1 decode", POST2_PIECEWISE, 855, 3, 992, 1, 26.95, 55.16, False, TP8_EP8_TEMPLATE),
)
DECODE_PIECEWISE = (8.5, 8.6)   # the same log's batch-4 decode iterations 773-897: host 8.33-8.65, device 8.39-8.76
# generation-only iterations beside them (batch 4, graphed): host / device ms, medians read off the same logs
DECODE_1K = (7.2, 7.3)     # chat log iters 4-21 and 798-852: host 6.96-7.46, device 7.22-7.45
DECODE_7K = (8.0, 8.1)     # summarize log iters 6-38: host 7.79-8.14, device 7.97-8.23


@dataclass(frozen=True)
class Run:
    """One public benchmark run (mean input tokens, N clients) and the scored InferenceX rows of its layout."""
    label: str
    result: str             # under LOG_ROOT
    release: str
    isl_mean: int           # total_input_tokens / num_prompts
    clients: int
    mean_ttft_ms: float | None
    median_ttft_ms: float
    rows: tuple[str, ...]   # scored rows (serving_reference.csv) of the same precision, TP, ISL 1024/8192 and N


RUNS = (
    Run("fp8 TP8 EP1 1k, c1", "b200_dsr_fp8/b200_dsr_fp8_mtp0_ep1_tp8_post3/result_fp8_throughput_chat_ep1_c1.json",
        "1.2 line (post3 directory)", 918, 1, 63.83, 63.99, ()),
    Run("fp8 TP8 EP1 1k, c4", "b200_dsr_fp8/b200_dsr_fp8_mtp0_ep1_tp8_post3/server_fp8_throughput_chat_ep1_c4."
        "trimmed.log", "1.2 line (post3 directory)", 918, 4, None, 71.63,
        ("dsr1_b200_trtllm_fp8_agg_1024x1024_c4_cfg75",)),
    Run("fp8 TP8 EP1 1k, c8", "b200_dsr_fp8/b200_dsr_fp8_mtp0_ep1_tp8_post3/result_fp8_throughput_chat_ep1_c8.json",
        "1.2 line (post3 directory)", 922, 8, 92.02, 72.60, ("dsr1_b200_trtllm_fp8_agg_1024x1024_c8_cfg75",)),
    Run("NVFP4 TP8 EP8 1k, c4 (piecewise)", POST2_PIECEWISE.replace(".log", ".trimmed.log"), "1.2.0rc6.post2", 0,
        4, None, 56.44, ()),   # its mean input length is not in the trimmed log
    Run("NVFP4 TP4 EP4 1k, c4", RC10 + "result_fp4_throughput_chat_ep4_c4.json", "1.3.0rc10", 927, 4, 84.89, 76.63,
        ("dsr1_b200_trtllm_fp4_agg_1024x1024_c4_cfg82", TP4_EP4_TEMPLATE)),   # EP1 post2 c4; EP4 post3 (MTP) c8
    Run("NVFP4 TP4 EP4 8k, c4", RC10 + "result_fp4_throughput_summarize_ep4_c4.json", "1.3.0rc10", 7351, 4, 259.32,
        223.28, ("dsr1_b200_trtllm_fp4_agg_8192x1024_c4_cfg82",)),
)


def priced_step(step: Step, template: str | None = None) -> dict:
    """whatif's eager pass for the step's prompts on the template row's mapping: GPU, pass and host ms, host calls."""
    import eager_call_cost as ecc
    import serving_reference as sr
    from step_ops import row_estimate

    from whatif.roofline import forward_pass
    row = {r["id"]: r for r in sr.load()}[template or step.template]
    queues: list = []
    with ecc.recorded_queues(queues):
        est = row_estimate(row, batch=step.prompts, prompt=step.prompt_tokens)
    times, launch_s, gap_s, factors, gaps = queues[0]
    calls = ecc.host_calls(times, factors)
    return {"gpu_ms": est.prefill[0][0].gpu_s * 1e3, "calls": calls, "launch_us": launch_s * 1e6,
            "host_ms": calls * launch_s * 1e3,
            "pass_ms": forward_pass.launch_queue_time(times, launch_s, gap_s, factors, gaps) * 1e3}


def committed(row_id: str) -> tuple[float, float]:
    """(measured, predicted) TTFT ms of a row in the committed serving table."""
    import csv
    with open(ROOT / "benchmarks/data/serving_reference.csv") as f:
        for r in csv.DictReader(f):
            if r["id"] == row_id:
                return float(r["measured_ttft_ms"]), float(r["predicted_ttft_ms"])
    raise KeyError(row_id)


def main() -> None:
    print("Logged context iterations, DeepSeek-R1 NVFP4 on B200 (1.3.0rc10 TP4 EP4 eager; 'piecewise': 1.2.0rc6.post2"
          " TP8 EP8 with piecewise graphs) vs whatif's eager pass")
    print(f"{'step':36s} {'host':>6s} {'dev':>6s} {'bound':>5s} {'w gpu':>6s} {'w host':>6s} {'dev/gpu':>7s} "
          f"{'us/call':>7s}")
    for s in STEPS + PIECEWISE_STEPS:
        p = priced_step(s)
        host_bound = s.after_idle and bound(s.host_ms, s.device_ms) == "host"
        per_call = s.host_ms / p["calls"] * 1e3 if host_bound else float("nan")
        how = bound(s.host_ms, s.device_ms) if s.after_idle else "pipe"   # pipe: host time holds the last wait
        print(f"{s.label:36s} {s.host_ms:6.1f} {s.device_ms:6.1f} {how:>5s} "
              f"{p['gpu_ms']:6.1f} {p['host_ms']:6.1f} {s.device_ms / p['gpu_ms']:7.2f} {per_call:7.1f}")
    print(f"decode (batch 4, graphed): host / device {DECODE_1K[0]} / {DECODE_1K[1]} ms at ~1k context, "
          f"{DECODE_7K[0]} / {DECODE_7K[1]} ms at ~7.2k; piecewise log {DECODE_PIECEWISE[0]} / {DECODE_PIECEWISE[1]}")
    print("us/call: a host-bound step's host time over whatif's host calls of the pass (whatif charges "
          f"{p['launch_us']:.1f} us)\n")
    print("Public same-recipe runs vs scored InferenceX rows of that precision and TP (TTFT ms)")
    print(f"{'run':32s} {'release':27s} {'isl':>5s} {'mean':>6s} {'median':>6s}   rows: measured / whatif")
    for r in RUNS:
        rows = ", ".join("{:.0f} / {:.0f}".format(*committed(i)) for i in r.rows) or "-"
        mean = f"{r.mean_ttft_ms:6.1f}" if r.mean_ttft_ms is not None else f"{'-':>6s}"
        isl = f"{r.isl_mean:5d}" if r.isl_mean else f"{'-':>5s}"
        print(f"{r.label:32s} {r.release:27s} {isl} {mean} {r.median_ttft_ms:6.1f}   {rows}")


if __name__ == "__main__":
    main()
