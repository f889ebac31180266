"""benchmarks/trtllm_iter_logs.py: TensorRT-LLM's per-iteration log lines beside whatif's eager context pass."""
import pytest

from tests.benchmark_module import load_benchmark

til = load_benchmark("trtllm_iter_logs")

# two lines composed in py_executor.py's format (not copied from a log): an idle iteration, then a context step
_IDLE = ("[04/14/2026-03:37:07] [TRT-LLM] [RANK 0] [I] iter = 10, global_rank = 0, rank = 0, currank_total_requests = "
         "0/4, host_step_time = 7.5ms, prev_device_step_time = 7.4ms, timestamp = 2026-04-14 03:37:07, "
         "num_scheduled_requests: 0, states = {'num_ctx_requests': 0, 'num_ctx_tokens': 0, 'num_generation_tokens': 4}")
_CTX = ("[04/14/2026-03:37:07] [TRT-LLM] [RANK 0] [I] iter = 11, global_rank = 0, rank = 0, currank_total_requests = "
        "0/5, host_step_time = 50.25ms, prev_device_step_time = 1.0ms, timestamp = 2026-04-14 03:37:07, "
        "num_scheduled_requests: 1, states = {'num_ctx_requests': 1, 'num_ctx_tokens': 1000, "
        "'num_generation_tokens': 0}")
_NEXT = _CTX.replace("iter = 11", "iter = 12").replace("step_time = 1.0ms", "step_time = 61.5ms")


def test_parse_reads_the_line_and_rejects_others():
    r = til.parse_iter_line(_CTX)
    assert (r["iter"], r["host_ms"], r["prev_device_ms"], r["ctx_tokens"], r["gen_tokens"]) == (11, 50.25, 1.0, 1000, 0)
    assert til.parse_iter_line(_CTX.replace("prev_device_step_time = 1.0ms", "prev_device_step_time = N/A"))[
        "prev_device_ms"] is None
    assert til.parse_iter_line("INFO: POST /v1/completions 200 OK") is None


def test_device_time_is_on_the_next_line():
    lines = [til.parse_iter_line(x) for x in (_IDLE, _CTX, _NEXT)]
    assert til.device_times(lines) == {10: 1.0, 11: 61.5}


def test_bound_reading():
    assert til.bound(58.43, 58.44) == "host"
    assert til.bound(63.7, 87.5) == "GPU"


def test_logged_steps_are_consistent():
    # device spans grow with the step's tokens; a lone 1k step after an idle iteration is the host-bound one
    by_tokens = sorted(til.STEPS, key=lambda s: s.prompts * s.prompt_tokens)
    assert [s.device_ms for s in by_tokens] == sorted(s.device_ms for s in by_tokens)
    lone = [s for s in til.STEPS if s.after_idle]
    assert len(lone) == 1 and til.bound(lone[0].host_ms, lone[0].device_ms) == "host"


def test_whatif_prices_the_logged_steps_low_by_a_flat_factor():
    # the finding (session 71 N): device span / whatif's GPU pass x1.27-1.34 from 1k to 7.2k tokens, and whatif's
    # eager host (21.5 us a call) is under half the host-bound 1k step's 58.4 ms
    ratios = [s.device_ms / til.priced_step(s)["gpu_ms"] for s in til.STEPS]
    assert all(1.15 < r < 1.45 for r in ratios)
    lone = next(s for s in til.STEPS if s.after_idle)
    assert til.priced_step(lone)["host_ms"] < 0.5 * lone.host_ms


@pytest.mark.parametrize("run", til.RUNS, ids=lambda r: r.label)
def test_runs_point_at_committed_rows(run):
    for row in run.rows:
        measured, predicted = til.committed(row)
        assert measured > 0 and predicted > 0


def test_piecewise_contrast_is_gpu_bound_with_a_smaller_host():
    # 1.2.0rc6.post2 with piecewise context graphs: the lone 1k step's host (21.9 ms) is under its device span and
    # under the eager 1.3.0rc10 step's 58.4 ms host
    lone = next(s for s in til.PIECEWISE_STEPS if s.after_idle)
    eager = next(s for s in til.STEPS if s.after_idle)
    assert til.bound(lone.host_ms, lone.device_ms) == "GPU" and lone.host_ms < 0.5 * eager.host_ms
