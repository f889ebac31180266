"""The published-measurement table (benchmarks/data/e2e_reference.csv) is complete and sourced, and whatif's
end-to-end error on it does not get worse than when it was pinned. The whole benchmark runs in seconds
(the rate curves are short simulations), so every row is scored here."""

import pytest

from whatif.roofline.engines import check_engine
from whatif.simulator.length_profiles import LENGTH_PROFILES
from tests.benchmark_module import load_benchmark

bench = load_benchmark("e2e_reference")

# Pinned from `python benchmarks/e2e_reference.py` (86 rows). When the engine specs landed: MAPE 16.9%, median
# 11.0%, 47% within 10%, 88% within 25%; with version profiles (TensorRT-LLM v0.5-0.7: pre-XQA GQA decode; vLLM
# before 0.12: CPU step between GPU steps) and the server front end on rows measured through HTTP: MAPE 13.2%,
# median 9.9%, 50% within 10%, 91% within 25%; with the engine specs' custom all-reduce limits capping the
# collective fits (trtllm-0.6: NCCL only; TensorRT-LLM 1.0: 16 MB at tp <= 2, 8 MB above): MAPE 13.2%, median
# 9.9%, 50% within 10%, 91% within 25%; with 16-bit hidden states under fp8 GEMMs (the residual stream, norms and
# TP all-reduces stay bf16 in vLLM and TensorRT-LLM; a physics fix that exposes pessimism elsewhere, taken
# although it costs the table a little): MAPE 13.3%, median 10.3%, 49% within 10%, 88% within 25%; with fp8
# scenarios' attention priced by the fitted kernel models (they had silently fallen back to the per-class
# model): MAPE 13.0%, median 10.3%, 49% within 10%, 91% within 25%; with TensorRT-LLM's decode priced by the
# kernel it runs (XQA for GQA groups of 2-32 heads, with Hopper fp8's 8-head tiles; the masked MHA kernel for a
# multi-head model or a pre-XQA version, each fitted on its own corpus rows): MAPE 11.8%, median 7.8%, 62% within
# 10%, 90% -> 89% within 25% (one row, trtllm-0.6 Llama-2-70B TP4, moved from -21.5% to -26.1% under the MMHA
# fit; taken for the rest); with the TensorRT-LLM perf-overview rows run as trtllm-bench runs them (its
# dataset-derived max_batch_size / max_num_tokens, CUDA graphs padded to that limit, and the KV fraction 0.95 the
# page says it uses "in many cases"): MAPE 11.2%, median 5.8%, 64% within 10%, 90% within 25%; with a mixed
# step's attention timed as its prefill and decode kernels (the rate curves): MAPE 11.0%; with TensorRT-LLM
# v0.5-0.7 engines run at the batch they are given (CUDA graphs were opt-in there: no padding to a captured
# size): MAPE 10.9%, median 5.8%, 64% within 10%, 90% within 25%; with fp8 GEMM inputs quantized where the engine's
# producer kernel writes them (TensorRT engines: every GEMM; TensorRT-LLM's PyTorch flow: o_proj) and NIM 1.8 run as
# the TensorRT engines it ships: MAPE 10.1%, median 5.2%, 73% within 10%, 92% within 25%; with TensorRT-LLM's
# attention operator doing RoPE and the KV append itself (not charged again as separate ops): MAPE 9.97%, median
# 5.2%, 73% within 10%, 90% within 25% (two trt05 TTFT rows moved past -25%); with the NIM curve's four points
# past saturation (c100-c250, 94 rows): MAPE 9.87%, median 5.2%, 73% within 10%, 89% within 25%; with the sweeps
# run by the simulator's own closed loop (`--concurrency`: all clients start together at t = 0, where the
# benchmark's stand-in had spread them over nanoseconds; NIM c5 TTFT -9.9 -> -0.4%, c25 +17.2 -> +20.5%: a
# closed loop of identical requests is that sensitive to its start): MAPE 9.66%, median 5.1%, 73% within 10%, 89%
# within 25%. With 16 open-loop rows of SGLang v0.3.0 (ShareGPT at 4 and 8 req/s on one A100 and four H100s, 110
# rows; the 94 above unchanged): MAPE 10.2%, median 5.7%, 67% within 10%, 90% within 25%. With the eager passes
# of SGLang and vLLM V0 charged their measured host time per op (engine kernels.eager_launch_s, from the corpus's
# eager custom all-reduce; SGLang 70B TP4 TTFT -25/-26% -> -2/-5%): MAPE 9.61%, median 5.5%, 70% within 10%, 91%
# within 25%. With SGLang v0.3.0's two offline runs of the same README (5000 ShareGPT requests sent at once, output
# tok/s; 8B -2.9%, 70B +22.0%; 112 rows): MAPE 9.66%, median 5.5%, 69.6% within 10%, 91% within 25%. A change may
# improve these, not worsen them by more than rounding. With vLLM v0.6.0's 18 figures of the same README
# (--num-scheduler-steps 10, simulated as multi-step scheduling; 8B on an A100 within 3-12% but TTFT at 8 req/s
# -23%, 70B on four H100s 13-37% fast as SGLang's 70B rows there; 130 rows): MAPE 10.3%, median 6.1%, 66% within
# 10%, 91% within 25%. With the GEMM fit's own efficiency for 32-row tiles (bf16 m = 17..32 had been 10-13% fast
# on A100): MAPE 10.28%, median 6.1%, 66% within 10%, 91% within 25% (vLLM v0.6.0's 8B curve at 8 req/s moves to
# within 0.3% but TTFT -14%; SGLang's 8B, run with torch.compile, +8-10% at 8 req/s).
# With every other dense-Llama figure of the TensorRT-LLM perf-overview page (Llama-3.3-70B and 405B on H200,
# B200 and GB200; 60 rows, taken by a rule set before they were scored; 190 rows) and NVFP4 GEMM fits, which the
# B200 FP4 rows showed missing (the per-class model had them 15-58% fast; with a first fit, 2-30% slow, because
# TensorRT-LLM's NVFP4 fit was 30-66% slow on the corpus's own wide GEMMs at m = 65..1024; with the fitter choosing
# the narrowest N tile a library offers from its rows, that fit keeps 256-wide tiles only and its corpus error
# falls 0.129 -> 0.036, every other block unchanged): MAPE 8.59%, median 5.1%, 73% within 10%, 94% within 25%.
# With SGLang's and vLLM V0's eager host time per op taken from the hosts of the GPU's own generation (the corpus's
# A100 hosts: 41.4 / 44.7 us against the H100 hosts' 31 / 22; B200 hosts 29.3 / 21.5), a physics refinement taken
# although it costs the table a little (the four 8B A100 curves' TTFT and TPOT 0.5-3.5 points higher, vLLM's TTFT
# at 8 req/s -13.7 -> -15.7%): MAPE 8.69%, median 5.1%, 72.6% within 10%, 93% within 25%. With GB200's memory as
# its driver reports it (189,471 MiB, where the datasheet's 186 GB had been taken): MAPE 8.65%, median 4.95%.
# With the closed loop's clients on the clock (each request through a one-at-a-time front end, now 1.5 us per
# prompt token where 10 was assumed) the table got worse, MAPE 8.65% -> 9.92%, median 4.95% -> 5.09%: the NIM
# 1.8 70B TP2 sweep at 5000/500 tokens (TTFT at 5 and 25 clients 0.4% / 21% high before, 35% / 81% high now).
# Its clients finish one decode step apart, so each prompt reaches the engine while the previous one's
# 5000-token prefill step runs and waits for it; the old loop queued every request at t = 0 and admitted those
# freed in one step together, which matched this sweep but is not how a client-driven server sees them (the
# aiconfigurator serving set's TTFT: 58% -> 53% MAPE with both changes). With an overlapped engine forming each
# step while the last one runs (a request arriving meanwhile joins the step after next): 9.92% -> 9.65%.
# With TensorRT-LLM's all-reduce fused with the residual, the next RMSNorm and its quantize for Llama > 4096 (PyTorch
# flow's LlamaDecoderLayer), charged its epilogue's HBM pass and only within the custom kernel's workspace (larger
# all-reduces run NCCL and the ops after it unfused): 9.65% -> 9.76%, median 5.2%, the 70B TP2 H100 rows 1-7 points
# higher (the fused kernel's own cost beyond its bytes is not measured here). Dropping the kernels outright, as
# first landed, had taken the table to 11.8% (405B +8-32%). With vLLM's bf16 fused-MoE fit in two regimes (decode
# apart), the one MoE row, vLLM nightly Mixtral-8x7B TP2 latency on H200, +0.3% -> -5.4%: 9.78%, median 5.37%.
# With NVFP4 attention run fp8 over the fp8 cache, not priced at the fp4 peak (Precision.attention_dtype; only
# the 40 B200/GB200 FP4 rows move: MAPE 5.21 -> 5.09%, median 4.25 -> 3.85%, within 10% 35 -> 34): 9.75%,
# median 5.55% (rows moved across the table's median), 71.1% within 10%; as the pinned test computes it, 5.577%.
# With TensorRT-LLM's fp8 GEMM inputs scaled by the checkpoint's static scale (the corpus's rows time the dynamic
# quantizer) and its NVFP4 GEMMs priced by a tuned kernel (vLLM's fit; its rows time the autotuner's fallback
# tactic), session 52 (aiconfigurator serving set, Llama-3.1-70B TensorRT-LLM B200 TPOT 16.7% -> 8.1%), this table
# got worse: 9.75% -> 10.02%, median 5.58% -> 6.52%, 71.1% -> 69.5% within 10%; the trtllm-bench max-throughput
# rows read x0.99 -> x1.03 (signed median); previous 130 rows 12.09%, median 7.69%, 62.3% within 10%; earlier 94
# rows 11.92%, 69.1%; page rows 4.9% -> 5.52%, 85% within 10%.
PINNED = {"mape": 0.1005, "median_abs": 0.0655, "within_10": 0.69, "within_25": 0.91}
# The 130 rows before the page's other figures (the last stop's table: 10.28%, 66%; with the A100 hosts' eager
# time 10.42%, 65.4%; with the closed loop above 12.27%, 63.1%; a step ahead 11.87%; session 53: 12.11%, worse by
# 0.01 point after its merges; which change moved it was not isolated).
PINNED_PREVIOUS_ROWS = {"mape": 0.1215, "median_abs": 0.077, "within_10": 0.62, "within_25": 0.87}
# The rows before the open-loop ones, on their own (94 rows), so that new rows cannot hide a regression. Session 65
# M (fused-MoE fits time their top-k and activation, no longer charged again) moved one row, vLLM Mixtral-8x7B TP2
# latency on H200, -6.1% -> -7.5%: 11.95% -> 11.96% (worse).
PINNED_EARLIER_ROWS = {"mape": 0.1197, "within_10": 0.69}
# The page's 60 added figures: H200 (20, a GPU the kernel corpus does not hold: MAPE 4.3%, 90% within 10%),
# B200 and GB200 at FP4 (40: MAPE 5.1%, 88% within 10%; GB200, also outside the corpus, runs B200's fits).
# With NVFP4 attention at fp8 (above): the 60 rows' MAPE 4.92 -> 4.84%, within 10% 53 -> 52 of 60.
PINNED_PAGE_ROWS = {"mape": 0.0555, "within_10": 0.85}


def page_completion(row: dict) -> bool:
    """A perf-overview figure added with the rule 'every dense-Llama figure on a GPU whatif profiles'."""
    return row["id"].startswith("trt10-") and (row["hardware"] in ("b200", "gb200") or
                                               (row["hardware"] == "h200-sxm" and row["model"] != "llama-3.1-8b"))


@pytest.fixture(scope="module")
def rows():
    return bench.load_rows()


@pytest.fixture(scope="module")
def scored(rows):
    return bench.score(rows)


def test_table_has_the_rows_the_issue_asks_for(rows):
    assert len(rows) >= 40
    assert len({r["id"] for r in rows}) == len(rows)
    regimes = {r["regime"] for r in rows}
    assert {"batch1_latency", "fixed_batch", "max_throughput", "rate_curve", "rate_poisson"} <= regimes
    assert {"ttft_ms", "itl_ms", "output_tok_s"} <= {r["metric"] for r in rows}
    for r in rows:
        assert r["source"].startswith("https://") and r["figure"], r["id"]
        assert float(r["measured"]) > 0 and int(r["gpus"]) >= int(r["tp"]) >= 1, r["id"]
        assert r["engine"] in ("vllm", "sglang", "trtllm"), r["id"]
        assert check_engine(r["engine_profile"]) == r["engine"], r["id"]   # a version profile of its engine
        assert r["measured_via"] in ("server", "offline"), r["id"]
        assert r["harness"] in bench.HARNESSES, r["id"]
        assert r["harness"] != "trtllm-bench" or (r["engine"] == "trtllm" and r["measured_via"] == "offline"), r["id"]
        assert r["regime"] != "rate_curve" or int(r["concurrency"]) >= 1, r["id"]
        if r["regime"] == "rate_poisson":   # an open loop: a rate, a request count, a built-in length profile
            assert float(r["rate_req_s"]) > 0 and int(r["requests"]) >= 1, r["id"]
            assert r["lengths"] in LENGTH_PROFILES, r["id"]
            assert r["metric"] == "output_tok_s" or "median" in r["figure"].lower(), r["id"]
            assert r["metric"] != "output_tok_s" or r["rate_req_s"] == "inf", r["id"]   # a run sent at once
        for setting in ("chunked_prefill", "scheduler_steps", "max_num_batched_tokens"):   # a stated setting
            assert not r[setting] or setting in r["notes"], (r["id"], setting)             # says why
        bench.engine_options(r)
    # a latency-vs-load curve: several load points of one setup
    curve = [r for r in rows if r["regime"] == "rate_curve" and r["metric"] == "ttft_ms"]
    assert len({(r["source"], r["concurrency"]) for r in curve}) >= 6


@pytest.mark.slow
def test_every_row_is_predicted(scored, rows):
    assert len(scored) == len(rows)
    assert all(s.predicted > 0 for s in scored)


@pytest.mark.slow
def test_error_is_no_worse_than_pinned(scored):
    st = bench.summary(scored)["all"]
    assert st["mape"] <= PINNED["mape"], st
    assert st["median_abs"] <= PINNED["median_abs"], st
    assert st["within_10"] >= PINNED["within_10"], st
    assert st["within_25"] >= PINNED["within_25"], st


@pytest.mark.slow
def test_previous_rows_are_no_worse_than_pinned(scored):
    st = bench.summary([s for s in scored if not page_completion(s.row)])["all"]
    assert st["n"] == 130
    assert st["mape"] <= PINNED_PREVIOUS_ROWS["mape"], st
    assert st["median_abs"] <= PINNED_PREVIOUS_ROWS["median_abs"], st
    assert st["within_10"] >= PINNED_PREVIOUS_ROWS["within_10"], st
    assert st["within_25"] >= PINNED_PREVIOUS_ROWS["within_25"], st


@pytest.mark.slow
def test_earlier_rows_are_no_worse_than_pinned(scored):
    st = bench.summary([s for s in scored if s.row["regime"] != "rate_poisson" and not page_completion(s.row)])["all"]
    assert st["n"] == 94
    assert st["mape"] <= PINNED_EARLIER_ROWS["mape"], st
    assert st["within_10"] >= PINNED_EARLIER_ROWS["within_10"], st


@pytest.mark.slow
def test_page_completion_rows_are_no_worse_than_pinned(scored):
    st = bench.summary([s for s in scored if page_completion(s.row)])["all"]
    assert st["n"] == 60
    assert st["mape"] <= PINNED_PAGE_ROWS["mape"], st
    assert st["within_10"] >= PINNED_PAGE_ROWS["within_10"], st


@pytest.mark.slow
def test_open_loop_latency_grows_with_the_rate(scored):
    """Each open-loop setup's TPOT rises from 4 to 8 req/s (as measured): more arrivals, more prefill steps
    stalling the decodes, larger batches; so does its TTFT, except under multi-step scheduling, where a
    prompt's wait for the running decode iteration dominates it."""
    by = {}
    for s in scored:
        if s.row["regime"] == "rate_poisson" and s.row["rate_req_s"] != "inf":
            key = (s.row["engine_profile"], s.row["model"], s.row["metric"])
            by.setdefault(key, {})[float(s.row["rate_req_s"])] = s
    assert len(by) == 16
    for (engine, model, metric), points in by.items():
        assert points[8.0].measured > points[4.0].measured, (engine, model, metric)
        if metric == "tpot_ms" or (metric == "ttft_ms" and engine != "vllm-0.6"):
            assert points[8.0].predicted > points[4.0].predicted, (engine, model, metric)


@pytest.mark.slow
def test_closed_loop_ttft_grows_with_concurrency(scored):
    """The simulator's queueing shows up in the curve: at higher concurrency new requests wait behind
    other prefills, so TTFT rises (as measured) instead of staying at one prefill."""
    nim = sorted((int(s.row["concurrency"]), s.predicted) for s in scored
                 if s.row["id"].startswith("nim18") and s.row["regime"] == "rate_curve"
                 and s.row["metric"] == "ttft_ms")
    values = [p for _, p in nim]
    assert values == sorted(values) and values[-1] > 1.5 * values[0]


def test_front_end_is_paid_only_by_rows_measured_through_the_server(rows):
    server = {r["id"] for r in rows if bench.through_server(r)}
    assert server and all(i.startswith(("nim18", "wmx", "sgl030", "vllm060")) for i in server)   # genai-perf,
    # vllm bench serve, sglang.bench_serving
    row = next(r for r in rows if r["id"] == "nim18-llama-3.1-70b-h100-tp2-500-2000-c1-ttft_ms")
    est = bench.scenario(row).run(with_max_batch=False)
    front = est.engine_spec.frontend.seconds(500)
    assert front > 0 and est.served_ttft_s == pytest.approx(est.ttft_s + front)
    offline = dict(row, measured_via="offline")
    assert bench.predict_estimate(offline) < bench.predict_estimate(row)


# The 40 trtllm-bench rows through `simulate` as the harness ran them (the dataset's requests queued at once,
# in-flight batching): MAPE 4.35%, median 3.8%, 92.5% within 10% when it landed. With the page's other 60
# figures (100 rows): MAPE 4.76%, 91% within 10% (the 60: 5.0%, 90%). Session 52 (worse): 4.51%, 92.5%; all 100 5.25%,
# 87% (the 60: 5.74%, 83%): TensorRT-LLM's fp8 GEMMs with the checkpoint's static input scale and its NVFP4 GEMMs
# priced by a tuned kernel's fit run these max-throughput rows faster (median signed +1.9%), as in the e2e table.
CROSS_CHECK_PINNED = {"mape": 0.046, "within_10": 0.92}
CROSS_CHECK_ALL_PINNED = {"mape": 0.053, "within_10": 0.87}


@pytest.mark.slow
def test_the_simulator_reproduces_the_trtllm_bench_runs(rows):
    cross = bench.simulator_cross_check(rows)
    assert len(cross) == 100
    for scored, pin in (([s for s in cross if not page_completion(s.row)], CROSS_CHECK_PINNED),
                        (cross, CROSS_CHECK_ALL_PINNED)):
        st = bench.error_stats(scored)
        assert st["mape"] <= pin["mape"], st
        assert st["within_10"] >= pin["within_10"], st


def test_a_run_sent_at_once_is_simulated_with_every_request_arriving_together(rows):
    """`rate_req_s` inf (bench_serving --request-rate inf): all requests at t = 0, so the run's output tok/s is
    the engine's, above what the same requests spread over seconds by a Poisson rate give."""
    row = next(r for r in rows if r["rate_req_s"] == "inf" and r["model"] == "llama-3.1-8b")
    at_once = bench.simulate_poisson({**row, "requests": "40"})
    spread = bench.simulate_poisson({**row, "requests": "40", "rate_req_s": "4"})
    assert at_once["output_tok_s"] > 1.5 * spread["output_tok_s"] > 0
    assert at_once["ttft_ms"] > spread["ttft_ms"]   # queued behind each other
