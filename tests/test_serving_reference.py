"""benchmarks/serving_reference.py: the measured serving deployments (aiconfigurator's silicon set) through
`whatif simulate --concurrency`. The mapping rule's pieces, the stratified subset's coverage and error bounds in
the default run, the whole file in the slow run."""
import pytest

from tests.benchmark_module import load_benchmark

sr = load_benchmark("serving_reference")


def _row(**over) -> dict:
    row = {k: "" for k in ("prefill_tp_size", "prefill_pp_size", "prefill_attention_dp_size", "prefill_moe_tp_size",
                           "prefill_moe_ep_size", "prefill_num_workers", "decode_tp_size", "decode_pp_size",
                           "decode_attention_dp_size", "decode_moe_tp_size", "decode_moe_ep_size",
                           "decode_num_workers")}
    row.update(id="x", silicon_data_source="db; config_id=1; silicon_concurrency=16; measured=x",
               backend="trtllm", backend_version="1.2.0rc6", model_path="deepseek-ai/DeepSeek-R1",
               system="b200_sxm", mode="agg", isl="1024", osl="1024", gemm_quant_mode="fp8_block",
               moe_quant_mode="fp8_block", batch_size="16", tp_size="1", pp_size="1", attention_dp_size="8",
               moe_tp_size="1", moe_ep_size="8", silicon_ttft_ms="100", silicon_tpot_ms="10")
    row.update(over)
    return row


def test_the_rule_maps_attention_dp_ranks_into_tp_and_keeps_the_moe_layout():
    kw = sr.simulate_kwargs(_row())
    assert (kw["tp"], kw["attention_dp"], kw["ep"], kw["gpus"]) == (8, 8, 8, 8)
    assert "moe_tp" not in kw and "nodes" not in kw          # moe_tp = tp / ep: the default, not passed
    assert kw["quantization"] == "fp8-block" and kw["kv_dtype"] == "fp8" and "expert_quantization" not in kw
    assert kw["traffic"]["concurrency"] == 16
    assert kw["traffic"]["requests"] == 16 * sr.SIM_ROUNDS                 # from the opening burst on


def test_the_rule_spans_nodes_and_drops_a_dense_rows_moe_fields():
    kw = sr.simulate_kwargs(_row(tp_size="16", attention_dp_size="1", moe_tp_size="2", moe_ep_size="8",
                                 moe_quant_mode="nvfp4", gemm_quant_mode="fp8"))
    assert (kw["tp"], kw["nodes"], kw["ep"], kw["expert_quantization"]) == (16, 2, 8, "nvfp4")
    assert "moe_tp" not in kw                                   # ep x moe_tp = tp: moe_tp is the default tp / ep
    dense = sr.simulate_kwargs(_row(model_path="Qwen/Qwen3-32B", tp_size="4", attention_dp_size="",
                                    moe_tp_size="1", moe_ep_size="0", gemm_quant_mode="", moe_quant_mode=""))
    assert dense["tp"] == 4 and not {"ep", "moe_tp", "attention_dp", "quantization", "kv_dtype"} & set(dense)


def test_a_disaggregated_row_maps_both_pools_and_spans_their_nodes():
    kw = sr.simulate_kwargs(_row(mode="disagg", tp_size="", attention_dp_size="", moe_ep_size="", moe_tp_size="",
                                 prefill_num_workers="3", prefill_tp_size="4", prefill_pp_size="1",
                                 prefill_attention_dp_size="1", prefill_moe_ep_size="4", prefill_moe_tp_size="1",
                                 decode_num_workers="1", decode_tp_size="1", decode_pp_size="1",
                                 decode_attention_dp_size="8", decode_moe_ep_size="8", decode_moe_tp_size="1"))
    assert (kw["tp"], kw["attention_dp"], kw["ep"], kw["gpus"], kw["nodes"]) == (8, 8, 8, 8, 3)   # 3 x 4 + 8 GPUs
    assert kw["cluster"] == {"prefill_replicas": 3, "replicas": 1, "prefill_tp": 4, "prefill_pp": 1}
    assert kw["prefill_layout"] == {"tp": 4, "pp": 1, "ep": 4}


def test_the_aiperf_mean_counts_the_opening_burst_and_the_drain_as_one_round_in_fifty():
    # aiperf drains its warm-up, so its 50N profiled requests open with a burst of N and close with a drain;
    # the middle 44 rounds repeat the last two simulated before the drain
    per_round = [10.0, 2.0, 1.5, 1.0, 1.0, 0.5]
    assert sr.profile_means(per_round) == pytest.approx((10 + 2 + 1.5 + 1 + 1 + 44 * 1.0 + 0.5) / 50)
    assert sr.profile_means([4.0] * 6) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="4 to 50"):
        sr.profile_means([1.0, 1.0, 1.0])
    assert sr.main(["--rounds", "2"]) == 2


def test_sglang_launches_its_prefill_batches_apart_from_the_decodes():
    kw = sr.simulate_kwargs(_row(backend="sglang", isl="1024"))
    assert kw["max_num_batched_tokens"] == 1024 + 1500 and "engine" not in kw   # the spec's prefill-first steps
    assert sr.simulate_kwargs(_row(backend="sglang", isl="8192"))["max_num_batched_tokens"] == sr.SGLANG_CHUNK


def _round_ttfts(res, n):
    recs = sorted(res.records, key=lambda r: r.request.id)
    return [sum(r.ttft_s for r in recs[k:k + n]) / n for k in range(0, len(recs), n)]


def test_prefill_batches_apart_keep_a_closed_loop_in_lockstep_and_mixed_chunks_spread_it():
    """Why SGLang's rows read a burst's TTFT at every round: prefill-only batches start a wave's decodes on one
    step, so the wave ends together and the next one arrives as a burst; chunks mixed into decode steps start
    the early ones decoding first, and the loop spreads after the first wave."""
    from whatif.api import simulate
    base = dict(model="meta-llama/Llama-3.1-8B", hardware="dgx-h100", gpus=1, tp=1, prompt=2048, output=32,
                kernel_engine="sglang", max_num_seqs=32, traffic={"concurrency": 32, "requests": 96, "seed": 1})
    apart = _round_ttfts(simulate(**base, max_num_batched_tokens=4096), 32)
    mixed = _round_ttfts(simulate(**base, max_num_batched_tokens=4096 + 32, engine={"chunked_prefill": True}), 32)
    assert min(apart[1:]) > 0.8 * apart[0]          # every wave a burst
    assert mixed[2] < 0.5 * mixed[0]                 # spread after the first wave


def test_a_row_whatif_cannot_express_is_recorded_with_its_one_line_reason():
    res = sr.run_row(_row(model_path="nobody/no-such-model-9b", attention_dp_size="1", tp_size="1",
                          moe_ep_size="1"))
    assert not res.expressible and "no-such-model-9b" in res.reason and "\n" not in res.reason
    res = sr.run_row(_row(silicon_data_source="db; config_id=1"))
    assert not res.expressible and res.reason == "no silicon_concurrency=N in silicon_data_source"


def test_the_subset_is_deterministic_and_stratified():
    rows = sr.load()
    sub = sr.subset(rows)
    assert sub == sr.subset(list(reversed(rows)))
    strata = {(r["backend"], r["model_path"], r["system"], r["mode"]) for r in rows}
    assert {(r["backend"], r["model_path"], r["system"], r["mode"]) for r in sub} == strata
    assert len(sub) <= sr.PER_STRATUM * len(strata)


def test_the_subset_runs_and_stays_within_its_bounds():
    results = sr.run_all(sr.subset(sr.load()))
    assert not [r.reason for r in results if r.reason.startswith("internal error")]
    ok = [r for r in results if r.expressible]
    assert len(ok) >= 64                                      # coverage only grows
    assert {"trtllm", "vllm"} <= {r.row["backend"] for r in ok}
    ttft, tpot = sr.stats(ok, "ttft"), sr.stats(ok, "tpot")
    # (64 rows: TTFT 1,793% MAPE from TRT-LLM DeepSeek NVFP4 rows predicted 100x+ high, median 48.5%, 18 off by
    # 3x; TPOT 23.2%; before SGLang's prefill batches apart and aiperf's drained warm-up: 1,810%, 60.4%, 24;
    # 24.0%): pinned where they are, the targets are not met
    assert ttft["mape"] < 1900 and ttft["median_ape"] < 53 and ttft["off3x"] <= 20, ttft
    assert tpot["mape"] < 25, tpot


@pytest.mark.slow
def test_the_whole_file():
    results = sr.run_all(sr.load(), jobs=2)
    assert not [r.reason for r in results if r.reason.startswith("internal error")]
    ok = [r for r in results if r.expressible]
    assert len(ok) >= 2423
    ttft, tpot = sr.stats(ok, "ttft"), sr.stats(ok, "tpot")
    assert ttft["mape"] < 115 and ttft["median_ape"] < 42 and ttft["off3x"] <= 370, ttft   # (2,423: 108.3%, 39.0%, 351)
    assert tpot["mape"] < 23.5, tpot                             # (21.9%; 22.6% before the drained warm-up)
