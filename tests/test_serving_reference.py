"""benchmarks/serving_reference.py: the measured serving deployments (aiconfigurator's silicon set) through
`whatif simulate --concurrency`. The mapping rule's pieces, the stratified subset's coverage and error bounds in
the default run, the whole file in the slow run."""
import csv
import re
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
    assert kw["cluster"] == {"prefill_replicas": 3, "replicas": 1, "prefill_tp": 4, "prefill_pp": 1,
                             "prefill_ep": 4, "prefill_dp_attention": False, "prefill_max_batch": 1,
                             "prefill_token_budget": 2528}   # 1024 + 1500 rounded up to 32 (TensorRT-LLM)


def _disagg(**over) -> dict:
    base = dict(mode="disagg", tp_size="", attention_dp_size="", moe_ep_size="", moe_tp_size="", batch_size="",
                prefill_num_workers="1", prefill_tp_size="1", prefill_pp_size="1", prefill_attention_dp_size="8",
                prefill_moe_ep_size="1", prefill_moe_tp_size="8", decode_num_workers="2", decode_tp_size="1",
                decode_pp_size="1", decode_attention_dp_size="8", decode_moe_ep_size="8", decode_moe_tp_size="1",
                decode_batch_size="16", silicon_data_source="db; silicon_concurrency=256; x")
    return _row(**{**base, **over})


def test_a_disaggregated_prefill_pool_never_inherits_the_decode_pools_ep_or_attention_dp():
    """Prefill TP8 under attention-DP with each expert split 8 ways (ep 1) beside a decode pool of EP8: every
    prefill field is given, so ClusterConfig's defaults (the decode pool's EP) never apply."""
    kw = sr.simulate_kwargs(_disagg())
    assert kw["cluster"] == {"prefill_replicas": 1, "prefill_tp": 8, "prefill_pp": 1, "prefill_ep": 1,
                             "prefill_dp_attention": True, "prefill_max_batch": 1, "prefill_token_budget": 2528,
                             "replicas": 2}
    assert (kw["tp"], kw["ep"], kw["attention_dp"], kw["nodes"]) == (8, 8, 8, 3)
    kw = sr.simulate_kwargs(_disagg(prefill_attention_dp_size="1", prefill_tp_size="8", prefill_moe_tp_size="1",
                                    prefill_moe_ep_size="8"))
    assert (kw["cluster"]["prefill_ep"], kw["cluster"]["prefill_dp_attention"]) == (8, False)
    with pytest.raises(sr.NotExpressible, match="attention-DP of 2 ranks over a TP group of 8"):
        sr.simulate_kwargs(_disagg(prefill_tp_size="4", prefill_attention_dp_size="2"))


def test_a_disaggregated_rows_max_batch_is_its_decode_batch_per_rank():
    """decode_batch_size is per attention-DP rank (concurrency = workers x batch x ranks in the set): TensorRT-LLM
    limits each rank, SGLang the whole group (x the ranks)."""
    assert sr.simulate_kwargs(_disagg())["max_num_seqs"] == 16
    assert sr.simulate_kwargs(_disagg(backend="sglang"))["max_num_seqs"] == 128
    assert sr.simulate_kwargs(_disagg(decode_batch_size=""))["max_num_seqs"] == 256   # none recorded: N


def test_a_disaggregated_rows_prefill_pool_runs_the_generators_prefill_limits():
    """benchmark/{trtllm,vllm,sglang}.rule: prefill max_batch_size = prefill_batch_size (default 1), max_num_tokens
    ISL + 1500; per attention-DP rank, so x the ranks for SGLang, whose limits are the group's."""
    def limits(**over):
        c = sr.simulate_kwargs(_disagg(**over))["cluster"]
        return c["prefill_max_batch"], c["prefill_token_budget"]
    assert limits(prefill_batch_size="2") == (2, 2528)
    assert limits(backend="vllm", isl="8192") == (1, 9692)
    assert limits(backend="sglang", isl="8192") == (8, 8192)   # 1 per rank x 8 ranks; within its 8192 chunk


def test_a_disaggregated_row_without_worker_counts_says_why():
    with pytest.raises(sr.NotExpressible, match="no prefill_num_workers / decode_num_workers"):
        sr.simulate_kwargs(_disagg(prefill_num_workers="", decode_num_workers=""))
    # 92 of the 393 such rows repeat a db-dump row that records the counts: scored once, there
    rows = [r for r in sr.load() if r["mode"] == "disagg" and not r["prefill_num_workers"]]
    repeats = [r for r in rows if sr.repeated_measurement(r)]
    assert (len(rows), len(repeats)) == (393, 92)
    with pytest.raises(sr.NotExpressible, match="repeats a db-dump row"):
        sr.simulate_kwargs(repeats[0])


PINNED_DISAGG, NO_ENTRY_DISAGG = 100, 159   # of the 301: TensorRT-LLM B200 fp8 52, NVFP4 32, H100 16; SGLang's 159


def test_an_inferencex_disaggregated_row_without_worker_counts_takes_its_search_space_entry(monkeypatch):
    """nvidia-master.yaml's dsr1-*-dynamo-trt entries (inferencex_disagg_launch): workers, layouts, MTP and the decode
    batch of the one entry at the row's image, lengths, N and TP; an MTP and a non-MTP entry at one N stay unscored.
    The mapping is off by default (INFERENCEX_DISAGG_MAPPED): then every such row stays unscored."""
    rows0 = {r["id"]: r for r in sr.load()}
    with pytest.raises(sr.NotExpressible, match="INFERENCEX_DISAGG_MAPPED"):
        sr.simulate_kwargs(rows0["2026_03_25_deepseek_r1_b200_sxm_trtllm_fp8_disagg_1024x1024_c1600_tp8_0_ep8_0_355"])
    monkeypatch.setattr(sr, "INFERENCEX_DISAGG_MAPPED", True)
    rows = {r["id"]: r for r in sr.load()}
    kw = sr.simulate_kwargs(rows["2026_03_25_deepseek_r1_b200_sxm_trtllm_fp8_disagg_1024x1024_c1600_tp8_0_ep8_0_355"])
    assert (kw["tp"], kw["attention_dp"], kw["ep"], kw["techniques"], kw["max_num_seqs"]) == (8, 8, 8, ["mtp:k=2"], 768)
    assert (kw["cluster"]["replicas"], kw["cluster"]["prefill_replicas"], kw["cluster"]["prefill_ep"]) == (2, 1, 8)
    assert kw["nodes"] == 3 and sr.profile_rounds(rows[next(iter(rows))]) in (10, 50)
    pinned, unpinned = [], []
    for r in rows.values():
        if r["mode"] != "disagg" or r["prefill_num_workers"] or sr.repeated_measurement(r):
            continue
        try:
            sr.simulate_kwargs(r)
            pinned.append(r)
        except sr.NotExpressible as e:
            unpinned.append(str(e))
    assert len(pinned) == PINNED_DISAGG, len(pinned)
    assert {r["backend"] for r in pinned} == {"trtllm"}
    assert sum("the row does not say which" in e for e in unpinned) == len(unpinned) - NO_ENTRY_DISAGG
    h100 = next(r for r in pinned if r["system"] == "h100_sxm")
    assert sr.simulate_kwargs(h100)["tp"] == 16 and sr.profile_rounds(h100) == 10


def test_a_run_that_served_a_fixed_count_at_every_tp_size_is_not_scored():
    """Little's law on a closed loop: N x decode time / (TTFT + decode time) in service. One run whose rows at TP
    sizes 2x apart all hold the same count under N/2 was capped outside the deployment (its KV pool grew with TP)."""
    row = _row(silicon_data_source="src; silicon_concurrency=512; measured=d", osl="1025", silicon_tpot_ms="10",
               silicon_ttft_ms="41000", batch_size="512", attention_dp_size="1", moe_ep_size="1", tp_size="2")
    assert sr.served_concurrency(row) == pytest.approx(512 * 10.24 / (41 + 10.24))       # ~102 of 512
    flagged = [r for r in sr.load() if r["mode"] == "agg" and "silicon_concurrency=" in r["silicon_data_source"]
               and sr.capped_below_load(r)]
    assert len(flagged) == 9 and {r["model_path"] for r in flagged} == {"openai/gpt-oss-120b"}
    assert {r["system"] for r in flagged} == {"h100_sxm"} and {sr.concurrency(r) for r in flagged} == {512}
    with pytest.raises(sr.NotExpressible, match="clients in service .* a cap outside the deployment"):
        sr.simulate_kwargs(flagged[0])
    # a KV-bound run at one TP size (MiniMax-M2.5 fp8 on two B200s, ~110 of 256 in service) is still scored
    kv_bound = [r for r in sr.load()
                if r["id"].startswith("2026_03_25_minimax_m2_5_b200_sxm_vllm_fp8_agg_8192x1024_c256_tp2")]
    assert kv_bound and sr.served_concurrency(kv_bound[0]) < 128 and not sr.capped_below_load(kv_bound[0])


def test_an_aggregated_rows_max_batch_is_the_concurrency_per_rank():
    """batch_size = N / ranks in most sources; the 1.3.0rc gap-analysis files record N / GPUs, not a launch limit."""
    assert sr.simulate_kwargs(_row())["max_num_seqs"] == 16                          # batch 16 at 16 clients
    assert sr.simulate_kwargs(_row(batch_size="2"))["max_num_seqs"] == 2              # 16 clients over 8 ranks
    assert sr.simulate_kwargs(_row(attention_dp_size="1", tp_size="4", moe_ep_size="4",
                                   batch_size="4"))["max_num_seqs"] == 16             # N / GPUs recorded: N
    kw = sr.simulate_kwargs(_row(model_path="nvidia/Qwen3-32B-NVFP4", tp_size="2", attention_dp_size="1",
                                 moe_ep_size="0", batch_size="13", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4",
                                 silicon_data_source="x; silicon_concurrency=416; y"))
    assert (kw["max_num_seqs"], kw["cluster"], kw["nodes"]) == (26, {"replicas": 16}, 4)   # 13 per GPU, 32 GPUs
    with pytest.raises(sr.NotExpressible, match="does not divide"):
        sr.simulate_kwargs(_row(attention_dp_size="1", tp_size="4", moe_ep_size="4", batch_size="3"))


def test_gpt_oss_fp4_on_hopper_runs_its_mxfp4_checkpoint_weight_only():
    row = dict(model_path="openai/gpt-oss-120b", backend="vllm", tp_size="2", attention_dp_size="1",
               moe_tp_size="1", moe_ep_size="1", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4")
    assert sr.simulate_kwargs(_row(system="h100_sxm", **row))["quantization"] == "mxfp4"
    assert sr.simulate_kwargs(_row(**row))["quantization"] == "nvfp4"                 # B200: fp4 tensor cores
    assert sr.simulate_kwargs(_row(system="h100_sxm", **{**row, "model_path": "nvidia/DeepSeek-R1-NVFP4",
                                                         "moe_ep_size": "2"}))["quantization"] == "nvfp4"


def test_the_aiperf_mean_counts_the_opening_burst_and_the_drain_as_one_round_in_fifty():
    # aiperf drains its warm-up, so its 50N profiled requests open with a burst of N and close with a drain;
    # the middle 44 rounds repeat the last two simulated before the drain
    per_round = [10.0, 2.0, 1.5, 1.0, 1.0, 0.5]
    assert sr.profile_means(per_round) == pytest.approx((10 + 2 + 1.5 + 1 + 1 + 44 * 1.0 + 0.5) / 50)
    assert sr.profile_means([4.0] * 6) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="4 to 50"):
        sr.profile_means([1.0, 1.0, 1.0])
    assert sr.main(["--rounds", "2"]) == 2


def test_a_disaggregated_db_dump_row_is_averaged_as_sa_bench_measures_it():
    # srt-slurm's sa-bench: a finished 2N warm-up, then 10N requests: the opening burst weighs one round in ten
    assert sr.profile_rounds(_disagg(silicon_data_source="db-dump/2026-04-27; silicon_concurrency=16")) == 10
    assert sr.profile_rounds(_disagg(silicon_data_source="source_file=x.csv; silicon_concurrency=16")) == 50
    # an aggregated db-dump row is InferenceX's single-node run: its own client, also 10 rounds
    assert sr.profile_rounds(_row(silicon_data_source="db-dump/2026-04-27; silicon_concurrency=16")) == 10
    assert sr.profile_rounds(_row(silicon_data_source="aiperf; silicon_concurrency=16")) == 50
    per_round = [10.0, 2.0, 1.5, 1.0, 1.0, 0.5]
    assert sr.profile_means(per_round, 10) == pytest.approx((10 + 2 + 1.5 + 1 + 1 + 4 * 1.0 + 0.5) / 10)


def test_the_gap_analysis_campaign_without_job_ids_takes_the_eval_pipelines_10_rounds_only_when_mapped(monkeypatch):
    # aiconfigurator's eval pipeline (genai_perf_runner.py): --request-count 10N after 2N warm-ups; off by default
    src = ("source_file=/Users/x/aic-auto-gap-analysis/data/h100_sxm/trtllm/1.0.0rc3/meta-llama_Llama-3.1-8B-Instruct"
           ".csv; silicon_concurrency=8")
    job = ("source_file=/Users/x/aic-auto-gap-analysis/data/h100_sxm/trtllm/1.2.0rc6.post1/qwen3_32b.csv; "
           "gtl_job_id=1; silicon_concurrency=8")
    assert sr.profile_rounds(_row(silicon_data_source=src)) == 50
    monkeypatch.setattr(sr, "AIC_EVAL_CLIENT_MAPPED", True)
    assert sr.profile_rounds(_row(silicon_data_source=src)) == 10
    assert sr.profile_rounds(_row(silicon_data_source=job)) == 50          # the job-based runs: aiperf's 50N
    assert sr.profile_rounds(_row(silicon_data_source="aiperf; silicon_concurrency=16")) == 50


def test_sglang_launches_its_prefill_batches_apart_from_the_decodes():
    kw = sr.simulate_kwargs(_row(backend="sglang", isl="1024"))
    assert kw["max_num_batched_tokens"] == 1024 + 1500 and "engine" not in kw   # the spec's prefill-first steps
    assert sr.simulate_kwargs(_row(backend="sglang", isl="8192"))["max_num_batched_tokens"] == sr.SGLANG_CHUNK


def _inferencex_sglang_row(n: int, measured: str = "2026-03-25", **over) -> dict:
    src = f"db-dump/2026-04-27; config_id=202; silicon_concurrency={n}; measured={measured}T00:00:00.000Z"
    fields = dict(silicon_data_source=src, backend="sglang", tp_size="8", attention_dp_size="1", moe_tp_size="1",
                  moe_ep_size="8", batch_size=str(n), gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4")
    return _row(**{**fields, **over})


def test_inferencex_sglang_deepseek_rows_launch_with_their_recipes_prefill_budget_and_memory_fraction():
    """dsr1_fp4_b200.sh: --chunked-prefill-size 16384, --mem-fraction-static 0.85; dsr1_fp8_b200.sh: 32768 and 0.82
    at TP8, 8192 and 0.95 at TP4. Rows of the generator's launches keep its ISL + 1500 and SGLang's own fraction."""
    kw = sr.simulate_kwargs(_inferencex_sglang_row(16))
    assert (kw["max_num_batched_tokens"], kw["memory_utilization"]) == (16384, 0.85)
    kw = sr.simulate_kwargs(_inferencex_sglang_row(16, gemm_quant_mode="fp8", moe_quant_mode="fp8_block"))
    assert (kw["max_num_batched_tokens"], kw["memory_utilization"]) == (32768, 0.82)
    kw = sr.simulate_kwargs(_inferencex_sglang_row(16, tp_size="4", moe_ep_size="1", isl="8192",
                                                   gemm_quant_mode="fp8", moe_quant_mode="fp8_block"))
    assert (kw["max_num_batched_tokens"], kw["memory_utilization"]) == (8192, 0.95)
    generator = _inferencex_sglang_row(16, silicon_data_source="aic; silicon_concurrency=16")
    kw = sr.simulate_kwargs(generator)   # SGLang's own fraction (session 53: sglang_default_mem_fraction)
    assert kw["max_num_batched_tokens"] == 1024 + 1500
    assert kw["memory_utilization"] == sr.sglang_default_mem_fraction(generator, kw["max_num_seqs"]) is not None


def test_inferencex_sglang_qwen35_and_glm5_rows_launch_with_their_recipes_prefill_budget_and_memory_fraction():
    """qwen3.5_bf16_b200.sh / qwen3.5_fp8_b200.sh (01fa35c): 32768 and 0.82; qwen3.5_fp4_b200.sh 16384 and 0.8;
    glm5_fp8_b200.sh 32768 and 0.85; glm5_fp4_b200.sh 32768 and 0.9, at any TP. A generator-launched row of the same
    model keeps ISL + 1500 and SGLang's own fraction; the cold-server rule stays DeepSeek's."""
    def launch(model, gemm, tp="8", **over):
        kw = sr.simulate_kwargs(_inferencex_sglang_row(16, model_path=model, gemm_quant_mode=gemm,
                                                       moe_quant_mode=gemm, tp_size=tp, moe_ep_size="1", **over))
        return kw["max_num_batched_tokens"], kw.get("memory_utilization")
    qwen, glm = "Qwen/Qwen3.5-397B-A17B", "zhipuai/GLM-5"
    assert launch(qwen, "") == launch(qwen, "fp8", tp="4") == (32768, 0.82)
    assert launch(qwen, "nvfp4", tp="4") == (16384, 0.8)
    assert launch(glm, "fp8") == (32768, 0.85) and launch(glm, "nvfp4") == (32768, 0.9)
    generator = launch(qwen, "fp8", silicon_data_source="aic; silicon_concurrency=16")   # SGLang's own fraction
    assert generator[0] == 1024 + 1500 and generator[1] is not None and generator[1] not in (0.82, 0.85)
    assert not sr.cold_server(_inferencex_sglang_row(64, measured="2025-11-10", model_path=qwen,
                                                     gemm_quant_mode="", moe_quant_mode=""))


def test_a_cold_server_run_whose_burst_crossed_the_recipes_chunk_is_not_scored():
    """InferenceX's client had no warm-up before PR #480 (2026-01): a burst over the recipe's chunked-prefill size ran
    the cold server's first chunked prefill, whose FlashInfer kernels were fetched at first use (sglang#10933). The
    rule reads the date, the burst and the recipe, never the measured latency."""
    cold = _inferencex_sglang_row(32, measured="2025-11-10")                  # 32 x ~922 tokens > 16,384
    with pytest.raises(sr.NotExpressible, match="before InferenceX's client warmed the server up"):
        sr.simulate_kwargs(cold)
    assert not sr.cold_server(_inferencex_sglang_row(16, measured="2025-11-10"))   # ~14,746 tokens: one chunk
    assert not sr.cold_server(_inferencex_sglang_row(32))                          # measured after the warm-up
    assert not sr.cold_server(_inferencex_sglang_row(32, measured="2025-11-10", backend="trtllm"))
    flagged = [r for r in sr.load() if sr.cold_server(r)]
    assert len(flagged) == 61 and {(r["backend"], r["system"]) for r in flagged} == {("sglang", "b200_sxm")}
    assert all("deepseek" in r["model_path"].lower() for r in flagged)


def test_a_cold_run_on_a_symmetric_memory_recipe_is_not_scored_whatever_its_burst():
    """dsr1_fp4_b200.sh launches --enable-symm-mem, the FP8 recipes do not: before InferenceX's client warmed up
    (PR #480), an NVFP4 run's first prefills grew SGLang's symmetric-memory pool (a collective NCCL window
    registration per new segment, sglang#36943) inside the measured window. The rule reads the date and the recipe."""
    cold = _inferencex_sglang_row(4, measured="2025-11-10")                  # 4 x ~922 tokens: under the chunk
    assert not sr.cold_server(cold) and "--enable-symm-mem" in sr.cold_symmetric_pool(cold)
    with pytest.raises(sr.NotExpressible, match="symmetric-memory pool"):
        sr.simulate_kwargs(cold)
    assert not sr.cold_symmetric_pool(_inferencex_sglang_row(4))             # measured after the warm-up
    assert not sr.cold_symmetric_pool(_inferencex_sglang_row(4, measured="2025-11-18", gemm_quant_mode="fp8",
                                                              moe_quant_mode="fp8_block"))   # no symm-mem
    assert not sr.cold_symmetric_pool(_inferencex_sglang_row(4, measured="2025-11-10", backend="trtllm"))
    flagged = [r for r in sr.load() if sr.cold_symmetric_pool(r)]
    assert len(flagged) == 72 and len([r for r in flagged if not sr.cold_server(r)]) == 24
    assert {(r["gemm_quant_mode"], r["mode"]) for r in flagged} == {("nvfp4", "agg")}


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


def test_a_tp_ep_layout_recorded_as_moe_tp_times_moe_ep_runs_on_its_own_gpus():
    # "TP 8, EP 8" on one 8-GPU node, recorded as tp_size 64 = moe_tp_size 8 x moe_ep_size 8: the id names it
    named = dict(id="2026_04_06_deepseek_r1_b200_sxm_trtllm_fp8_agg_1024x1024_c4_tp8_ep8_940", tp_size="64",
                 attention_dp_size="1", moe_tp_size="8", moe_ep_size="8")
    kw = sr.simulate_kwargs(_row(**named))
    assert (kw["tp"], kw["ep"], kw["gpus"]) == (8, 8, 8) and not {"nodes", "attention_dp", "moe_tp"} & set(kw)
    dp = sr.simulate_kwargs(_row(**{**named, "id": "r_tp4_0_ep4_0_9", "tp_size": "1", "attention_dp_size": "16",
                                    "moe_tp_size": "4", "moe_ep_size": "4"}))
    assert (dp["tp"], dp["attention_dp"], dp["ep"], dp["gpus"]) == (4, 4, 4, 4)
    assert dp["max_num_seqs"] == 16 * 4       # batch_size is per recorded rank (16 of them): 4 per real rank
    dump = sr.simulate_kwargs(_row(**{**named, "id": "dsr1_b200_trtllm_fp8_agg_1024x1024_c4_cfg177",
                                      "silicon_data_source": "db-dump/2026-04-27; silicon_concurrency=4"}))
    assert (dump["tp"], dump["ep"], dump["gpus"]) == (8, 8, 8)
    # nothing names the layout: the row's own tp_size stands (64 GPUs over 8 nodes)
    plain = sr.simulate_kwargs(_row(**{**named, "id": "x"}))
    assert (plain["tp"], plain["nodes"], plain["ep"]) == (64, 8, 8)


def test_rows_on_the_mtp_image_run_mtp_with_the_drafts_the_launch_script_sets():
    image = "x; silicon_concurrency=4; image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6."
    tp = dict(tp_size="8", attention_dp_size="1", moe_tp_size="8", moe_ep_size="1")
    assert sr.simulate_kwargs(_row(silicon_data_source=image + "post3", **tp))["techniques"] == ["mtp:k=3,alpha=0.6914"]
    # attention DP: one draft, at the same acceptance a draft
    assert sr.simulate_kwargs(_row(silicon_data_source=image + "post3"))["techniques"] == ["mtp:k=1,alpha=0.6914"]
    assert "techniques" not in sr.simulate_kwargs(_row(silicon_data_source=image + "post2", **tp))
    assert "techniques" not in sr.simulate_kwargs(_row(silicon_data_source=image + "post3", backend="sglang", **tp))


def test_inferencex_mtp_rows_draft_the_acceptance_length_its_chat_templated_prompts_give(monkeypatch):
    """InferenceX PR #649: DeepSeek-R1 MTP on random prompts in the chat template accepts 2.50 tokens a round."""
    from whatif.roofline.speculation import chain_expected_tokens
    image = "x; silicon_concurrency=4; image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6.post3"
    row = _row(silicon_data_source=image, tp_size="8", attention_dp_size="1", moe_tp_size="8", moe_ep_size="1")
    alpha = float(sr.simulate_kwargs(row)["techniques"][0].split("alpha=")[1])
    assert chain_expected_tokens(alpha, 3) == pytest.approx(2.50, abs=1e-3)
    monkeypatch.setattr(sr, "INFERENCEX_MTP_ACCEPTANCE_MAPPED", False)
    assert sr.simulate_kwargs(row)["techniques"] == ["mtp:k=3"]   # whatif's default acceptance (0.85 a draft)


# InferenceX's qwen3.5-fp8-b200-sglang-mtp row at 4 clients (TP4 EP1), the base of the Qwen3.5 mapping tests
QWEN35_MTP_ROW = dict(
    id="2026_03_25_qwen3_5_397b_b200_sxm_sglang_fp8_agg_1024x1024_c4_tp4_0_ep1_0_463",
    silicon_data_source=("source_file=2026-03-25.csv; model=Qwen3.5-397B; silicon_concurrency=4; "
                         "measured=2026-03-20T22:08:23Z; wip=False; image=lmsysorg/sglang:v0.5.9-cu130"),
    backend="sglang", backend_version="0.5.9", model_path="Qwen/Qwen3.5-397B-A17B", gemm_quant_mode="fp8",
    moe_quant_mode="fp8_block", batch_size="4", tp_size="4", attention_dp_size="1", moe_tp_size="4", moe_ep_size="1")


def test_qwen35_fp8_tp4_ep1_rows_are_the_inferencex_mtp_key_and_other_layouts_plain(monkeypatch):
    """InferenceX's plain qwen3.5-fp8-b200-sglang key searched TP4 EP4 and TP8 EP1 (PRs #804, #918); its -mtp key
    (PR #898, EAGLE 3 steps, top-1) TP4 EP1 alone (PR #897): the layout says which key ran."""
    qwen = QWEN35_MTP_ROW
    assert sr.simulate_kwargs(_row(**qwen))["techniques"] == ["mtp:k=3,alpha=0.6914"]
    ep4 = {**qwen, "id": qwen["id"].replace("ep1", "ep4"), "tp_size": "16", "moe_tp_size": "4", "moe_ep_size": "4"}
    assert "techniques" not in sr.simulate_kwargs(_row(**ep4))            # the plain key's TP4 EP4
    assert "techniques" not in sr.simulate_kwargs(_row(**{**qwen, "tp_size": "8", "moe_tp_size": "8"}))   # TP8
    assert "techniques" not in sr.simulate_kwargs(_row(**{**qwen, "backend_version": "nightly-dev"}))
    monkeypatch.setattr(sr, "QWEN35_MTP_KEY_MAPPED", False)
    assert "techniques" not in sr.simulate_kwargs(_row(**qwen))


def test_sglang_speculative_rows_before_spec_v2_run_without_the_overlap_scheduler(monkeypatch):
    """SGLang 0.5.9's EAGLE on the V1 workers (no SGLANG_ENABLE_SPEC_V2 in the -mtp recipe) turns the overlap
    scheduler off; plain rows and TensorRT-LLM's MTP rows keep their engine's own loop."""
    qwen = QWEN35_MTP_ROW
    assert sr.simulate_kwargs(_row(**qwen))["overlap_schedule"] is False
    assert "overlap_schedule" not in sr.simulate_kwargs(_row(**{**qwen, "tp_size": "8", "moe_tp_size": "8"}))
    image = "x; silicon_concurrency=4; image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6.post3"
    trt = _row(silicon_data_source=image, tp_size="8", attention_dp_size="1", moe_tp_size="8", moe_ep_size="1")
    assert "overlap_schedule" not in sr.simulate_kwargs(trt)
    monkeypatch.setattr(sr, "SGLANG_SPEC_V2_DEFAULT", (0, 5, 9))
    assert "overlap_schedule" not in sr.simulate_kwargs(_row(**qwen))
    monkeypatch.setattr(sr, "SGLANG_SPEC_V2_DEFAULT", (0, 5, 10))
    monkeypatch.setattr(sr, "SGLANG_SPEC_V1_OVERLAP_MAPPED", False)
    assert "overlap_schedule" not in sr.simulate_kwargs(_row(**qwen))


def test_vllm_rows_before_0_14_schedule_synchronously(monkeypatch):
    """vLLM made async scheduling default-on in 0.14.0 (vllm-project/vllm#27614); the generator's 0.12.0 launch
    passes no --async-scheduling, so its rows run the host's work between GPU steps. Later releases and rows with no
    recorded release keep the spec's default."""
    qwen = dict(backend="vllm", model_path="Qwen/Qwen3-32B", system="h100_sxm", gemm_quant_mode="",
                moe_quant_mode="", tp_size="2", attention_dp_size="", moe_tp_size="1", moe_ep_size="1", batch_size="16")
    assert sr.simulate_kwargs(_row(**qwen, backend_version="0.12.0"))["overlap_schedule"] is False
    assert sr.simulate_kwargs(_row(**qwen, backend_version="0.11.2"))["overlap_schedule"] is False
    for later in ("0.14.0", "0.18.0", "", "nightly-5b8c30d62b754b57"):
        assert "overlap_schedule" not in sr.simulate_kwargs(_row(**qwen, backend_version=later))
    monkeypatch.setattr(sr, "VLLM_SYNC_SCHEDULING_MAPPED", False)
    assert "overlap_schedule" not in sr.simulate_kwargs(_row(**qwen, backend_version="0.12.0"))



def test_llama70b_h100_launch_ignored_its_config_yaml_so_only_those_rows_drop_the_fp8_cache(monkeypatch):
    """The H100 Llama-3.1-70B launch wrote `kv-cache-dtype: fp8` into config.yaml but passed `--config=config.yaml`,
    which vLLM's parser does not expand (session 74 M): those rows run the checkpoint's 16-bit cache and synchronous
    scheduling; the B200 launch (`--config config.yaml`) keeps fp8; off, the recipe's fp8 cache."""
    llama = dict(backend="vllm", backend_version="", model_path="meta-llama/Llama-3.1-70B", gemm_quant_mode="fp8",
                 moe_quant_mode="fp8", tp_size="2", attention_dp_size="1", moe_tp_size="2", moe_ep_size="1",
                 batch_size="64", silicon_data_source="source_file=2026-04-06.csv; model=Llama-3.1-70B; "
                 "silicon_concurrency=64; measured=2025-10-29T00:00:00.000Z; wip=False")
    assert sr.LLAMA70B_H100_AUTO_KV_MAPPED
    h100, b200 = (sr.simulate_kwargs(_row(**llama, system=g)) for g in ("h100_sxm", "b200_sxm"))
    assert "kv_dtype" not in h100 and h100["overlap_schedule"] is False   # nor its async-scheduling: true
    assert b200["kv_dtype"] == "fp8" and "overlap_schedule" not in b200   # B200 launches read their YAML
    monkeypatch.setattr(sr, "LLAMA70B_H100_AUTO_KV_MAPPED", False)
    off = sr.simulate_kwargs(_row(**llama, system="h100_sxm"))
    assert off["kv_dtype"] == "fp8" and "overlap_schedule" not in off


def test_vllm_0_12_qwen3_rows_sample_through_a_full_vocabulary_sort(monkeypatch):
    """aiperf's requests carry no sampling fields, Dynamo's vLLM worker applies Qwen3's generation_config (top_k 20,
    top_p 0.95), and vLLM 0.11.1-0.12.0 keeps the FlashInfer sampler opt-in (vllm-project/vllm#26859): the sort path.
    Other releases, models and engines keep the spec's sampler, and so does InferenceX's client (temperature 0.0)."""
    qwen = dict(backend="vllm", model_path="Qwen/Qwen3-32B", system="h100_sxm", gemm_quant_mode="",
                moe_quant_mode="", tp_size="2", attention_dp_size="", moe_tp_size="1", moe_ep_size="1", batch_size="16")
    assert sr.simulate_kwargs(_row(**qwen, backend_version="0.12.0"))["topk_topp_sort"] is True
    for other in ("0.11.0", "0.14.0", "0.19.0", "", "nightly-5b8c30d62b754b57"):
        assert "topk_topp_sort" not in sr.simulate_kwargs(_row(**qwen, backend_version=other))
    assert "topk_topp_sort" not in sr.simulate_kwargs(_row(**{**qwen, "backend": "sglang"}, backend_version="0.5.1"))
    assert sr.vllm_sort_sampler({"backend": "vllm", "model_path": "openai/gpt-oss-120b", "backend_version": "0.12.0"}) \
        == {}
    ix = "source_file=2026-04-06.csv; silicon_concurrency=16; image=vllm/vllm-openai:v0.12.0"
    assert "topk_topp_sort" not in sr.simulate_kwargs(_row(**qwen, backend_version="0.12.0", silicon_data_source=ix))
    monkeypatch.setattr(sr, "VLLM_SORT_SAMPLER_MAPPED", False)
    assert "topk_topp_sort" not in sr.simulate_kwargs(_row(**qwen, backend_version="0.12.0"))

def test_inferencex_rows_average_ten_rounds_and_aiperf_rows_fifty():
    """InferenceX's benchmark_serving runs --num-prompts 10N after its warm-up; aiconfigurator's aiperf runs 50N."""
    ix = "source_file=2026-04-06.csv; silicon_concurrency=16; image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6.post2"
    assert sr.profile_rounds(_row(silicon_data_source=ix)) == 10
    assert sr.simulate_kwargs(_row(silicon_data_source=ix))["traffic"]["requests"] == 16 * sr.SIM_ROUNDS
    assert sr.simulate_kwargs(_row(silicon_data_source=ix), rounds=50)["traffic"]["requests"] == 16 * 10
    gap = "source_file=/x/aic-auto-gap-analysis/data/b200_sxm/trtllm/1.3.0rc1/y.csv; silicon_concurrency=16"
    assert sr.profile_rounds(_row(silicon_data_source=gap)) == 50
    # their multi-node runs: srt-slurm recipes with `benchmark: type: "sa-bench"` (session 54; 50 before)
    assert sr.profile_rounds(_row(silicon_data_source=ix, mode="disagg")) == 10
    # the burst weighs 1/10: rounds 0..4 as simulated, 4 at the mean of rounds 3 and 4, the drain
    assert sr.profile_means([10.0, 2.0, 1.5, 1.0, 1.0, 0.5], 10) == pytest.approx((15.5 + 4 * 1.0 + 0.5) / 10)


def test_inferencex_trtllm_rows_under_attention_dp_balance_their_context_as_the_recipes_set():
    """InferenceX's TensorRT-LLM recipes set attention_dp_config under DP attention (DeepSeek: timeout 60, no batching
    wait; gpt-oss: enable_balance alone, TensorRT-LLM's defaults 50 / 10); aiconfigurator's generator sets none."""
    ix = "source_file=2026-03-25.csv; silicon_concurrency=128; image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6.post2"
    assert sr.simulate_kwargs(_row(silicon_data_source=ix))["engine"] == {
        "attention_dp_balance": True, "attention_dp_timeout_iters": 60, "attention_dp_batching_wait_iters": 0}
    oss = sr.simulate_kwargs(_row(silicon_data_source=ix, model_path="openai/gpt-oss-120b", gemm_quant_mode="",
                                  moe_quant_mode="", tp_size="1", attention_dp_size="4", moe_ep_size="4",
                                  batch_size="32"))
    assert oss["engine"]["attention_dp_timeout_iters"] == 50 and oss["engine"]["attention_dp_batching_wait_iters"] == 10
    tp_only = dict(tp_size="8", attention_dp_size="1", moe_tp_size="8", moe_ep_size="1")
    assert "engine" not in sr.simulate_kwargs(_row(silicon_data_source=ix, **tp_only))          # no attention DP
    assert "engine" not in sr.simulate_kwargs(_row(silicon_data_source=ix, backend="sglang"))   # not TensorRT-LLM
    gap = "source_file=/x/aic-auto-gap-analysis/data/b200_sxm/trtllm/1.3.0rc1/y.csv; silicon_concurrency=128"
    assert "engine" not in sr.simulate_kwargs(_row(silicon_data_source=gap))                     # the generator's


def test_inferencex_and_sa_bench_clients_draw_lengths_in_a_range_and_aiperfs_keep_them_fixed():
    """InferenceX's benchmark_serving.py (RANDOM_RANGE_RATIO 0.8) and sa-bench (random_range_ratio 0.8) draw each
    prompt and output length uniform in [0.8 L, L]; aiconfigurator's aiperf runs keep --isl / --osl fixed."""
    ix = "source_file=2026-04-06.csv; silicon_concurrency=16"
    assert sr.simulate_kwargs(_row(silicon_data_source=ix))["traffic"]["range_ratio"] == 0.8
    assert sr.client_range_ratio(_row(silicon_data_source="db-dump/2026-04-27; config_id=1", mode="disagg")) == 0.8
    assert "range_ratio" not in sr.simulate_kwargs(_row())["traffic"]   # aiperf (db; ...)
    gap = "source_file=/x/aic-auto-gap-analysis/data/b200_sxm/trtllm/1.3.0rc1/y.csv; silicon_concurrency=16"
    assert sr.client_range_ratio(_row(silicon_data_source=gap)) == 1.0


def test_gap_analysis_rows_that_repeat_an_inferencex_measurement_run_its_client():
    """qwen3.5-397b-gap-analysis.csv copies InferenceX's Qwen3.5 rows (TTFT and TPOT rounded to 0.01 ms): the
    same measurement, so the same client (lengths in [0.8 L, L], 10 rounds) and recipe (recv interval)."""
    rows = sr.load()
    gap = [r for r in rows if r["silicon_data_source"].startswith("source_file=qwen3.5-397b-gap-analysis.csv")]
    repeats = [r for r in gap if sr.inferencex_run(r)]
    assert len(repeats) >= 60 and len(gap) - len(repeats) <= 1
    row = repeats[0]
    assert sr.client_range_ratio(row) == 0.8 and sr.profile_rounds(row) == sr.INFERENCEX_ROUNDS
    assert "recv_interval" in sr.simulate_kwargs(row)["engine"]
    other = dict(row, silicon_ttft_ms=str(float(row["silicon_ttft_ms"]) + 5.0))   # no such InferenceX measurement
    assert not sr.inferencex_run(other) and sr.client_range_ratio(other) == 1.0


def test_inferencex_sglang_deepseek_rows_poll_requests_as_their_recipes_launch():
    """dsr1_fp4_b200.sh / dsr1_fp8_b200.sh: --scheduler-recv-interval 10 below 16 clients, 30 from 16 (10 for fp8 at
    TP4); glm5_fp4_b200.sh 10; the GLM-5 fp8 recipe and the other engines leave SGLang's default."""
    def engine(n, **over):
        src = f"db-dump/2026-04-27; config_id=202; silicon_concurrency={n}; measured=2026-03-25"
        fields = dict(silicon_data_source=src, backend="sglang", tp_size="8", attention_dp_size="1", moe_tp_size="1",
                      moe_ep_size="8", batch_size=str(n), gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4")
        row = _row(**{**fields, **over})
        return sr.simulate_kwargs(row).get("engine", {})
    assert engine(4)["recv_interval"] == 10 and engine(16)["recv_interval"] == 30
    assert engine(64, tp_size="4", moe_ep_size="4", gemm_quant_mode="fp8", moe_quant_mode="fp8")["recv_interval"] == 10
    assert engine(4, model_path="zhipuai/GLM-5", gemm_quant_mode="fp8", moe_quant_mode="fp8") == {}
    assert engine(64, model_path="zhipuai/GLM-5") == {"recv_interval": 10}   # glm5_fp4_b200.sh
    assert engine(4, backend="vllm") == {}
    qwen = dict(model_path="Qwen/Qwen3.5-397B-A17B", moe_ep_size="1", moe_tp_size="8")
    assert [engine(n, **qwen, gemm_quant_mode="fp8", moe_quant_mode="fp8_block")["recv_interval"]
            for n in (4, 8, 16)] == [10, 10, 30]   # qwen3.5_fp8_b200.sh / qwen3.5_bf16_b200.sh
    assert [engine(n, **qwen)["recv_interval"] for n in (4, 8)] == [10, 30]   # qwen3.5_fp4_b200.sh


def test_inferencex_sglang_deepseek_and_qwen_rows_admit_ignore_eos_requests_as_sglang_does_without_radix():
    """InferenceX's client sends ignore_eos (benchmark_lib.sh: bench_serving --ignore-eos) and its aggregated SGLang
    DeepSeek and Qwen3.5 recipes pass --disable-radix-cache: PrefillAdder.add_one_req_ignore_eos admits them
    (simulator/scheduling/ignore_eos.py). GLM-5's recipes were not read for it; aiperf rows and other engines keep
    the new_token_ratio rule."""
    def engine(**over):
        src = "db-dump/2026-04-27; config_id=202; silicon_concurrency=16; measured=2026-03-25"
        fields = dict(silicon_data_source=src, backend="sglang", tp_size="8", attention_dp_size="1", moe_tp_size="1",
                      moe_ep_size="8", batch_size="16", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4")
        return sr.simulate_kwargs(_row(**{**fields, **over})).get("engine", {})
    assert engine()["ignore_eos_admission"] is True
    assert engine(model_path="Qwen/Qwen3.5-397B-A17B", moe_ep_size="1", moe_tp_size="8")["ignore_eos_admission"]
    assert "ignore_eos_admission" not in engine(model_path="zhipuai/GLM-5")
    assert "ignore_eos_admission" not in engine(attention_dp_size="8")   # the recipes read are TP launches
    assert "ignore_eos_admission" not in engine(backend="vllm")
    aiperf = _row(backend="sglang")   # (db; ...): not an InferenceX run
    assert "ignore_eos_admission" not in sr.simulate_kwargs(aiperf).get("engine", {})
    # The generator's SGLang launch keeps the radix cache (sglang.rule sets disable_prefix_cache only under prefix > 0;
    # session 71 T), so the H100 0.5.8.post1 Qwen3-32B TP1 rows admit by new_token_ratio, not add_one_req_ignore_eos.
    gap = _row(backend="sglang", backend_version="0.5.8.post1", model_path="Qwen/Qwen3-32B", system="h100_sxm",
               silicon_data_source="source_file=/x/aic-auto-gap-analysis/data/h100_sxm/sglang/0.5.8.post1/"
               "Qwen_Qwen3-32B.csv; silicon_concurrency=16", gemm_quant_mode="", moe_quant_mode="",
               attention_dp_size="1", moe_ep_size="1")
    assert "ignore_eos_admission" not in sr.simulate_kwargs(gap).get("engine", {})


def test_inferencex_llama70b_trtllm_rows_wait_for_batches_only_at_1k_1k_below_tp8():
    """70b_fp8_b200_trt_slurm.sh / 70b_fp4_b200_trt_slurm.sh: batch_wait_timeout_iters 20 and
    batch_wait_max_tokens_ratio 0.9 "for 1k/1k" when TP < 8, --max_num_tokens 16384 for every configuration."""
    def kw(isl="1024", osl="1024", tp="1", **over):
        fields = dict(silicon_data_source="source_file=2026-04-06.csv; silicon_concurrency=4", backend="trtllm",
                      model_path="meta-llama/Llama-3.1-70B", system="b200_sxm", tp_size=tp, attention_dp_size="1",
                      moe_tp_size="1", moe_ep_size="1", batch_size="4", gemm_quant_mode="fp8", moe_quant_mode="",
                      isl=isl, osl=osl)
        return sr.simulate_kwargs(_row(**{**fields, **over}))
    wait = {"batch_wait_timeout_iters": 20, "batch_wait_max_tokens_ratio": 0.9}
    assert kw()["engine"] == wait and kw(tp="4")["engine"] == wait
    assert kw()["max_num_batched_tokens"] == sr.LLAMA70B_TRT_MAX_NUM_TOKENS == 16384
    for other in (kw(tp="8"), kw(osl="8192"), kw(isl="8192")):
        assert "engine" not in other and other["max_num_batched_tokens"] == 16384
    aiperf = kw(silicon_data_source="source_file=/x/aic-auto-gap-analysis/data/b200_sxm/trtllm/1.0.0rc3/y.csv; "
                                    "silicon_concurrency=4")
    assert "engine" not in aiperf and aiperf["max_num_batched_tokens"] != 16384   # the generator's launch


def test_inferencex_deepseek_fp8_trtllm_post2_rows_wait_for_batches_at_1k_1k_from_64_clients(monkeypatch):
    """dsr1_fp8_b200_trt.sh at 0a919c5: DELAY_BATCHING at ISL = OSL = 1024 and CONC >= 64 writes
    batch_wait_timeout_iters 40 and batch_wait_max_tokens_ratio 0.8; the NVFP4 and MTP recipes and other lengths,
    loads and images do not (DSR1_FP8_TRT_BATCH_WAIT_MAPPED turns it off)."""
    def engine(n=64, version="1.2.0rc6.post2", quant="fp8", osl="1024", **over):
        fields = dict(silicon_data_source=f"source_file=2026-04-06.csv; silicon_concurrency={n}",
                      backend_version=version, tp_size="8", attention_dp_size="1", moe_tp_size="8",
                      moe_ep_size="1", batch_size=str(n), gemm_quant_mode=quant, moe_quant_mode=quant, osl=osl)
        return sr.simulate_kwargs(_row(**{**fields, **over})).get("engine", {})
    wait = {"batch_wait_timeout_iters": 40, "batch_wait_max_tokens_ratio": 0.8}
    assert engine() == wait and engine(128) == wait
    for other in (engine(32), engine(osl="8192"), engine(quant="nvfp4"), engine(version="1.2.0rc6.post3"),
                  engine(version="1.1.0rc2.post2")):
        assert "batch_wait_timeout_iters" not in other
    monkeypatch.setattr(sr, "DSR1_FP8_TRT_BATCH_WAIT_MAPPED", False)
    assert "batch_wait_timeout_iters" not in engine()


def test_inferencex_deepseek_trtllm_rows_run_the_moe_kernels_their_recipe_picked(monkeypatch):
    """moe_config.backend TRTLLM from the 1.2.0rc6.post2 image on (perf-changelog PRs #594/#620), DEEPGEMM (fp8) or
    CUTLASS (NVFP4) at the recipes' high concurrencies, TRTLLM in the MTP recipes without DP attention only;
    1.1.0rc2.post2 fp8 (DEEPGEMM) and aiconfigurator's own runs are left to the per-class model; that image's NVFP4
    recipe (6320e9b) ran TRTLLM at the post2 recipe's points."""
    def kw(version="1.2.0rc6.post2", quant="fp8", n=4, isl="1024", adp="1", **over):
        image = f"nvcr.io/nvidia/tensorrt-llm/release:{version}"
        fields = dict(silicon_data_source=f"source_file=2026-04-06.csv; silicon_concurrency={n}; image={image}",
                      backend_version=version, tp_size="8", attention_dp_size=adp, moe_tp_size="8" if adp == "1"
                      else "1", moe_ep_size="1" if adp == "1" else "8", batch_size=str(n), gemm_quant_mode=quant,
                      moe_quant_mode=quant, isl=isl)
        row = _row(**{**fields, **over})
        return sr.trtllm_moe_kernels(row, sr._layout(row), sr.concurrency(row))
    on = "trtllm-gen"
    monkeypatch.setattr(sr, "DEEPGEMM_MOE_STANDIN_MAPPED", False)   # the DEEPGEMM points' stand-in: below
    assert kw().get("moe_kernels") == on and kw(quant="nvfp4", n=128).get("moe_kernels") == on
    assert kw(isl="8192", n=256).get("moe_kernels") == on                    # fp8 8k/1k: TRTLLM at any CONC
    assert "moe_kernels" not in kw(n=256) and "moe_kernels" not in kw(quant="nvfp4", isl="8192", n=64)
    assert "moe_kernels" not in kw(version="1.1.0rc2.post2")                 # fp8 on 1.1: DEEPGEMM
    assert kw(version="1.1.0rc2.post2", quant="nvfp4").get("moe_kernels") == on     # its NVFP4 recipe: TRTLLM
    assert "moe_kernels" not in kw(version="1.1.0rc2.post2", quant="nvfp4", isl="8192", n=64)   # CUTLASS
    assert kw(version="1.2.0rc6.post3", quant="nvfp4").get("moe_kernels") == on
    assert "moe_kernels" not in kw(version="1.2.0rc6.post3", quant="nvfp4", adp="8", tp_size="1", n=64)
    assert kw(version="1.2.0rc6.post3").get("moe_kernels") == on              # fp8 MTP: PR #632's TRTLLM
    assert "moe_kernels" not in kw(version="1.2.0rc6.post3", adp="8", tp_size="1", n=64)   # DEEPGEMM under DP
    monkeypatch.setattr(sr, "FP8_MTP_MOE_MAPPED", False)
    assert "moe_kernels" not in kw(version="1.2.0rc6.post3")
    assert kw(version="1.2.0rc6.post3", quant="nvfp4").get("moe_kernels") == on
    monkeypatch.setattr(sr, "FP8_MTP_MOE_MAPPED", True)
    # DEEPGEMM (the fp8 recipes' other backend) has no table: the measured trtllm-gen MoE stands in (session 59);
    # the NVFP4 recipes' CUTLASS points stay with the per-class model
    monkeypatch.setattr(sr, "DEEPGEMM_MOE_STANDIN_MAPPED", True)
    for deepgemm in (kw(n=256), kw(version="1.1.0rc2.post2"), kw(version="1.1.0rc2.post2", isl="8192", n=64),
                     kw(version="1.2.0rc6.post3", adp="8", tp_size="1", n=64)):
        assert deepgemm.get("moe_kernels") == sr.DEEPGEMM_MOE_STANDIN == on
    assert "moe_kernels" not in kw(quant="nvfp4", isl="8192", n=64)
    assert "moe_kernels" not in kw(version="1.2.0rc6.post3", quant="nvfp4", adp="8", tp_size="1", n=64)
    assert "moe_kernels" not in kw(version="1.1.0rc2.post2", quant="nvfp4", isl="8192", n=64)
    assert "moe_kernels" not in kw(version="1.1.0rc2.post2", silicon_data_source="db; config_id=1; "
                                   "silicon_concurrency=4; measured=x")
    assert "moe_kernels" not in kw(silicon_data_source="db; config_id=1; silicon_concurrency=4; measured=x")
    row = _row(silicon_data_source="source_file=2026-04-06.csv; silicon_concurrency=4", tp_size="8",
               attention_dp_size="1", moe_tp_size="8", moe_ep_size="1", batch_size="4", gemm_quant_mode="fp8",
               moe_quant_mode="fp8", backend_version="1.2.0rc6.post2")
    monkeypatch.setattr(sr, "MOE_KERNELS_MAPPED", True)
    assert sr.simulate_kwargs(row)["moe_kernels"] == on


def test_a_row_whatif_cannot_express_is_recorded_with_its_one_line_reason():
    res = sr.run_row(_row(model_path="nobody/no-such-model-9b", attention_dp_size="1", tp_size="1",
                          moe_ep_size="1"))
    assert (res.expressible, res.scored) == (False, False)
    assert "no-such-model-9b" in res.reason and "\n" not in res.reason
    res = sr.run_row(_row(gemm_quant_mode="int3", moe_quant_mode="int3"))   # a whatif limit before the measurement
    assert (res.expressible, res.scored) == (False, False) and "has no whatif scheme" in res.reason


def test_a_measurement_not_scored_stays_expressible_where_whatif_accepts_the_row():
    """NotScored (the measurement or its record) leaves scored 0 with its reason, and expressible says whether whatif
    accepts the row's model, GPU, layout and precision (whatif_refusal); the reason keeps whatif's refusal apart."""
    res = sr.run_row(_row(silicon_data_source="db; config_id=1"))
    assert (res.expressible, res.scored) == (True, False)
    assert res.reason == "no silicon_concurrency=N in silicon_data_source"
    cold = next(r for r in sr.load() if sr.cold_server(r))
    res = sr.run_row(cold)
    assert (res.expressible, res.scored) == (True, False) and "warmed the server up" in res.reason
    assert res.ttft_ms is None and res.tpot_ms is None
    res = sr.run_row(_row(silicon_data_source="db; config_id=1", model_path="nobody/no-such-model-9b"))
    assert (res.expressible, res.scored) == (False, False)
    assert res.reason.startswith("no silicon_concurrency=N in silicon_data_source; whatif: --model: ")
    disagg = _row(mode="disagg", decode_tp_size="8", decode_moe_tp_size="1", decode_moe_ep_size="8",
                  prefill_tp_size="8", prefill_attention_dp_size="2")   # no worker counts; a part-group prefill DP
    assert "attention-DP of 2 ranks over a TP group of 16" in sr.whatif_refusal(disagg)
    assert sr.whatif_refusal({**disagg, "prefill_attention_dp_size": "1"}) == ""


def test_the_committed_table_scores_its_expressible_rows_and_says_why_not_the_rest():
    """Every row of the committed table is expressible or says why not; scored rows alone carry predictions."""
    with open(sr.OUT, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(r["scored"] in ("0", "1") and r["expressible"] in ("0", "1") for r in rows)
    assert all(r["expressible"] == "1" for r in rows if r["scored"] == "1")
    assert all(bool(r["predicted_ttft_ms"]) == (r["scored"] == "1") != bool(r["reason"]) for r in rows)


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
    ok = [r for r in results if r.scored]
    # coverage only grows, but for rows judged unusable (75: one of the 9 capped gpt-oss rows was in the sample;
    # 74 once the cold-server runs were left out (3 in the sample) and SGLang's fp8 TP4 rows fit (2 in);
    # 64 once the TensorRT-LLM 1.1.0rc2.post2 runs of 2026-01-14 (3 in) and the gap-analysis rows whose attention
    # layout is not recorded (7 in) were left out: trt_stp_or_mtp_unknown, attention_layout_unrecorded, session 56)
    assert len(ok) >= 64
    assert {"trtllm", "vllm"} <= {r.row["backend"] for r in ok}
    assert sum(r.row["mode"] == "disagg" for r in ok) >= 10   # both pools' layouts and worker counts
    ttft, tpot = sr.stats(ok, "ttft"), sr.stats(ok, "tpot")
    # (76 rows: TTFT 63.5% MAPE, median 48.9%, 18 off by 3x, most of them disaggregated rows predicted ~0.2x;
    # TPOT 25.4%, its MAPE set by gpt-oss on H100 at 512 clients; 64.4% / 50.0% / 22 before TensorRT-LLM's
    # attention-DP balancing and InferenceX's 10-round mean): pinned where they are, the targets are not met.
    # (75 rows once that capped gpt-oss run was left out: TTFT 59.5%, median 44.8%, 18 off by 3x; TPOT 21.6%;
    # after the stop-48 merges: TTFT 59.2%, median 45.6%, 15 off by 3x; TPOT 20.4%)
    # (stop 49, InferenceX's and sa-bench's [0.8 L, L] lengths and SGLang's recv interval: TTFT 45.5%, median 41.0%,
    # x0.79 -> x0.59, 19 off by 3x (GLM-5 c128 x8.7 back in, SGLang and TensorRT-LLM DeepSeek rows at x0.2-0.3 out:
    # the lockstep had hidden their low prediction); TPOT 19.5%; with the other stop-49 merges: TTFT 45.2%, median
    # 41.4%, 18 off by 3x; TPOT 19.1%)
    # (stop 50: cold-server runs out, InferenceX's SGLang DeepSeek rows launched as their recipes: 74 rows, TTFT
    # 44.0%, median 39.2%, x0.63, 16 off by 3x; TPOT 18.9%)
    # (stop 51, vLLM rows: the recipe's checkpoint as stored, vLLM's Marlin MoE fit, the 04-06 TP/EP rows: TTFT
    # 43.7% -> 41.7%, median 39.6% -> 35.4%, x0.62 -> x0.65, 15 -> 14 off by 3x; TPOT 18.6% -> 18.5%; its 23 vLLM
    # rows TTFT 33.9% -> 27.3%, TPOT 11.1% -> 10.9%)
    assert ttft["mape"] < 47 and ttft["median_ape"] < 42.5 and ttft["off3x"] <= 19, ttft
    assert tpot["mape"] < 20.5, tpot


@pytest.mark.slow
def test_the_whole_file():
    results = sr.run_all(sr.load(), jobs=2)
    assert not [r.reason for r in results if r.reason.startswith("internal error")]
    ok = [r for r in results if r.scored]
    # 2,551: 2,423 at the start of this stop, + 128 (disaggregated pools, gpt-oss on H100, per-GPU batch sizes)
    # (2,542 once the 9 gpt-oss rows capped outside the deployment were left out: capped_below_load)
    # (2,491 once the 61 InferenceX SGLang DeepSeek runs measured on a cold server were left out (cold_server) and
    # the 10 fp8 TP4 rows fit at their recipe's memory fraction (inferencex_sglang_launch))
    # (2,459 once the 32 DeepSeek-R1 SGLang rows of a launch InferenceX measured plain and speculative were left out:
    # stp_or_mtp_unknown, session 55)
    # (2,391 once the 24 cold NVFP4 runs under their chunk, on the --enable-symm-mem recipe, were left out:
    # cold_symmetric_pool; and the 32 TensorRT-LLM DeepSeek-R1 runs on the image InferenceX ran plain and with MTP and
    # the 12 gap-analysis rows whose attention layout is not recorded: session 56)
    assert len(ok) >= 2391
    ttft, tpot = sr.stats(ok, "ttft"), sr.stats(ok, "tpot")
    # (2,551 after the stop-47 merges: TTFT 43.3%, median 35.6%, 270 off by 3x; TPOT 16.5%)
    # (2,542 after the stop-48 merges: TTFT 46.0% (worse: SGLang 56.3 -> 63.9%, its block-FP8 MoE fit prices GLM-5
    # and DeepSeek prefill higher), median 36.3%, 262 off by 3x; TPOT 13.7%, median 10.8%)
    # (stop 49: TTFT 46.9%, median 40.8%, 430 off by 3x (worse: InferenceX's [0.8 L, L] lengths end the lockstep
    # that had inflated TTFT, which exposes rows predicted low, 131 of the new ones Qwen3.5 on SGLang at x0.3);
    # TPOT 13.1%, median 10.2%)
    # (stop 50, 2,491 rows: TTFT 42.2%, median 41.7% (worse: the recv interval on Qwen3.5, InferenceX's client on
    # the gap-analysis copies and the recipes' larger SGLang prefill budgets lower predictions that were already low),
    # 276 off by 3x; TPOT 12.6%, median 9.9%)
    # (session 51, the Qwen3.5 and GLM-5 recipes' prefill budgets (inferencex_sglang_launch), measured as the committed
    # table with those 270 rows rerun (--filter qwen3_5, --filter glm; no other row moves): TTFT 42.6%, median 42.4%
    # (worse: bigger prefill batches lower predictions that were already low), 282 off by 3x; TPOT 12.8%)
    # (session 51 after all merges, the whole file rerun: TTFT 39.7%, median 38.0%, x0.63, 248 off by 3x (TensorRT-LLM
    # batch waiting on the Llama-70B rows, attention of NVFP4 checkpoints at fp8/16-bit, the vLLM recipes' checkpoints
    # and Marlin MoE, the 04-06 TP/EP rows); TPOT 13.1% (worse: the dense NVFP4 and vLLM checkpoint rows' decode
    # attention now takes the fitted decode kernel, which already reads x1.1-1.2 on their fp8/bf16 twins), median 10.5%)
    # (session 52 after all merges: TTFT 38.2%, median 35.2%, x0.66 (MiniMax's block-fp8 experts and fp32 router on
    # vLLM, the DeepSeek recipes' TRTLLM-Gen MoE); 252 off by 3x (worse: TensorRT-LLM's static fp8 input scale and
    # the NVFP4 GEMM stand-in price DeepSeek prefill lower on rows already at x0.35); TPOT 12.7%, median 10.0%)
    # (session 53 after all merges: TTFT 37.8%, median 34.0%, x0.67, 247 off by 3x (SGLang's eager MLA/DSA module host
    # time, gpt-oss as its checkpoint and recipes run it, NVIDIA's FP4-V2 checkpoint with its 16-bit MLA projections,
    # the disaggregated first token at the decode step's end); TPOT 11.4%, median 9.0% (the B200 decode-attention floor
    # at the L2-resident calls, vLLM's all-reduce + norm fusion where the release or recipe runs it, gpt-oss's expert
    # kernels; worse on SGLang's DeepSeek NVFP4 rows, 8.1 -> 10.9%, from the FP4-V2 checkpoint's 16-bit projections))
    # (session 54 after all merges: TTFT 35.6%, median 33.2%, x0.67, 212 off by 3x (vLLM MiniMax's launches by release
    # and the db-dump TP x attention-DP layouts, vLLM Hopper EP block-fp8 experts on FlashInfer CUTLASS, TensorRT-LLM
    # DeepSeek's recipe limits, the disaggregated srt-slurm decode slots); TPOT 10.7% (SGLang 0.5's DeepSeek all-reduce
    # + norm fusion on Blackwell, one inter-kernel gap a module-timed MLA layer, TensorRT-LLM DeepSeek's shared-expert
    # stream; worse on TensorRT-LLM's MTP rows and the H100 disaggregated rows))
    # (session 55 after all merges, 2,459 rows: TTFT 34.0%, median 31.6%, x0.69, 167 off by 3x (SGLang's GDN L2-norm
    # recompile per new prefill length on Qwen3.5: 42 -> 1); TPOT 10.2% (TensorRT-LLM R1 MTP's published acceptance
    # length and TRTLLM MoE backend; the busiest EP rank's experts; worse on Qwen3-235B TRT-LLM H100, 9.3 -> 12.6%))
    # (session 56 after all merges, 2,391 rows: TTFT 32.5%, median 30.6%, x0.70, 125 off by 3x; TPOT 9.7%, B200 9.9%,
    # H100 9.2% (on the same 2,391 rows session 55 read TTFT 33.1%, 125 off by 3x, TPOT 9.9%: InferenceX's Qwen3.5 MTP
    # key and the hybrid verify pass's state writes; 68 rows left out by launch rules))
    # (session 57 after all merges, 2,391 rows: TTFT 32.4%, median 30.4%, x0.70, 123 off by 3x (SGLang's eager GDN
    # prefill chain and fp8 input-quantize launches, its DP-attention prefill gather by all-reduce); TPOT 9.65%, B200
    # 9.86%, H100 9.23% (worse on TensorRT-LLM B200 DeepSeek, 12.6 -> 12.8% / 14.9 -> 15.1%: its fp8 MLA generation))
    # (session 58 after all merges: TTFT 32.3%, median 30.4%, x0.70, 119 off by 3x (vLLM's fp8-cache prefill at the
    # bf16 peak its fit was made at, the fp8 DeepSeek TRT recipe's batch waiting, the MLA KV fan-out); TPOT 9.32%,
    # B200 9.4%, H100 9.2% (SGLang's DeepSeek shared-expert stream and per-worker all-reduce fusion; worse on SGLang's
    # aggregated DeepSeek TTFT, 36.3 -> 38.3%, its faster decode steps lowering a TTFT already low))
    # (session 59 after all merges: TTFT 31.9%, median 30.1%, x0.70, 115 off by 3x (experts without a fused-MoE fit
    # priced by the dense GEMM fit past decode size, TensorRT-LLM DeepSeek's DEEPGEMM MoE points by the measured
    # trtllm-gen rows); TPOT 9.24%, B200 9.25%, H100 9.22% (worse: the MTP image's fp8 attention-DP points, 6.5 ->
    # 22.3% on 6 rows, which the stand-in's MTP verify step overprices))
    # (session 60 after all merges: TTFT 31.6%, median 29.9%, x0.71, 114 off by 3x (block-fp8 grouped experts' serial
    # K-block promotion, the srt-slurm ctx/gen workers' own MoE backends); TPOT 9.16%, B200 9.22%, H100 9.03% (the
    # H100 TP16 decode workers' two-node all-reduce without NVLS); worse: 5 TRT-LLM H100 Qwen3-235B rows x0.94-0.99 ->
    # x1.12-1.17, their experts' promotion priced at its median where the measured cost grows with the tokens)
    # (session 61 after all merges: TTFT 30.9%, median 28.4%, x0.72, 112 off by 3x (gpt-oss's B200 experts priced
    # by the MXFP4 x MXFP8 TRTLLM-Gen rows' own fit, 64-dim prefill attention's exponential floor, vLLM steps above
    # the capture ceiling graphless, SGLang's NVFP4 input-quantize launches and PD prefill metadata slots); TPOT
    # 9.50%, B200 9.73%, H100 9.03%: worse (9.16%) because gpt-oss's B200 experts were priced x0.72 of their measured
    # kernel, which hid a decode step priced high elsewhere: its B200 rows' TPOT 5.4-9.4% -> 9.3-14.7%, x1.08)
    # (session 62 after all merges: TTFT 30.96%, median 28.3%, x0.72, 112 off by 3x (GLM-5's DSA prefill as the
    # per-query decode rows SGLang runs, 42.3 -> 34.8%; gpt-oss's MXFP4 experts padded to 256); TPOT 9.58%, B200 9.86%,
    # H100 9.03%: worse because the padded gpt-oss experts cost more on a TP1-2 decode step already priced high (its
    # B200 rows 11.9 -> 13.7%), and SGLang's block-FP8 narrow slices run as 128 columns (MiniMax TTFT 21.9 -> 23.3%))
    # (session 63 after all merges: TTFT 31.16%, median 28.3%, x0.72, 112 off by 3x: worse, the NVFP4 finalize pass
    # and the SGLang block-FP8 mid-M regime price 1k-prompt experts lower on rows already low (vLLM MiniMax 23.3 ->
    # 24.9%), and SGLang's V1 speculative rows lose the overlap loop's held first token; TPOT 9.51%, B200 9.75%, H100
    # 9.03%: the V1 rows (Qwen3.5 12.1 -> 11.7% with the mid-M regime), TensorRT-LLM DeepSeek-V3 9.8 -> 9.4%, Kimi
    # 13.1 -> 12.9%)
    # (session 64 after all merges: TTFT 31.20%, median 28.4%, x0.72, 112 off by 3x; TPOT 9.57%, B200 9.74%, H100
    # 9.23%: worse, the fused-MoE blocks refitted under the collector's capped routing (64 N) price gpt-oss's
    # decode higher where it was already high (vLLM H100 10.4 -> 13.2%, B200 11.9 -> 12.6%, TensorRT-LLM B200 15.1 ->
    # 16.0%), while Kimi 10.8 -> 10.2% and DeepSeek's SGLang rows improve)
    # (session 65 after all merges: TTFT 32.03%, median 29.4%, x0.71, 112 off by 3x; TPOT 10.16%, B200 10.59%, H100
    # 9.30%: worse, the fused-MoE fits' timed calls hold their top-k, activation and input quantize, no longer charged
    # again beside them (65 M): vLLM B200 MiniMax TPOT 6.55 -> 8.61%, SGLang B200 Qwen3.5 12.4 -> 15.4%, SGLang DeepSeek
    # 5.7 -> 6.8%, decode steps already priced low elsewhere; Kimi 10.0 -> 8.4%; SGLang's overlap loop's held first
    # token (65 D) and Marlin MXFP4 padding (65 B) move less. B200 misses the issue's TPOT <= 10% target again)
    # (session 66 after all merges: TTFT 31.80%, median 29.3%, x0.71, 112 off by 3x; TPOT 9.80%, B200 10.05%, H100
    # 9.30%: Qwen's gated shared expert (gate GEMV, sigmoid, scale, add) priced (66 A): SGLang B200 Qwen3.5 TPOT
    # 15.35 -> 11.53%, TTFT 41.0 -> 38.6%; no other row moved)
    # (session 67 after all merges: TTFT 31.56%, median 29.1%, x0.71, 111 off by 3x; TPOT 9.72%, B200 9.93%, H100
    # 9.30%: the routed + shared expert add and Gated DeltaNet's qkvzba split priced as their own kernels (67 A):
    # SGLang B200 Qwen3.5 TPOT 11.53 -> 11.16%, DeepSeek-R1 8.38 -> 8.10%, GLM-5 9.91 -> 9.47%, TensorRT-LLM B200
    # DeepSeek-R1 10.91 -> 10.66%; worse: vLLM Kimi-K2.5 8.37 -> 8.74% (already read high); 863 rows moved)
    # (session 68 after all merges: TTFT 31.46%, median 28.9%, x0.72, 110 off by 3x; TPOT 9.72%, B200 9.92%, H100
    # 9.33%: Qwen3's per-head q/k norm and TensorRT-LLM's NVFP4 finalize fusion (68 C): vLLM H100 Qwen3-32B TPOT 9.72
    # -> 8.39%, SGLang B200 Qwen3.5 11.16 -> 10.97%; worse: TensorRT-LLM H100 Qwen3-235B 12.22 -> 13.09%, SGLang H100
    # Qwen3-32B 7.31 -> 8.16% (both already read high); TensorRT-LLM MTP's context-step chain (68 I); 842 rows moved)
    # (session 69 after all merges: TTFT 31.57%, median 29.0%, x0.71, 110 off by 3x; TPOT 9.50%, B200 9.59%, H100
    # 9.33%: gpt-oss's B200 experts a cost per touched expert and MXFP4's bytes (69 N): TPOT 14.40 -> 12.26%, TTFT
    # 23.77 -> 25.29% (worse: its prefill experts priced lower, already x0.78); three vLLM launches at their recipes
    # (69 B): MiniMax TTFT 27.27 -> 26.77%, Llama-70B 19.45 -> 19.60%; 289 rows moved)
    # (session 70 after all merges: TTFT 31.53%, median 29.06% (worse, 28.99), x0.72, 108 off by 3x; TPOT 9.39%, B200
    # 9.40%, H100 9.38%: the TRTLLM-Gen NVFP4 MoE fits' cost per touched expert (70 A): Kimi-K2.5 8.74 -> 7.82%,
    # GLM-5 9.47 -> 8.97%, MiniMax 8.95 -> 8.62%, Qwen3.5 10.97 -> 11.26% (worse, 70 Q: its decode step was priced high
    # under experts priced low); the engines' KV pool from the CUDA runtime's total and MLA's replicated q_a / kv_a
    # (70 P): vLLM off by 3x 15 -> 13; 391 rows moved)
    # (session 71 after all merges: TTFT 31.21%, median 29.29% (worse), x0.71, 96 off by 3x; TPOT 9.22%, B200 9.44%
    # (worse), H100 8.77%: the InferenceX DeepSeek TensorRT-LLM rows of no recorded release on their sourced image and
    # layout (71 P, U): R1 TTFT 38.57 -> 36.65%, V3 42.90 -> 40.94%, off by 3x 31 -> 19 (TPOT worse, 9.48 -> 9.65%
    # and 9.28 -> 9.39%: the attention-DP decode is priced fast, 71 U); vLLM before 0.14 schedules synchronously and
    # 0.12.0's sampler sorts the vocabulary (71 L, M): Qwen3-32B TPOT 8.27 -> 6.89%, TTFT 29.09 -> 29.36% (worse);
    # SGLang's ignore_eos admission (71 G): off by 3x 18 -> 16; 172 rows moved)
    # (session 72 after all merges: TTFT 31.12%, median 29.11%, x0.71, 94 off by 3x; TPOT 9.20%, B200 9.41%, H100
    # 8.78%: MiniMax fp8 on vLLM 0.17.0 runs Triton experts (72 B2, B3): MiniMax TTFT 26.63 -> 25.84%, off by 3x 7 -> 5,
    # TPOT 8.62 -> 9.03% (worse: the fit's tile-64 rows price vLLM's tile-16 decode high); gpt-oss's TensorRT-LLM
    # recipe runs PDL (72 J): gpt-oss TPOT 12.24 -> 10.42%, TTFT 25.42 -> 25.79% (worse); worse: trtllm-gen's MLA head
    # tile (72 F, F2) reads a 32-head latent twice where L2 serves part of it, SGLang DeepSeek agg TPOT 6.87 -> 8.66%;
    # 701 rows moved)
    # (session 73 after all merges: TTFT 31.07%, median 28.95%, x0.71, 94 off by 3x; TPOT 9.02%, B200 9.40%, H100
    # 8.24%: TensorRT-LLM's Qwen3-MoE all-reduce + add + norm fusion (73 G): Qwen3-235B TPOT 13.09 -> 10.50%, TTFT
    # 29.58 -> 32.18% (worse: fewer eager launches on rows already low); the residual add + RMSNorm as one kernel on
    # TensorRT-LLM and SGLang (73 K): TensorRT-LLM TPOT 9.44 -> 9.00%, SGLang 9.68 -> 10.02% (worse: Qwen3.5 11.26 ->
    # 11.89%, GLM-5 8.97 -> 9.61%, decode steps already priced low); the Triton MoE fit at SGLang's shipped configs
    # (73 E): MiniMax TPOT 9.03 -> 8.52%; SGLang's fp8 on DeepSeek's block checkpoint (73 M); 1,643 rows moved)
    # (session 74 after all merges: TTFT 30.86%, median 28.71%, x0.71, 90 off by 3x; TPOT 8.92%, B200 9.38%, H100
    # 7.99%: the H100 Llama-3.1-70B launch's --config= YAML never read by vLLM, so a bf16 KV cache and synchronous
    # scheduling (74 M): its 45 rows TTFT 19.06 -> 7.94%, off by 3x 3 -> 0, TPOT 9.04 -> 9.07% (worse); vLLM V1 admits
    # a waiting chunk whole or not at all (74 I): vLLM TPOT 8.41 -> 8.13%, Qwen3-32B TTFT 28.82 -> 28.91% (worse);
    # 64 rows moved)
    # (session 75 after all merges: TTFT 30.76%, median 28.65%, x0.72, 90 off by 3x; TPOT 8.86%, B200 9.30%, H100
    # 7.99%: Kimi-K2.5 NVFP4's "EP4" vLLM 0.17.0 rows never passed --enable-expert-parallel, so their experts run
    # tensor-parallel (75 B): Kimi TTFT 28.64 -> 26.65%, TPOT 7.69 -> 6.58%; 60 rows moved)
    assert ttft["mape"] < 30.80 and ttft["median_ape"] < 28.70 and ttft["off3x"] <= 90, ttft
    assert tpot["mape"] < 8.90, tpot
    # the issue's target is TPOT <= 10% on every GPU: B200 9.30%, H100 7.99% since session 75 (above)
    for gpu, limit in (("b200_sxm", 10.0), ("h100_sxm", 10.0)):
        assert sr.stats([r for r in ok if r.row["system"] == gpu], "tpot")["mape"] <= limit, gpu
    disagg = [r for r in ok if r.row["mode"] == "disagg"]
    # (21.6% after the merges: the Blackwell fp8/NVFP4 fused-MoE fits run DeepSeek's decode x1.08 high; 17.6% before)
    # (20.9% after the stop-48 merges)
    # (19.2% at stop 49)
    # (18.3% at session 52; 17.4% at session 53)
    # (session 54: 15.0%, the srt-slurm recipes' limits and the module-timed MLA gap; H100's 8 rows 16.6 -> 31.0%)
    # (session 55: 13.5%, the busiest EP rank's experts at few tokens: H100's 8 rows 31.0 -> 21.4%)
    # (session 57: 13.65%, worse: TensorRT-LLM's fp8 MLA generation prices its B200 decode pools lower, 9.2 -> 9.5%)
    # (session 58: 11.3%, SGLang's decode workers fuse their all-reduce + RMSNorm (each worker's own --nnodes) and run
    # DeepSeek's shared expert on a second stream: SGLang's 23 rows 17.5 -> 10.8%)
    # (session 59: 10.85%, the dense-fit experts of TensorRT-LLM's B200 DeepSeek-V3 decode pools, 9.3 -> 8.4%)
    # (session 60: 8.29%, the H100 TP16 decode workers' all-reduce over two nodes without NVLS (NCCL_NVLS_ENABLE=0 in
    # their recipes): H100's 8 rows 21.4 -> 5.9%; the recipes' per-pool MoE backends, TensorRT-LLM B200 8.4 -> 7.2%)
    # (session 61: 8.21%, SGLang's attention-DP prefill ranks' metadata slots)
    # (session 62: 7.82%, the Blackwell MoE fits' changes (gpt-oss padding, SGLang block-FP8 narrow slices))
    # (session 63: 7.35%, the SGLang block-FP8 fit's mid-M regime on the fp8 DeepSeek decode pools)
    # (session 64: 7.17%, the fused-MoE refit under the collector's capped routing)
    # (session 65: 6.96%, the fused-MoE fits' timed top-k, activation and input quantize not charged twice)
    # (session 67: 7.05%, worse: the shared-expert add (67 A) lengthens the DeepSeek decode pools' steps, already
    # read high on B200 SGLang (8.46 -> 8.58%) and TensorRT-LLM (6.12 -> 6.18%))
    # (session 68: 7.01%, TensorRT-LLM's NVFP4 finalize fusion drops the add: its B200 DeepSeek-V3 pools 6.18 -> 6.04%)
    # (session 69: 7.04%, the Feb fp8 EP8 SGLang pools at their srt-slurm recipe's limits (69 L))
    # (session 70: 7.22%, worse: the SGLang NVFP4 expert cost per touched expert (70 A) lengthens the cfg535 DEP
    # decode pools' steps, already read high (x1.10 -> 1.16 at 64 clients); TensorRT-LLM's NVFP4 pools improve)
    # (session 72: 7.33%, worse: the srt-slurm TensorRT-LLM recipes export TRTLLM_ENABLE_PDL=1 (72 J2), so their pools
    # pay no inter-kernel gap; their light-load DeepSeek decode, already x0.99, now reads x0.94: TRT-LLM 5.99 -> 6.68%)
    # (session 73: 7.33%; session 74: 7.33%; session 75: 7.33%)
    assert len(disagg) >= 65 and sr.stats(disagg, "tpot")["mape"] < 7.35, sr.stats(disagg, "tpot")
    # (--filter disagg: 71.0% MAPE, x0.30, 34 off by 3x; 84.6%, x0.21, 50 before sa-bench's 10N rounds and the
    # per-prefill-worker front ends): the prefill pools are simulated 2.5-6.3x faster than measured (accuracy.md)
    # (78.4%, x0.34, 33 off by 3x once merged with the other changes of stop 47; 68.2%, x0.38, 30 after stop 48's
    # MLA context fit, TensorRT-LLM's attention-DP all-gather and per-engine chunking, and the MoE fits per engine)
    ttft = sr.stats(disagg, "ttft")
    # (66.3%, x0.35, 31 off by 3x at stop 49; 64.4%, x0.36, 30 in session 51; TPOT 19.0%; session 52: 64.9%, x0.35,
    # 31, TPOT 18.3%; session 53: 65.6% (worse: the FP4-V2 checkpoint's rows; 64.2% before it), x0.36, 28: the first
    # token at the decode step's end, SGLang's random prefill ranks)
    # (session 54: 56.3%, x0.40, 16 off by 3x: the TensorRT-LLM rows' decode slots and prefill limits from their
    # srt-slurm recipes, SRT_SLURM_TRTLLM)
    # (session 55: 54.9%, x0.40, 16 off by 3x: SGLang's srt-slurm recipes, SRT_SLURM_SGLANG; the busiest EP rank)
    # (session 57: 54.5%, x0.40, 15 off by 3x: SGLang's DP-attention prefill gathers by all-reduce, dp_prefill_gather)
    # (session 58: 53.2%, x0.41, 13 off by 3x: an MLA model's latent sent to each decode attention-TP rank, kv_fanout)
    # (session 59: 51.9%, x0.49 on TensorRT-LLM's 42, 13 off by 3x: the same two MoE changes on its prefill pools)
    # (session 60: 44.1%, x0.56, 12 off by 3x: TensorRT-LLM's ctx workers' own MoE backends, SRT_SLURM_TRTLLM_MOE:
    # its B200 34 rows 46.3 -> 35.7%; the H100 decode pools' slower steps, 8 rows 30.8 -> 12.5%)
    # (session 61: 43.1%, x0.57, 10 off by 3x: SGLang's 23 rows 67.6 -> 64.5%, a prefill rank's metadata slots
    # (prefill_send_slots), which hold its next prompt while its last two batches' KV is sent)
    # (session 62: 42.6%, x0.57, 10 off by 3x: SGLang's attention-DP prefill pools gather their MoE tokens
    # (prefill_moe_a2a), 64.5 -> 63.8%)
    # (session 63: 42.7%, x0.58, 10 off by 3x)
    # (session 65: 44.4%, x0.54, 10 off by 3x: worse, the MoE layers' double-counted ops removed (65 M) shorten
    # prefill steps whose first tokens were already early)
    # (session 67: 44.0%, x0.54, 10 off by 3x)
    # (session 68: 44.1%, x0.54, 10 off by 3x: worse, TensorRT-LLM's NVFP4 finalize fusion (68 C) shortens the
    # B200 DeepSeek-V3 pools' steps, whose first tokens were already early: 36.56 -> 36.70%)
    # (session 69: 44.1%, x0.54, 10 off by 3x: SGLang's TP prefill rows held to the KV send (69 C) and the Feb EP8
    # recipe's limits (69 L) move its 23 rows 64.92 -> 65.0%)
    # (session 70: 44.05%, x0.54, 10 off by 3x)
    # (session 72: 44.48%, x0.54, 10 off by 3x: worse, the PDL pools' prefill steps (72 J2) shorten first tokens
    # already early)
    # (session 73: 44.27%, x0.54, 10 off by 3x)
    assert ttft["mape"] < 44.3 and ttft["off3x"] <= 10, ttft


def test_deepseek_r1_fp8_on_four_b200_is_too_tight_at_sglangs_default_memory_fraction():
    """DeepSeek-R1 fp8 at TP4 on B200 does not fit SGLang's default static pool: 671B weights at 1 byte (bf16
    embeddings and head, fp8-block scales, MLA's q_a / kv_a whole on each rank) are 169.0 GB per GPU, while SGLang's
    static pool at TP4 on a B200 of 191.5 GB (the CUDA runtime's 178.35 GiB) is 0.85 of it (162.8 GB; 0.5.x's
    heuristic keeps ~26 GB outside it, 165.4 GB). The set's 10 SGLang 0.5.9
    rows of that layout ran InferenceX's dsr1_fp8_b200.sh, which raises --mem-fraction-static to 0.95 at TP4
    (inferencex_sglang_launch), and fit with it. TensorRT-LLM (KV = a share of what the weights leave) fits too."""
    import whatif
    kw = dict(tp=4, gpus=4, kv_dtype="fp8", quantization="fp8", expert_quantization="fp8-block", batch=1,
              prompt=8192, output=1024, with_max_batch=False)
    mem = whatif.estimate("deepseek-ai/DeepSeek-R1", "dgx-b200", kernel_engine="trtllm", **kw).to_dict()["memory"]
    assert 168.5e9 < mem["weights_bytes"] < 169.5e9 and mem["fits"]
    sglang = whatif.estimate("deepseek-ai/DeepSeek-R1", "dgx-b200", kernel_engine="sglang", **kw).to_dict()["memory"]
    assert not sglang["fits"] and 162.5e9 < sglang["usable_bytes"] < sglang["weights_bytes"]
    roomier = whatif.estimate("deepseek-ai/DeepSeek-R1", "dgx-b200", kernel_engine="sglang", memory_utilization=0.95,
                              **kw).to_dict()["memory"]
    assert roomier["fits"]


def test_a_vllm_tp_ep_layout_recorded_as_attention_dp_maps_to_tp_and_ep():
    """InferenceX's 2026-04-06 vLLM rows record TP T, EP E as tp_size T x attention_dp_size E with moe_ep_size T x E
    (their ids name `_tpT_epE_`): T GPUs, TP T, EP E, no attention DP; other engines' rows keep the rule."""
    row = _row(id="2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x1024_c8_tp4_ep4_1344", backend="vllm",
               model_path="MiniMaxAI/MiniMax-M2.5", system="h100_sxm", gemm_quant_mode="fp8", moe_quant_mode="fp8",
               tp_size="4", attention_dp_size="4", moe_tp_size="1", moe_ep_size="16", batch_size="2",
               silicon_data_source="source_file=2026-04-06.csv; silicon_concurrency=8")
    kw = sr.simulate_kwargs(row)
    assert (kw["tp"], kw["ep"], kw["gpus"]) == (4, 4, 4) and "attention_dp" not in kw and "nodes" not in kw
    sglang = sr.simulate_kwargs({**row, "backend": "sglang"})
    assert (sglang["tp"], sglang["attention_dp"], sglang["ep"]) == (16, 4, 16)


def test_db_dump_vllm_rows_recorded_as_attention_dp_run_tp_and_ep_on_tp_gpus():
    """The database dump writes InferenceX's vLLM "tp: 2, ep: 2" (PR #1010's search space) as tp_size 2 x
    attention_dp_size 2 with moe_ep_size 4, as the 2026-04-06 file does: 2 GPUs, TP 2, EP 2; a shape whose EP is not
    the product keeps the rule, and other sources' rows without the id's layout too."""
    row = _row(id="minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c256_cfg690", backend="vllm", backend_version="0.19.0",
               model_path="MiniMaxAI/MiniMax-M2.5", gemm_quant_mode="fp8", moe_quant_mode="fp8", tp_size="2",
               attention_dp_size="2", moe_tp_size="1", moe_ep_size="4", batch_size="128",
               silicon_data_source="db-dump/2026-04-27; config_id=690; silicon_concurrency=256")
    kw = sr.simulate_kwargs(row)
    assert (kw["tp"], kw["ep"], kw["gpus"]) == (2, 2, 2) and "attention_dp" not in kw
    other = sr.simulate_kwargs({**row, "silicon_data_source": "source_file=x.csv; silicon_concurrency=256"})
    assert (other["tp"], other["attention_dp"], other["gpus"]) == (4, 2, 4)
    assert sr.simulate_kwargs({**row, "moe_ep_size": "2"})["gpus"] == 4


def test_inferencex_vllm_rows_load_the_checkpoint_their_recipe_served():
    """The checkpoint as stored (vllm_checkpoint): NVIDIA's NVFP4 exports of Kimi-K2.5 and MiniMax-M2.5 and
    gpt-oss-120b's MXFP4 leave the attention 16-bit; gpt-oss on B200 keeps the rule's nvfp4 experts (its recipe's
    MXFP4 x MXFP8 kernel); a row whose scheme is the checkpoint's own keeps it (loaded as stored already)."""
    from whatif.inputs import scenario_from_inputs
    src = "source_file=2026-03-25.csv; model=x; silicon_concurrency=8; wip=False"
    vllm = dict(backend="vllm", silicon_data_source=src, tp_size="4", attention_dp_size="1", moe_tp_size="1",
                moe_ep_size="1", batch_size="8", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4")
    kimi = sr.simulate_kwargs(_row(model_path="moonshotai/Kimi-K2.5", **vllm))
    assert kimi["model"] == "nvidia/Kimi-K2.5-NVFP4" and "quantization" not in kimi and kimi["kv_dtype"] == "fp8"
    prec = scenario_from_inputs(None, {"model": kimi["model"]}, kv_dtype="fp8").precision
    assert prec.quantization == "nvfp4" and dict(prec.modules)["attention"] == "none"
    minimax = sr.simulate_kwargs(_row(model_path="MiniMaxAI/MiniMax-M2.5", **vllm))
    assert minimax["model"] == "nvidia/MiniMax-M2.5-NVFP4" and "expert_quantization" not in minimax
    prec = scenario_from_inputs(None, {"model": minimax["model"]}).precision
    assert (prec.weight, prec.expert_quantization) == ("bf16", "nvfp4")
    oss = sr.simulate_kwargs(_row(model_path="openai/gpt-oss-120b", **vllm))
    assert oss["model"] == "openai/gpt-oss-120b" and "quantization" not in oss and oss["expert_quantization"] == "nvfp4"
    prec = scenario_from_inputs(None, {"model": oss["model"]}, expert_quantization="nvfp4").precision
    assert (prec.weight, prec.expert_quantization) == ("bf16", "nvfp4")
    fp8 = sr.simulate_kwargs(_row(model_path="MiniMaxAI/MiniMax-M2.5", **{**vllm, "gemm_quant_mode": "fp8",
                                                                          "moe_quant_mode": "fp8"}))
    assert fp8["model"] == "MiniMaxAI/MiniMax-M2.5" and "quantization" not in fp8   # its fp8-block, as stored
    other = sr.simulate_kwargs(_row(model_path="moonshotai/Kimi-K2.5", **{**vllm, "silicon_data_source": "gap; "
                                                                          "silicon_concurrency=8"}))
    assert other["model"] == "moonshotai/Kimi-K2.5" and other["quantization"] == "nvfp4"   # not a recipe's run


def test_gpt_oss_experts_run_the_kernels_their_launch_picked():
    """gpt-oss-120b (added after scoring, session 53): vLLM on B200 with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8 and
    TensorRT-LLM's InferenceX recipe (moe_config.backend TRTLLM) run the TRTLLM-Gen MXFP4 x MXFP8 MoE; TensorRT-LLM
    serves the checkpoint as stored (attention 16-bit), its H100 gap-analysis rows the checkpoint's MXFP4 experts."""
    src = "source_file=2026-03-25.csv; model=x; silicon_concurrency=8; wip=False"
    common = dict(model_path="openai/gpt-oss-120b", silicon_data_source=src, tp_size="2", attention_dp_size="1",
                  moe_tp_size="2", moe_ep_size="1", batch_size="8", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4")
    vllm = sr.simulate_kwargs(_row(backend="vllm", **common))
    assert vllm["moe_kernels"] == "trtllm-gen-mxfp8" and vllm["expert_quantization"] == "nvfp4"   # (session 61)
    trt = sr.simulate_kwargs(_row(backend="trtllm", **common))
    assert "quantization" not in trt and trt["expert_quantization"] == "nvfp4"
    assert trt["moe_kernels"] == "trtllm-gen-mxfp8"
    assert trt["kv_dtype"] == "fp8" and (trt["max_num_batched_tokens"], trt["memory_utilization"]) == (20000, 0.85)
    gap = dict(common, system="h100_sxm", gemm_quant_mode="fp8", moe_quant_mode="fp8",
               silicon_data_source="source_file=/x/aic-auto-gap-analysis/data/h100_sxm/trtllm/1.3.0rc1/y.csv; "
                                   "silicon_concurrency=16")
    h100 = sr.simulate_kwargs(_row(backend="trtllm", **gap))
    assert not {"quantization", "expert_quantization", "moe_kernels"} & set(h100) and h100["kv_dtype"] == "fp8"
    hopper = sr.simulate_kwargs(_row(backend="vllm", **{**common, "system": "h100_sxm"}))   # VLLM_MXFP4_USE_MARLIN=1
    assert hopper["moe_kernels"] == "marlin" and "expert_quantization" not in hopper
    llama = sr.simulate_kwargs(_row(backend="trtllm", **{**common, "model_path": "meta-llama/Llama-3.1-70B"}))
    assert llama["quantization"] == "nvfp4" and "moe_kernels" not in llama   # other models as the rule maps them


def test_gptoss_trtllm_rows_capture_their_recipes_padded_graphs(monkeypatch):
    """gptoss_fp4_b200_trt.sh's cuda_graph_config (enable_padding, max_batch_size $CONC; session 72 J): TensorRT-LLM's
    [1, 2, 4] + multiples of 8 to the clients; above 128 clients (release-dependent sizes) and off: the profile's."""
    src = "source_file=2026-04-06.csv; model=x; silicon_concurrency={}; wip=False"
    common = dict(backend="trtllm", model_path="openai/gpt-oss-120b", tp_size="2", attention_dp_size="1",
                  moe_tp_size="2", moe_ep_size="1", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4")
    c32 = sr.simulate_kwargs(_row(silicon_data_source=src.format(32), batch_size="32", **common))
    assert c32["cuda_graph_sizes"] == [1, 2, 4, 8, 16, 24, 32]
    c256 = sr.simulate_kwargs(_row(silicon_data_source=src.format(256), batch_size="256", **common))
    assert "cuda_graph_sizes" not in c256
    monkeypatch.setattr(sr, "TRTLLM_GPTOSS_GRAPHS_MAPPED", False)
    assert "cuda_graph_sizes" not in sr.simulate_kwargs(_row(silicon_data_source=src.format(32), batch_size="32",
                                                             **common))


def test_gptoss_trtllm_rows_run_their_recipes_pdl(monkeypatch):
    """gptoss_fp4_b200_trt.sh exports TRTLLM_ENABLE_PDL=1 (session 72 J): its rows take the trtllm-pdl profile; a
    DeepSeek TensorRT-LLM InferenceX row (its recipe sets none) and the switch off keep trtllm."""
    src = "source_file=2026-04-06.csv; model=x; silicon_concurrency=8; wip=False"
    common = dict(backend="trtllm", silicon_data_source=src, tp_size="2", attention_dp_size="1", moe_tp_size="2",
                  moe_ep_size="1", batch_size="8", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4")
    assert sr.simulate_kwargs(_row(model_path="openai/gpt-oss-120b", **common))["kernel_engine"] == "trtllm-pdl"
    assert sr.simulate_kwargs(_row(**{**common, "tp_size": "4", "moe_tp_size": "4"}))["kernel_engine"] == "trtllm"
    monkeypatch.setattr(sr, "TRTLLM_GPTOSS_PDL_MAPPED", False)
    assert sr.simulate_kwargs(_row(model_path="openai/gpt-oss-120b", **common))["kernel_engine"] == "trtllm"


def test_inferencex_sglang_trtllm_deepseek_fp4_rows_load_nvidias_v2_checkpoint(monkeypatch):
    """sglang_trtllm_checkpoint: InferenceX's dsr1-fp4 configurations serve nvidia/DeepSeek-R1-0528-FP4-V2, whose MLA
    input projections stay 16-bit and whose o_proj is NVFP4; NVIDIA's first export keeps all attention 16-bit; a row
    of another source keeps the rule's nvfp4 on every layer."""
    from whatif.inputs import scenario_from_inputs
    src = "source_file=2026-04-06.csv; model=x; silicon_concurrency=8; wip=False"
    monkeypatch.setattr(sr, "NVIDIA_FP4_CHECKPOINTS_MAPPED", False)
    off = sr.simulate_kwargs(_row(backend="sglang", silicon_data_source=src, batch_size="8", tp_size="4",
                                  gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4"))
    assert off["model"] == "deepseek-ai/DeepSeek-R1" and off["quantization"] == "nvfp4"   # the flag off
    monkeypatch.setattr(sr, "NVIDIA_FP4_CHECKPOINTS_MAPPED", True)
    fp4 = dict(silicon_data_source=src, tp_size="4", attention_dp_size="1", moe_tp_size="1", moe_ep_size="4",
               batch_size="8", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4")
    for engine in ("sglang", "trtllm"):
        kw = sr.simulate_kwargs(_row(backend=engine, **fp4))
        assert kw["model"] == "nvidia/DeepSeek-R1-0528-FP4-V2" and "quantization" not in kw and kw["kv_dtype"] == "fp8"
    modules = dict(scenario_from_inputs(None, {"model": kw["model"]}).precision.modules)
    assert modules["attention"] == "none" and "attention_out" not in modules
    first = dict(scenario_from_inputs(None, {"model": "nvidia/DeepSeek-R1-NVFP4"}).precision.modules)
    assert first["attention"] == first["attention_out"] == "none"
    other = sr.simulate_kwargs(_row(**{**fp4, "silicon_data_source": "gap; silicon_concurrency=8"}))
    assert other["model"] == "deepseek-ai/DeepSeek-R1" and other["quantization"] == "nvfp4"
    fp8 = sr.simulate_kwargs(_row(silicon_data_source=src, batch_size="8"))
    assert fp8["model"] == "deepseek-ai/DeepSeek-R1"


def test_glm5_nvfp4_checkpoint_mapping_is_off_by_default_and_keeps_attention_16bit_when_on(monkeypatch):
    """GLM5_NVFP4_CHECKPOINT_MAPPED (tried in session 56, off): on, an InferenceX GLM-5 NVFP4 SGLang row loads
    nvidia/GLM-5-NVFP4 as stored (its exclude list leaves attention and o_proj 16-bit); off, the rule's nvfp4."""
    from whatif.inputs import scenario_from_inputs
    src = "source_file=2026-04-06.csv; model=GLM-5; silicon_concurrency=8; wip=False"
    glm = dict(backend="sglang", backend_version="nightly-dev", model_path="zhipuai/GLM-5", silicon_data_source=src,
               batch_size="8", tp_size="8", attention_dp_size="1", moe_tp_size="8", moe_ep_size="1",
               gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4")
    assert sr.GLM5_NVFP4_CHECKPOINT_MAPPED is False
    off = sr.simulate_kwargs(_row(**glm))
    assert off["model"] == "zhipuai/GLM-5" and off["quantization"] == "nvfp4"
    monkeypatch.setattr(sr, "GLM5_NVFP4_CHECKPOINT_MAPPED", True)
    on = sr.simulate_kwargs(_row(**glm))
    assert on["model"] == "nvidia/GLM-5-NVFP4" and "quantization" not in on
    modules = dict(scenario_from_inputs(None, {"model": on["model"]}).precision.modules)
    assert modules["attention"] == modules["attention_out"] == "none"


def test_inferencex_vllm_rows_launch_as_their_recipes():
    """KV dtype, memory fraction and scheduler limits from the InferenceX vLLM recipe (VLLM_RECIPES), in place of the
    aiconfigurator pairing (fp8 KV with a quantized GEMM) and the generator's batch_size per rank."""
    src = "source_file=2026-03-25.csv; model=MiniMax-M2.5; silicon_concurrency=8; wip=False"
    minimax = dict(backend="vllm", model_path="MiniMaxAI/MiniMax-M2.5", gemm_quant_mode="fp8", moe_quant_mode="fp8",
                   silicon_data_source=src, tp_size="4", attention_dp_size="1", moe_tp_size="1", moe_ep_size="4",
                   batch_size="8")
    kw = sr.simulate_kwargs(_row(system="h100_sxm", **minimax))
    assert "kv_dtype" not in kw and kw["memory_utilization"] == 0.90     # no --kv-cache-dtype: "auto", 16-bit
    assert kw["max_num_seqs"] == 256 and "max_num_batched_tokens" not in kw   # --max-num-seqs 256; vLLM's default
    b200 = sr.simulate_kwargs(_row(**minimax))
    assert b200["memory_utilization"] == 0.95 and "max_num_seqs" not in b200
    assert sr.simulate_kwargs(_row(backend_version="0.17.0", **minimax))["memory_utilization"] == 0.95
    # PR #947 moved the B200 fp8 recipe to v0.19.0 with fp8 KV, 2 x ISL tokens a step and 0.90
    new = sr.simulate_kwargs(_row(backend_version="0.19.0", isl="8192", **minimax))
    assert (new["kv_dtype"], new["max_num_batched_tokens"], new["memory_utilization"]) == ("fp8", 16384, 0.90)
    assert "max_num_seqs" not in new
    oss = sr.simulate_kwargs(_row(model_path="openai/gpt-oss-120b", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4",
                                  backend="vllm", silicon_data_source=src, tp_size="2", attention_dp_size="1",
                                  moe_tp_size="1", moe_ep_size="1", batch_size="8"))
    assert (oss["kv_dtype"], oss["max_num_seqs"], oss["max_num_batched_tokens"]) == ("fp8", 512, 8192)
    elsewhere = {**minimax, "silicon_data_source": "gap; silicon_concurrency=8"}
    other = sr.simulate_kwargs(_row(system="h100_sxm", **elsewhere))
    assert other["kv_dtype"] == "fp8" and "memory_utilization" not in other and other["max_num_seqs"] == 8


def test_minimax_nvfp4_b200_v019_rows_launch_pr996_with_2048_token_graphs():
    """minimaxm2.5-fp4-b200-vllm's v0.19.0 rows ran InferenceX PR #996's launch (minimaxm2.5_fp4_b200.sh at a52c31a:
    --max-cudagraph-capture-size 2048, --max-num-batched-tokens 2 x ISL, fp8 KV, no --max-num-seqs), so a 1k prompt
    replays piecewise graphs; the nightly rows before it keep PR #951's --max-num-seqs $CONC and vLLM's default
    ceiling (min(2 x 8, 512) = 16 tokens at 8 clients: a 1k prefill with no graph)."""
    src = "db-dump/2026-04-27; config_id=702; silicon_concurrency=8; measured=2026-04-08T00:00:00.000Z"
    row = dict(backend="vllm", model_path="MiniMaxAI/MiniMax-M2.5", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4",
               silicon_data_source=src, tp_size="2", attention_dp_size="1", moe_tp_size="1", moe_ep_size="1",
               batch_size="8", isl="1024")
    new = sr.simulate_kwargs(_row(backend_version="0.19.0", **row))
    assert new["cuda_graph_sizes"] == sr.VLLM_CAPTURE_SIZES_2048 and new["max_num_batched_tokens"] == 2048
    assert new["kv_dtype"] == "fp8" and "max_num_seqs" not in new and new["memory_utilization"] == 0.90
    old = sr.simulate_kwargs(_row(backend_version="nightly-5b8c30d62b754b57",
                                  **{**row, "silicon_data_source": "source_file=2026-03-25.csv; model=MiniMax-M2.5; "
                                     "silicon_concurrency=8; measured=2026-04-03; wip=True"}))
    assert "cuda_graph_sizes" not in old and old["max_num_seqs"] == 8 and "max_num_batched_tokens" not in old


def test_llama70b_b200_vllm_rows_launch_as_the_docker_recipes_and_keep_the_rules_precision():
    """70b_fp{8,4}_b200_docker.sh (bb4c7f9): fp8 KV, 8192 tokens a step, 512 sequences, 0.9; their checkpoint is
    not read, so the rule's precision stays (no vllm_checkpoint); other sources keep the generator's."""
    llama = dict(backend="vllm", backend_version="", model_path="meta-llama/Llama-3.1-70B", gemm_quant_mode="fp8",
                 moe_quant_mode="fp8", silicon_data_source="source_file=2026-04-06.csv; silicon_concurrency=8",
                 tp_size="4", attention_dp_size="1", moe_tp_size="1", moe_ep_size="1", batch_size="8")
    for quant in ("fp8", "nvfp4"):
        kw = sr.simulate_kwargs(_row(**{**llama, "gemm_quant_mode": quant, "moe_quant_mode": quant}))
        assert (kw["kv_dtype"], kw["max_num_seqs"], kw["max_num_batched_tokens"], kw["memory_utilization"]) == \
            ("fp8", 512, 8192, 0.90)
        assert kw["quantization"] == quant and kw["model"] == "meta-llama/Llama-3.1-70B"
    # 70b_fp8_h100_slurm.sh (2a205bb, added in session 69): --max-num-seqs $CONC, 8192 tokens, 0.9, on the v0.10.2
    # image whose default cudagraph_mode was PIECEWISE (master.yaml 78f6b8d; vllm-project/vllm#25444); its YAML's fp8
    # KV and async scheduling never applied (`--config=`, session 74 M): the checkpoint's 16-bit cache, synchronous
    h100 = sr.simulate_kwargs(_row(**{**llama, "system": "h100_sxm"}))
    assert (h100["max_num_seqs"], h100["max_num_batched_tokens"]) == (8, 8192) and "kv_dtype" not in h100
    assert h100["overlap_schedule"] is False
    assert h100["cudagraph_mode"] == "piecewise" and h100["memory_utilization"] == 0.90
    gap = {**llama, "system": "h100_sxm", "silicon_data_source": "gap; silicon_concurrency=8"}
    other = sr.simulate_kwargs(_row(**gap))
    assert other["max_num_seqs"] == 8 and other["max_num_batched_tokens"] == 8 + 1024 + 1500
    assert "cudagraph_mode" not in other


def test_trtllm_1_0_0rc3_generator_rows_launch_with_the_templates_kv_fraction():
    """extra_engine_args.1.0.0rc3.yaml.j2 writes free_gpu_memory_fraction 0.80 unless set (no rule sets it); other
    releases and other engines keep the spec's fraction."""
    llama = dict(model_path="meta-llama/Llama-3.1-8B-Instruct", gemm_quant_mode="", moe_quant_mode="",
                 attention_dp_size="", moe_ep_size="", moe_tp_size="", batch_size="16",
                 silicon_data_source="source_file=x.csv; silicon_concurrency=16")
    assert sr.simulate_kwargs(_row(backend_version="1.0.0rc3", **llama))["memory_utilization"] == 0.80
    assert "memory_utilization" not in sr.simulate_kwargs(_row(backend_version="1.2.0rc6", **llama))
    assert "memory_utilization" not in sr.simulate_kwargs(_row(backend="vllm", backend_version="1.0.0rc3", **llama))


def test_sglang_rows_the_generator_launched_take_sglangs_own_memory_fraction_from_release_0_5_3():
    """PR #10975's heuristic (0.5.3 on): one H100 at batch 16 reserves 512 + 8192 x 1.5 + 16 x 2 + 1/8 x 1024 MiB
    of 81,559 (0.841); eight B200 GPUs at batch 64 16384 x 1.5 + ... of 183,359 (0.857); earlier releases, other
    engines and InferenceX's recipe rows keep what they had."""
    qwen = dict(backend="sglang", model_path="Qwen/Qwen3-32B", system="h100_sxm", gemm_quant_mode="",
                moe_quant_mode="", attention_dp_size="", moe_ep_size="", moe_tp_size="", batch_size="16",
                silicon_data_source="source_file=x.csv; silicon_concurrency=16")
    assert sr.simulate_kwargs(_row(backend_version="0.5.8.post1", **qwen))["memory_utilization"] == 0.841
    assert "memory_utilization" not in sr.simulate_kwargs(_row(backend_version="0.5.1.post1", **qwen))
    assert sr.sglang_default_mem_fraction(_row(backend_version="0.5.9", **{**qwen, "system": "b200_sxm",
                                                                            "tp_size": "8"}), 64) == 0.857
    assert sr.sglang_default_mem_fraction(_row(backend_version="nightly-dev", **qwen), 16) is None
    assert sr.sglang_default_mem_fraction(_row(backend_version="0.5.8", **{**qwen, "backend": "vllm"}), 16) is None


def test_vllm_rows_run_the_allreduce_norm_fusion_where_their_recipe_or_release_has_it():
    """InferenceX's Llama-3.1-70B B200 vLLM recipes pass enable_fi_allreduce_fusion (its H100 recipe none), its
    Kimi-K2.5 B200 recipes fuse_allreduce_rms; vLLM 0.18 and later run it by default at -O2; 0.12-0.14 did not,
    0.15-0.17 are not established (left off)."""
    rows = [r for r in sr.load() if r["backend"] == "vllm" and r["mode"] == "agg"]
    def fused(system, model, version):
        return {sr.vllm_allreduce_fusion(r) for r in rows if r["system"] == system and model in r["model_path"]
                and r["backend_version"] == version}
    assert fused("b200_sxm", "Llama-3.1-70B", "") == {True} and fused("h100_sxm", "Llama-3.1-70B", "") == {False}
    assert fused("b200_sxm", "MiniMax-M2.5", "0.19.0") == {True}
    assert fused("b200_sxm", "MiniMax-M2.5", "0.17.0") == {False}
    assert fused("h100_sxm", "Qwen3-32B", "0.12.0") == {False}
    kimi = [r for r in rows if r["system"] == "b200_sxm" and "Kimi-K2.5" in r["model_path"]]
    assert {sr.vllm_allreduce_fusion(r) for r in kimi if sr.inferencex_run(r)} == {True}   # its recipes' flag
    row = next(r for r in rows if r["system"] == "b200_sxm" and "Llama-3.1-70B" in r["model_path"])
    assert sr.simulate_kwargs(row)["kernel_engine"] == sr.VLLM_FUSION_PROFILE
    # gptoss_fp4_b200.sh's config.yaml (fuse_allreduce_rms) on its v0.15.1 rows; the 2025-11 rows' launch not read
    assert fused("b200_sxm", "gpt-oss-120b", "0.15.1") == {True} and fused("b200_sxm", "gpt-oss-120b", "") == {False}


def test_gptoss_vllm_rows_capture_graphs_up_to_2048_tokens():
    """gptoss_fp4_b200.sh's config.yaml sets max-cudagraph-capture-size 2048 beside max-num-batched-tokens 8192
    (revisions 1fc5d73 and 34bc7c4, either side of PR #789's v0.15.1 image): its v0.15.1 rows' 1k prefills replay
    piecewise graphs. Session 71 K: so do the release-unrecorded 2025-11-02 rows, every v0.11-era revision of the
    B200 launch setting the same 2048 ceiling (`cuda-graph-sizes: 2048`, later `max-cudagraph-capture-size: 2048`)
    at 8,192 tokens a step; and gptoss_fp4_h100.sh's rows (its config.yaml at 1fc5d73: the same ceiling and budget
    beside --max-num-seqs $CONC). Other H100 vLLM launches keep vLLM's default ceiling."""
    rows = [r for r in sr.load() if r["backend"] == "vllm" and r["system"] == "b200_sxm" and r["mode"] == "agg"
            and "gpt-oss-120b" in r["model_path"] and r["tp_size"] == "8.0" and r["isl"] == "1024"]
    for version in ("0.15.1", ""):
        kw = next(sr.simulate_kwargs(r) for r in rows if r["backend_version"] == version)
        assert kw["cuda_graph_sizes"] == sr.VLLM_CAPTURE_SIZES_2048 and kw["max_num_batched_tokens"] == 8192
    h100 = [r for r in sr.load() if r["backend"] == "vllm" and r["system"] == "h100_sxm" and r["mode"] == "agg"]
    oss = next(sr.simulate_kwargs(r) for r in h100 if "gpt-oss-120b" in r["model_path"])
    assert oss["cuda_graph_sizes"] == sr.VLLM_CAPTURE_SIZES_2048 and oss["max_num_batched_tokens"] == 8192
    llama = next(sr.simulate_kwargs(r) for r in h100 if "Llama-3.1-70B" in r["model_path"])
    assert "cuda_graph_sizes" not in llama


def test_sglang_deepseek_b200_rows_under_dp_attention_gather_as_their_launch_had_no_a2a_backend(monkeypatch):
    """No B200 DeepSeek SGLang launch read names --moe-a2a-backend (SGLANG_A2A_RECIPES): under DP attention SGLang's
    MoE all-gathers every rank's tokens (moe_a2a "gather"); without DP attention, on other engines or GPUs and for
    aiconfigurator's own runs nothing is set (the NCCL all-to-all, as before)."""
    def a2a(**over):
        fields = dict(backend="sglang", system="b200_sxm", mode="disagg", tp_size="", attention_dp_size="",
                      silicon_data_source="db-dump/2026-04-27; config_id=641; silicon_concurrency=288",
                      prefill_attention_dp_size="8", decode_attention_dp_size="8")
        return sr.sglang_moe_a2a(_row(**{**fields, **over}), {})
    assert a2a() == {}                                                          # the rule is off (SGLANG_A2A_MAPPED)
    monkeypatch.setattr(sr, "SGLANG_A2A_MAPPED", True)
    assert a2a() == {"moe_a2a": "gather"}
    assert a2a(prefill_attention_dp_size="1") == {"moe_a2a": "gather"}          # the decode pool's DP attention
    assert a2a(prefill_attention_dp_size="1", decode_attention_dp_size="1") == {}
    assert a2a(mode="agg", attention_dp_size="1") == {}
    assert a2a(backend="trtllm") == {} and a2a(system="h100_sxm") == {}
    assert a2a(silicon_data_source="aic; silicon_concurrency=8") == {}


def test_sglang_deepseek_b200_prefill_pools_under_dp_attention_gather_and_their_decode_pools_do_not():
    """The prefill half of the launch rule (sglang_prefill_moe_a2a, session 62): a disaggregated SGLang DeepSeek B200
    row whose prefill workers run DP attention (no --moe-a2a-backend in the recipes) sets the cluster's
    prefill_moe_a2a "gather"; the decode pool's moe_a2a is left to SGLANG_A2A_MAPPED (off)."""
    def a2a(**over):
        fields = dict(backend="sglang", system="b200_sxm", mode="disagg", tp_size="", attention_dp_size="",
                      silicon_data_source="db-dump/2026-04-27; config_id=527; silicon_concurrency=512",
                      prefill_attention_dp_size="4", decode_attention_dp_size="8")
        return sr.sglang_prefill_moe_a2a(_row(**{**fields, **over}))
    assert a2a() == {"prefill_moe_a2a": "gather"}
    assert a2a(decode_attention_dp_size="1") == {"prefill_moe_a2a": "gather"}   # the prefill pool's own DP attention
    assert a2a(prefill_attention_dp_size="1") == {}
    assert a2a(mode="agg") == {} and a2a(backend="trtllm") == {} and a2a(system="h100_sxm") == {}
    assert a2a(silicon_data_source="aic; silicon_concurrency=8") == {}
    row = next(r for r in sr.load() if "_disagg_1024x1024_c512_cfg527" in r["id"])
    kw = sr.simulate_kwargs(row)
    assert kw["cluster"]["prefill_moe_a2a"] == "gather" and "moe_a2a" not in kw


def test_sglang_deepseek_b200_rows_without_dp_attention_run_sglang_05_all_reduce_fusion():
    """SGLang's server_args turns the FlashInfer all-reduce + RMSNorm fusion on for DeepSeek on sm100 without DP
    attention on one node (sglang_allreduce_fusion): B200 DeepSeek rows with attention DP 1 take the sglang-0.5
    profile; DP-attention rows, other models and H100 rows keep the base sglang profile."""
    rows = [r for r in sr.load() if r["backend"] == "sglang" and r["mode"] == "agg"]
    def engines(keep):
        out = set()
        for r in rows:
            if keep(r):
                try:
                    out.add(sr.simulate_kwargs(r)["kernel_engine"])
                except sr.NotExpressible:
                    pass
        return out
    ds = lambda r: "deepseek" in r["model_path"].lower() and r["system"] == "b200_sxm"   # noqa: E731
    assert engines(lambda r: ds(r) and sr._int(r["attention_dp_size"]) == 1) == {sr.SGLANG_FUSION_PROFILE}
    row = next(r for r in rows if ds(r))
    assert not sr.sglang_allreduce_fusion(row, {"attention_dp": 8}, 1)   # DP attention: SGLang leaves it off
    assert not sr.sglang_allreduce_fusion(row, {"attention_dp": 1}, 2)   # two nodes: off
    assert engines(lambda r: "Qwen3.5" in r["model_path"] or r["system"] == "h100_sxm") == {"sglang"}


def _srt_slurm_h100_tep16():
    """An srt-slurm H100 TensorRT-LLM disaggregated row (InferenceX config 494: a DEP16 prefill worker, three TEP16
    decode workers, 6 clients)."""
    return _disagg(system="h100_sxm", gemm_quant_mode="fp8", moe_quant_mode="fp8", isl="8192",
                   silicon_data_source="db-dump/2026-04-27; config_id=494; silicon_concurrency=6; measured=x",
                   prefill_tp_size="1", prefill_attention_dp_size="16", prefill_moe_tp_size="1",
                   prefill_moe_ep_size="16", decode_num_workers="3", decode_tp_size="16", decode_attention_dp_size="1",
                   decode_moe_ep_size="16", decode_moe_tp_size="1", decode_batch_size="2")


def test_a_db_dump_trtllm_disaggregated_row_runs_its_srt_slurm_recipes_limits():
    """InferenceX's dsr1-*-dynamo-trt configurations name an srt-slurm recipe per concurrency list: its gen
    max_batch_size (per rank) and ctx max_batch_size / max_num_tokens are what ran, not N / (workers x ranks);
    h100-fp8/8k1k/stp/ctx1_gen3_tep16_batch1: 3 decode slots for 6 clients. Other rows keep the generator's rule."""
    h100 = _srt_slurm_h100_tep16()
    assert sr.srt_slurm_trtllm_recipe(h100)[3] == "h100-fp8/8k1k/stp/ctx1_gen3_tep16_batch1_eplb0_mtp0"
    kw = sr.simulate_kwargs(h100)
    assert kw["max_num_seqs"] == 1
    assert (kw["cluster"]["prefill_max_batch"], kw["cluster"]["prefill_token_budget"]) == (1, 8224)
    other = {**h100, "silicon_data_source": h100["silicon_data_source"].replace("concurrency=6", "concurrency=7")}
    assert sr.srt_slurm_trtllm_recipe(other) is None and sr.simulate_kwargs(other)["max_num_seqs"] == 2
    assert sr.srt_slurm_trtllm_recipe({**h100, "backend": "sglang"}) is None


def test_an_srt_slurm_h100_trtllm_row_runs_nccl_without_nvls(monkeypatch):
    """The srt-slurm H100 TensorRT-LLM recipes set NCCL_NVLS_ENABLE=0 in the decode workers' environment: those rows
    take the trtllm-nvls-off profile (a two-node all-reduce without NVLS); B200 recipes, rows no recipe matches and
    the switch off keep trtllm (the recipes' TRTLLM_ENABLE_PDL left out here: the next test)."""
    monkeypatch.setattr(sr, "SRT_SLURM_TRTLLM_PDL_MAPPED", False)
    h100 = _srt_slurm_h100_tep16()
    assert sr.simulate_kwargs(h100)["kernel_engine"] == "trtllm-nvls-off"
    other = {**h100, "silicon_data_source": h100["silicon_data_source"].replace("concurrency=6", "concurrency=7")}
    assert sr.simulate_kwargs(other)["kernel_engine"] == "trtllm"
    monkeypatch.setattr(sr, "TRTLLM_NVLS_OFF_MAPPED", False)
    assert sr.simulate_kwargs(h100)["kernel_engine"] == "trtllm"


def test_srt_slurm_trtllm_rows_run_their_recipes_pdl(monkeypatch):
    """The srt-slurm TensorRT-LLM recipes export TRTLLM_ENABLE_PDL=1 to both pools where the decode pool has no
    attention DP (session 72 J2): the H100 tep16 rows take trtllm-nvls-off-pdl, a B200 tep8 row trtllm-pdl; a dep8
    recipe (PDL on its prefill pool only) and the switch off keep their profiles."""
    h100 = _srt_slurm_h100_tep16()
    assert sr.simulate_kwargs(h100)["kernel_engine"] == "trtllm-nvls-off-pdl"
    tep8 = _disagg(system="b200_sxm", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4", isl="1024",
                   decode_num_workers="5", decode_tp_size="8", decode_attention_dp_size="1", decode_moe_ep_size="8",
                   decode_moe_tp_size="1", silicon_data_source="db-dump/x; config_id=1; silicon_concurrency=45; m=x")
    assert sr.srt_slurm_trtllm_recipe(tep8)[3] == "b200-fp4/1k1k/stp/ctx1_gen5_tep8_batch32_eplb0_mtp0"
    assert sr.simulate_kwargs(tep8)["kernel_engine"] == "trtllm-pdl"
    dep8 = _disagg(system="b200_sxm", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4", isl="1024",
                   decode_num_workers="1", decode_tp_size="1", decode_attention_dp_size="8", decode_moe_ep_size="8",
                   decode_moe_tp_size="1", silicon_data_source="db-dump/x; config_id=1; silicon_concurrency=4096; m=x")
    assert sr.srt_slurm_trtllm_recipe(dep8) is not None and sr.simulate_kwargs(dep8)["kernel_engine"] == "trtllm"
    assert all(name in {r[3] for keyed in sr.SRT_SLURM_TRTLLM.values() for r in keyed.values()}
               for name in sr.SRT_SLURM_TRTLLM_PDL)
    monkeypatch.setattr(sr, "SRT_SLURM_TRTLLM_PDL_MAPPED", False)
    assert sr.simulate_kwargs(h100)["kernel_engine"] == "trtllm-nvls-off"
    assert sr.simulate_kwargs(tep8)["kernel_engine"] == "trtllm"


def test_a_db_dump_trtllm_disaggregated_row_runs_each_pools_moe_backend(monkeypatch):
    """The srt-slurm recipes set moe_config.backend per worker: b200-fp4/1k1k/stp/ctx1_gen1_dep8_batch512 runs
    TRTLLM on the ctx worker (trtllm-gen, the prefill pool) and CUTLASS on the gen worker (the per-class model);
    every B200 recipe is mapped; the H100 ones (no trtllm-gen kernels on Hopper) and the switch off map nothing."""
    row = _disagg(system="b200_sxm", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4", isl="1024",
                  backend_version="0.8.1.post1", decode_num_workers="1", decode_tp_size="1",
                  decode_attention_dp_size="8", decode_moe_ep_size="8", decode_moe_tp_size="1",
                  silicon_data_source="db-dump/2026-04-27; config_id=309; silicon_concurrency=4096; measured=x")
    assert sr.srt_slurm_trtllm_recipe(row)[3] == "b200-fp4/1k1k/stp/ctx1_gen1_dep8_batch512_eplb0_mtp0"
    assert sr.srt_slurm_trtllm_moe(row) == ({}, {"prefill_moe_kernels": "trtllm-gen"})
    kw = sr.simulate_kwargs(row)
    assert "moe_kernels" not in kw and kw["cluster"]["prefill_moe_kernels"] == "trtllm-gen"
    assert {r[3] for keyed in sr.SRT_SLURM_TRTLLM.values() for r in keyed.values()
            if r[3].startswith("b200")} == set(sr.SRT_SLURM_TRTLLM_MOE)
    assert sr.srt_slurm_moe_kernels("DEEPGEMM") == sr.DEEPGEMM_MOE_STANDIN
    assert sr.srt_slurm_moe_kernels("CUTLASS") is None
    monkeypatch.setattr(sr, "SRT_SLURM_MOE_MAPPED", False)
    assert sr.srt_slurm_trtllm_moe(row) == ({}, {})
    assert "prefill_moe_kernels" not in sr.simulate_kwargs(row)["cluster"]


def test_an_srt_slurm_trtllm_decode_worker_captures_its_recipes_cuda_graphs(monkeypatch):
    """h100-fp8/8k1k/stp/ctx1_gen2_tep16_batch64 lists cuda_graph_config.batch_sizes 1, 2, 4, 8, 16, 24, ..., 64, so
    49 sequences run the 56 graph (the profile's list pads them to 64); a B200 recipe giving max_batch_size 48 only
    captures TensorRT-LLM's generated [1, 2, 4, 8, 16, ..., 48]; rows no file was read for, or the switch off, keep
    the profile's list."""
    from whatif.scenario import Scenario
    h100 = _disagg(system="h100_sxm", gemm_quant_mode="fp8", moe_quant_mode="fp8", isl="8192",
                   silicon_data_source="db-dump/2026-04-27; config_id=503; silicon_concurrency=154; measured=x",
                   prefill_tp_size="1", prefill_attention_dp_size="16", prefill_moe_tp_size="1",
                   prefill_moe_ep_size="16", decode_num_workers="2", decode_tp_size="16", decode_attention_dp_size="1",
                   decode_moe_ep_size="16", decode_moe_tp_size="1", decode_batch_size="77")
    kw = sr.simulate_kwargs(h100)
    assert kw["cuda_graph_sizes"] == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64] and kw["max_num_seqs"] == 64
    spec = Scenario(kernel_engine="trtllm", hardware="h100-sxm", max_num_seqs=64,
                    cuda_graph_sizes=tuple(kw["cuda_graph_sizes"])).engine_spec()
    assert spec.graph_batch(49) == 56
    assert Scenario(kernel_engine="trtllm", hardware="h100-sxm", max_num_seqs=64).engine_spec().graph_batch(49) == 64
    assert sr.trtllm_padded_graph_sizes(48) == (1, 2, 4, 8, 16, 24, 32, 40, 48)
    assert sr.trtllm_padded_graph_sizes(20) == (1, 2, 4, 8, 16, 20)
    small = {**h100, "silicon_data_source": h100["silicon_data_source"].replace("=154", "=6"),
             "decode_num_workers": "3"}
    assert sr.srt_slurm_trtllm_recipe(small) is not None and "cuda_graph_sizes" not in sr.simulate_kwargs(small)
    monkeypatch.setattr(sr, "TRTLLM_RECIPE_GRAPHS_MAPPED", False)
    assert "cuda_graph_sizes" not in sr.simulate_kwargs(h100)


def test_a_db_dump_sglang_disaggregated_row_runs_its_srt_slurm_recipes_limits(monkeypatch):
    """NVIDIA/srt-slurm's b200-fp8/8k1k_stp_maxtpt_0.yaml (dep8 1p2d at 288 clients) launches each decode worker
    with --max-running-requests 128 (2 x 128 slots for 288 clients, where N / workers gives 144) and the prefill
    worker with 8 requests and a 65,536-token chunk (1 and 8,192 per rank); another N, or the switch off, keeps the
    generator's rule."""
    row = _disagg(backend="sglang", backend_version="0.5.8.post1", system="b200_sxm", gemm_quant_mode="fp8",
                  moe_quant_mode="fp8", isl="8192", decode_batch_size="18",
                  silicon_data_source="db-dump/2026-04-27; config_id=649; silicon_concurrency=288; measured=x")
    assert sr.srt_slurm_sglang_recipe(row)[3] == "b200-fp8/8k1k_stp_maxtpt_0.yaml"
    kw = sr.simulate_kwargs(row)
    assert kw["max_num_seqs"] == 128
    assert (kw["cluster"]["prefill_max_batch"], kw["cluster"]["prefill_token_budget"]) == (8, 65536)
    other = {**row, "silicon_data_source": row["silicon_data_source"].replace("=288", "=256")}
    assert sr.srt_slurm_sglang_recipe(other) is None and sr.simulate_kwargs(other)["max_num_seqs"] == 18 * 8
    assert sr.srt_slurm_sglang_recipe({**row, "backend": "trtllm"}) is None
    monkeypatch.setattr(sr, "SRT_SLURM_SGLANG_MAPPED", False)
    assert sr.srt_slurm_sglang_recipe(row) is None and sr.simulate_kwargs(row)["max_num_seqs"] == 18 * 8


def test_the_feb_fp8_ep8_runs_launch_ishandhanani_srt_slurm_8k_stp_sweep():
    """cfg453/455 (TP8 EP8 prefill, 1p4d at 64 and 1p1d at 4/32/64 clients) are 8k1k-stp.yaml at 89654bc: prefill
    --max-running-requests 512 and a 32,768-token chunk (not the generator's 1 request), decode 512; cfg457 (DP
    attention 8 both pools, 128 clients) is max-tpt-dep8-1p1d.yaml at 4aa224c; cfg459 (2p1d) matches no file read."""
    rows = {r["id"]: r for r in sr.load()}
    for cfg in ("c4_cfg455", "c32_cfg455", "c64_cfg455", "c64_cfg453"):
        row = rows[f"dsr1_b200_sglang_fp8_disagg_8192x1024_{cfg}"]
        assert sr.srt_slurm_sglang_recipe(row)[:3] == (512, 512, 32768), cfg
        assert sr.simulate_kwargs(row)["cluster"]["prefill_max_batch"] == 512
    assert sr.srt_slurm_sglang_recipe(rows["dsr1_b200_sglang_fp8_disagg_8192x1024_c128_cfg457"])[:3] == \
        (1024, 16, 131072)
    assert sr.srt_slurm_sglang_recipe(rows["dsr1_b200_sglang_fp8_disagg_8192x1024_c256_cfg459"]) is None
    assert sr.srt_slurm_sglang_recipe(rows["dsr1_b200_sglang_fp8_disagg_1024x1024_c4_cfg455"]) is None   # 1k: no file


def test_minimax_h100_vllm_rows_launch_piecewise_cuda_graphs(monkeypatch):
    """minimaxm2.5_fp8_h100.sh passes --compilation-config '{"cudagraph_mode":"PIECEWISE"}' (VLLM_CUDAGRAPH_MODES);
    the other vLLM recipes (gptoss_fp4_h100.sh, the B200 ones) keep the default; the switch turns the rule off."""
    rows = [r for r in sr.load() if r["backend"] == "vllm" and sr.inferencex_run(r) and r["mode"] == "agg"]
    minimax = [r for r in rows if "minimax-m2.5" in r["model_path"].lower() and r["system"] == "h100_sxm"]
    others = [r for r in rows if r not in minimax and ("gpt-oss" in r["model_path"].lower()
                                                       or r["system"] == "b200_sxm")]
    assert minimax and others
    mode = lambda r: sr.simulate_kwargs(r, 4).get("cudagraph_mode")  # noqa: E731
    assert all(mode(r) == "piecewise" for r in minimax[:5])
    assert all(mode(r) is None for r in others[:10] if not _not_expressible(r))
    monkeypatch.setattr(sr, "VLLM_CUDAGRAPH_MAPPED", False)
    assert mode(minimax[0]) is None


def _not_expressible(row) -> bool:
    try:
        sr.simulate_kwargs(row, 4)
    except sr.NotExpressible:
        return True
    return False


def test_deepseeks_own_fp8_checkpoint_runs_its_block_scales_on_trtllm(monkeypatch):
    """trtllm_deepseek_fp8_checkpoint: deepseek-ai/DeepSeek-R1 and -V3 are stored with 128x128 block scales, which
    TensorRT-LLM loads as such; the set's "fp8" rows read per-tensor under the first rule. SGLang rows, NVFP4 rows and
    other models keep the rule's mapping."""
    fp8 = dict(tp_size="8", attention_dp_size="1", moe_tp_size="8", moe_ep_size="1", batch_size="16",
               gemm_quant_mode="fp8", moe_quant_mode="fp8")
    kw = sr.simulate_kwargs(_row(**fp8))
    assert kw["quantization"] == "fp8-block" and "expert_quantization" not in kw and kw["kv_dtype"] == "fp8"
    assert sr.simulate_kwargs(_row(model_path="deepseek-ai/DeepSeek-V3", **fp8))["quantization"] == "fp8-block"
    assert sr.simulate_kwargs(_row(backend="sglang", **fp8))["quantization"] == "fp8"
    assert sr.simulate_kwargs(_row(**{**fp8, "gemm_quant_mode": "nvfp4", "moe_quant_mode": "nvfp4"}))[
        "quantization"] == "nvfp4"
    monkeypatch.setattr(sr, "TRTLLM_DEEPSEEK_FP8_BLOCK_MAPPED", False)
    assert sr.simulate_kwargs(_row(**fp8))["quantization"] == "fp8"


def test_inferencex_deepseek_trtllm_rows_launch_with_their_recipes_budget_and_kv_fraction(monkeypatch):
    """inferencex_dsr1_trt_launch: --max_num_tokens (CONC + ISL + 127) // 64 * 64 and fraction 0.8 on 1.1.0rc2.post2
    (6320e9b); an 8192 floor and the fp8 recipe's 0.7 / 0.75 on 1.2.0rc6.post2; the MTP recipe's (MTP + 1) x its
    max batch + ISL on 1.2.0rc6.post3; aiconfigurator's own runs keep the generator's rule."""
    def kw(version="1.2.0rc6.post2", quant="fp8", n=4, isl="1024", osl="1024", tp="8", adp="1", **over):
        image = f"nvcr.io/nvidia/tensorrt-llm/release:{version}"
        fields = dict(silicon_data_source=f"source_file=2026-04-06.csv; silicon_concurrency={n}; image={image}",
                      backend_version=version, tp_size=tp, attention_dp_size=adp, moe_tp_size=tp if adp == "1"
                      else "1", moe_ep_size="1" if adp == "1" else tp, batch_size=str(n), gemm_quant_mode=quant,
                      moe_quant_mode=quant, isl=isl, osl=osl)
        return sr.simulate_kwargs(_row(**{**fields, **over}))
    old = kw(version="1.1.0rc2.post2", n=64)
    assert old["max_num_batched_tokens"] == 1152 and old["memory_utilization"] == 0.8   # (64 + 1024 + 127) // 64 * 64
    assert kw()["max_num_batched_tokens"] == 8192 and kw()["memory_utilization"] == 0.8
    assert kw(isl="8192", n=256)["max_num_batched_tokens"] == 8512
    assert kw(n=256)["memory_utilization"] == 0.7 and kw(isl="8192", tp="4", n=32)["memory_utilization"] == 0.75
    assert kw(quant="nvfp4", n=256)["memory_utilization"] == 0.8
    mtp = kw(version="1.2.0rc6.post3", n=64)
    assert mtp["max_num_batched_tokens"] == 1344 and mtp["techniques"][0].startswith("mtp:k=3,")   # 4 x 64 + 1151
    assert kw(version="1.2.0rc6.post3", n=256, adp="8", tp="1")["max_num_batched_tokens"] == 1152   # 2 x 32 + 1151
    gen = kw(silicon_data_source="db; config_id=1; silicon_concurrency=4; measured=x")
    assert gen["max_num_batched_tokens"] == 4 + 1024 + 1500 and "memory_utilization" not in gen
    monkeypatch.setattr(sr, "INFERENCEX_DSR1_TRT_LAUNCH_MAPPED", False)
    assert kw()["max_num_batched_tokens"] == 2528


def test_unrecorded_inferencex_deepseek_trtllm_rows_run_their_sourced_image(monkeypatch):
    """sourced_release: an InferenceX DeepSeek TensorRT-LLM B200 row with no release, measured in the window
    (master.yaml at 78f6b8d to the -trt-mtp keys), runs 1.1.0rc2.post2's recipe; a named release, another date,
    engine or source, and the switch off leave the row as it is."""
    def row(measured="2025-11-02", **over):
        src = f"db-dump/2026-04-27; config_id=91; silicon_concurrency=64; measured={measured}T00:00:00.000Z"
        return _row(**{**dict(silicon_data_source=src, backend_version="", tp_size="8", attention_dp_size="1",
                              moe_tp_size="8", moe_ep_size="1", batch_size="64", gemm_quant_mode="nvfp4",
                              moe_quant_mode="nvfp4"), **over})
    assert sr.sourced_release(row())["backend_version"] == "1.1.0rc2.post2"
    kw = sr.simulate_kwargs(row())
    assert kw["max_num_batched_tokens"] == 1152 and kw["memory_utilization"] == 0.8   # (64 + 1024 + 127) // 64 * 64
    for kept in (row(backend_version="1.2.0rc6.post2"), row(measured="2026-01-14"), row(measured="2025-10-20"),
                 row(backend="sglang"), row(system="h100_sxm"), row(model_path="openai/gpt-oss-120b"),
                 row(silicon_data_source="db; config_id=1; silicon_concurrency=64; measured=2025-11-02")):
        assert sr.sourced_release(kept) is kept
    monkeypatch.setattr(sr, "INFERENCEX_DSR1_TRT_UNRECORDED_MAPPED", False)
    assert sr.sourced_release(row())["backend_version"] == ""
    generator = row(silicon_data_source="db; config_id=1; silicon_concurrency=64; measured=2025-11-02")
    assert sr.simulate_kwargs(row())["max_num_batched_tokens"] == sr.simulate_kwargs(generator)[
        "max_num_batched_tokens"] > 2500   # the generator's N + ISL + 1,500, as before


def test_unrecorded_inferencex_deepseek_trtllm_rows_run_their_config_layout(monkeypatch):
    """sourced_layout: those rows run the EP and attention DP master.yaml at 78f6b8d gives their (ISL/OSL, TP,
    CONC) point (each of the 43 held by exactly one bmk-space entry); a named release, a point the config holds
    at EP 1, and the switch off keep the recorded layout."""
    def row(n=64, isl="1024", osl="1024", tp="8", **over):
        src = f"db-dump/2026-04-27; config_id=91; silicon_concurrency={n}; measured=2025-11-02T00:00:00.000Z"
        return _row(**{**dict(silicon_data_source=src, backend_version="", tp_size=tp, attention_dp_size="1",
                              moe_tp_size=tp, moe_ep_size="1", batch_size=str(n), gemm_quant_mode="nvfp4",
                              moe_quant_mode="nvfp4", isl=isl, osl=osl), **over})
    rows = [r for r in sr.load() if sr.unrecorded_inferencex_dsr1_trt(r)]
    assert len(rows) == 43
    assert all(len(sr.config_layout_entries(r, sr._layout(r)["tp"], sr.concurrency(r))) == 1 for r in rows)
    kw = sr.simulate_kwargs(row())
    assert kw["tp"] == 8 and kw["ep"] == 8 and "attention_dp" not in kw   # TP8 EP8 at CONC 16-128
    kw = sr.simulate_kwargs(row(n=256, isl="8192", tp="4"))
    assert kw["tp"] == 4 and kw["ep"] == 4 and kw["attention_dp"] == 4 and kw["engine"]["attention_dp_balance"]
    assert sr.simulate_kwargs(row(n=8)).get("ep", 1) == 1   # TP8 at CONC 4-8: EP 1 in the config too
    assert sr.simulate_kwargs(row(n=16, gemm_quant_mode="fp8", moe_quant_mode="fp8"))["ep"] == 8   # fp8: EP = TP
    assert sr.simulate_kwargs(row(backend_version="1.2.0rc6.post2")).get("ep", 1) == 1   # named: as recorded
    monkeypatch.setattr(sr, "INFERENCEX_DSR1_TRT_LAYOUT_MAPPED", False)
    assert sr.simulate_kwargs(row()).get("ep", 1) == 1


def test_no_prefill_recompile_on_glm5_or_gptoss_rows():
    """The per-length compile stays off where its leads were checked and did not apply (docs/accuracy.md, session
    55 helper K): GLM-5's NSA builds of 2026-03-17/28 ran no Triton prefill transform; gpt-oss on B200 runs
    TRTLLM-Gen MoE (no triton_kernels top-k)."""
    rows = [r for r in sr.load() if ("glm-5" in r["model_path"].lower() or "gpt-oss" in r["model_path"].lower())
            and r["system"] == "b200_sxm" and r["mode"] == "agg"]
    assert len([r for r in rows if "glm-5" in r["model_path"].lower()]) == 46
    glm = [re.search(r"nightly-dev-cu13-(\d{8})", r["silicon_data_source"])
           for r in rows if "glm-5" in r["model_path"].lower()]
    assert all(m and "20260317" <= m[1] < "20260519" for m in glm)   # images built before the NSA -> DSA rename
    assert all(sr.sglang_l2norm_recompile(r) == {} for r in rows)


def test_sglang_gdn_rows_before_the_l2norm_fix_compile_per_new_prefill_length():
    """SGLang's FLA l2norm_fwd_kernel specialized on the prefill's token count until PR #31558 (2026-07-17): a
    Qwen3.5 row on 0.5.9 or an earlier nightly (its version, its image, or, for a gap-analysis copy, the copied
    InferenceX row's) pays L2NORM_COMPILE_S per new length; a later build, another model or engine does not."""
    src = "db-dump/2026-04-27; config_id=618; silicon_concurrency=4; measured=2026-03-24"
    qwen = dict(silicon_data_source=src, backend="sglang", backend_version="0.5.9",
                model_path="Qwen/Qwen3.5-397B-A17B", tp_size="8", attention_dp_size="1", moe_tp_size="8",
                moe_ep_size="1", batch_size="4", gemm_quant_mode="fp8", moe_quant_mode="fp8_block")
    on = {"prefill_recompile_s": sr.L2NORM_COMPILE_S}
    assert sr.sglang_l2norm_recompile(_row(**qwen)) == on
    assert sr.simulate_kwargs(_row(**qwen))["engine"]["prefill_recompile_s"] == sr.L2NORM_COMPILE_S
    assert sr.sglang_l2norm_recompile(_row(**{**qwen, "backend_version": "nightly-dev-20260402-d7256eb6"})) == on
    assert sr.sglang_l2norm_recompile(_row(**{**qwen, "backend_version": "nightly-dev-20260801-abcdef12"})) == {}
    assert sr.sglang_l2norm_recompile(_row(**{**qwen, "backend_version": "0.5.15"})) == {}
    assert sr.sglang_l2norm_recompile(_row(**{**qwen, "model_path": "deepseek-ai/DeepSeek-R1"})) == {}
    assert sr.sglang_l2norm_recompile(_row(**{**qwen, "backend": "vllm"})) == {}
    assert 0.05 < sr.L2NORM_COMPILE_S < 0.06   # PR #31558: 131.49 -> 78.82 ms mean TTFT
    gap = [r for r in sr.load() if r["silicon_data_source"].startswith("source_file=qwen3.5-397b-gap-analysis.csv")
           and r["backend_version"] == "nightly-dev" and sr.inferencex_run(r)]
    assert gap and all(sr._sglang_build(r).startswith("nightly-dev-2026") for r in gap)


def test_minimax_fp8_b200_vllm_0_17_rows_run_expert_parallel_as_their_recipe():
    """minimaxm2.5_fp8_b200.sh at 07e171a passes --enable-expert-parallel for EP_SIZE >= 1 (VLLM_ALWAYS_EP): its
    v0.17.0 rows recorded EP 1 run EP = TP; the v0.19.0 rows (PR #947: -gt 1) and other sources run as recorded."""
    src = "source_file=2026-03-25.csv; model=MiniMax-M2.5; silicon_concurrency=4; wip=False"
    minimax = dict(backend="vllm", model_path="MiniMaxAI/MiniMax-M2.5", gemm_quant_mode="fp8", moe_quant_mode="fp8",
                   silicon_data_source=src, tp_size="4", attention_dp_size="1", moe_tp_size="4", moe_ep_size="1",
                   batch_size="4")
    old = sr.simulate_kwargs(_row(backend_version="0.17.0", **minimax))
    assert (old["tp"], old["ep"], old["gpus"]) == (4, 4, 4)
    assert "ep" not in sr.simulate_kwargs(_row(backend_version="0.19.0", **minimax))
    assert "ep" not in sr.simulate_kwargs(_row(backend_version="0.17.0", system="h100_sxm", **minimax))
    other = {**minimax, "silicon_data_source": "gap; silicon_concurrency=4"}
    assert "ep" not in sr.simulate_kwargs(_row(backend_version="0.17.0", **other))


def test_kimi_nvfp4_b200_vllm_0_17_rows_recorded_ep4_run_tensor_parallel_experts():
    """kimik2.5_fp4_b200.sh passes no --enable-expert-parallel in any launch the v0.17.0 rows ran (VLLM_NEVER_EP):
    a row recorded TP 4, EP 4 runs TP 4 with the experts sharded over the TP ranks, as the recorded EP 1 rows; the
    same layout on another release, model or source keeps its EP."""
    src = "source_file=2026-03-25.csv; model=Kimi-K2.5; silicon_concurrency=4; wip=False"
    kimi = dict(backend="vllm", model_path="moonshotai/Kimi-K2.5", gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4",
                silicon_data_source=src, tp_size="4", attention_dp_size="1", moe_tp_size="1", moe_ep_size="4",
                batch_size="4")
    kw = sr.simulate_kwargs(_row(backend_version="0.17.0", **kimi))
    assert (kw["tp"], kw["gpus"], "ep" in kw) == (4, 4, False)
    assert sr.simulate_kwargs(_row(backend_version="0.19.0", **kimi))["ep"] == 4
    other = {**kimi, "silicon_data_source": "gap; silicon_concurrency=4"}
    assert sr.simulate_kwargs(_row(backend_version="0.17.0", **other))["ep"] == 4
    stored = [r for r in sr.load() if "Kimi" in r["model_path"] and r["backend_version"] == "0.17.0"
              and r["gemm_quant_mode"] == "nvfp4" and sr.inferencex_run(r)]
    assert stored and all("ep" not in sr.simulate_kwargs(r) for r in stored)


def test_minimax_fp8_b200_vllm_0_17_rows_run_triton_experts_as_their_recipe():
    """minimaxm2.5_fp8_b200.sh at 07e171a exports VLLM_USE_FLASHINFER_MOE_FP8=0 and VLLM_MOE_USE_DEEP_GEMM=0
    (VLLM_RELEASE_MOE_KERNELS): its v0.17.0 rows' experts run moe_kernels triton; the v0.19.0 rows (PR #947) and the
    H100 rows keep the engine's own experts."""
    src = "source_file=2026-03-25.csv; model=MiniMax-M2.5; silicon_concurrency=4; wip=False"
    minimax = dict(backend="vllm", model_path="MiniMaxAI/MiniMax-M2.5", gemm_quant_mode="fp8", moe_quant_mode="fp8",
                   silicon_data_source=src, tp_size="4", attention_dp_size="1", moe_tp_size="4", moe_ep_size="1",
                   batch_size="4")
    assert sr.simulate_kwargs(_row(backend_version="0.17.0", **minimax)).get("moe_kernels") == "triton"
    assert "moe_kernels" not in sr.simulate_kwargs(_row(backend_version="0.19.0", **minimax))
    assert "moe_kernels" not in sr.simulate_kwargs(_row(backend_version="0.17.0", system="h100_sxm", **minimax))


def test_an_inferencex_sglang_launch_measured_two_ways_on_one_date_is_not_scored(monkeypatch):
    """InferenceX ran dsr1-fp8-b200-sglang and its -mtp key on one image: two measurements of one launch are one of
    each, and the row does not say which (stp_or_mtp_unknown); a launch measured once stays scored."""
    src = ("source_file=2026-03-25.csv; silicon_concurrency=4; measured=2026-03-25T16:34:14Z; "
           "image=lmsysorg/sglang:v0.5.9-cu130")
    tp8 = dict(backend="sglang", silicon_data_source=src, tp_size="8.0", pp_size="1.0", attention_dp_size="1.0",
               moe_tp_size="8.0", moe_ep_size="1.0", gemm_quant_mode="fp8")
    plain, spec, other = _row(**tp8, silicon_tpot_ms="8.76"), _row(**tp8, silicon_tpot_ms="6.70"), \
        _row(**tp8, isl="8192", silicon_tpot_ms="6.77")
    monkeypatch.setattr(sr, "load", lambda: [plain, spec, other])
    monkeypatch.setattr(sr, "_LAUNCH_MEASUREMENTS", {})
    assert "2 ways" in sr.stp_or_mtp_unknown(plain) and "2 ways" in sr.stp_or_mtp_unknown(spec)
    assert sr.stp_or_mtp_unknown(other) == ""
    with pytest.raises(sr.NotExpressible, match="speculative"):
        sr.simulate_kwargs(plain)
    monkeypatch.setattr(sr, "INFERENCEX_STP_MTP_PAIRS_SCORED", True)
    assert sr.stp_or_mtp_unknown(plain) == ""


def test_a_trtllm_deepseek_run_on_the_image_inferencex_ran_plain_and_with_mtp_is_not_scored(monkeypatch):
    """From PR #392 (2026-01-07) InferenceX ran dsr1-*-b200-trt and -trt-mtp on release 1.1.0rc2.post2: a row of that
    image measured from then on does not say which (trt_stp_or_mtp_unknown); earlier ones and other images stay."""
    def row(measured, version="1.1.0rc2.post2", **over):
        src = (f"source_file=2026-04-06.csv; silicon_concurrency=4; measured={measured}T00:00:00Z; "
               f"image=nvcr.io/nvidia/tensorrt-llm/release:{version}")
        return _row(silicon_data_source=src, backend_version=version, tp_size="8", attention_dp_size="1",
                    moe_tp_size="1", moe_ep_size="8", batch_size="4", gemm_quant_mode="fp8", moe_quant_mode="fp8",
                    **over)
    assert "MTP" in sr.trt_stp_or_mtp_unknown(row("2026-01-14"))
    assert sr.trt_stp_or_mtp_unknown(row("2025-12-15")) == ""                  # before the -trt-mtp keys
    assert sr.trt_stp_or_mtp_unknown(row("2026-01-29", version="1.2.0rc6.post2")) == ""
    assert sr.trt_stp_or_mtp_unknown(row("2026-01-14", backend="sglang")) == ""
    with pytest.raises(sr.NotExpressible, match="PR #392"):
        sr.simulate_kwargs(row("2026-01-14"))
    monkeypatch.setattr(sr, "INFERENCEX_TRT_STP_OR_MTP_SCORED", True)
    assert sr.trt_stp_or_mtp_unknown(row("2026-01-14")) == ""


def test_a_row_whose_batch_size_reads_as_attention_dp_or_a_per_gpu_batch_is_not_scored(monkeypatch):
    """batch_size x tp_size = N with attention_dp_size empty: attention DP over the TP ranks (the file's
    batch_size x attention_dp_size = N) or agg_pool's per-GPU figure; not recorded (attention_layout_unrecorded)."""
    def row(n, bs, tp="4", adp=""):
        return _row(silicon_data_source=f"gap.csv; gtl_job_id=1; silicon_concurrency={n}; measured=2026-03-17",
                    model_path="nvidia/DeepSeek-R1-NVFP4", backend_version="1.3.0rc1", tp_size=tp,
                    attention_dp_size=adp, moe_tp_size="1", moe_ep_size=tp, batch_size=bs,
                    gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4")
    assert "not recorded" in sr.attention_layout_unrecorded(row(224, "56.0"))
    assert sr.attention_layout_unrecorded(row(224, "224")) == ""                # one TP replica's batch
    assert sr.attention_layout_unrecorded(row(224, "56", adp="4")) == ""        # recorded attention DP
    assert sr.attention_layout_unrecorded(row(56, "56", tp="1")) == ""
    with pytest.raises(sr.NotExpressible, match="attention_dp_size empty"):
        sr.simulate_kwargs(row(224, "56.0"))
    monkeypatch.setattr(sr, "UNRECORDED_ATTENTION_LAYOUT_SCORED", True)
    assert sr.attention_layout_unrecorded(row(224, "56.0")) == ""


def test_a_disaggregated_sglang_tp8_decode_worker_fuses_on_its_own_node():
    """A disaggregated row's decode worker is its own one-node server (worker_nodes): the 1p TP4 + 1d TP8 NVFP4
    deployment spans two nodes, yet its TP8 decode worker runs SGLang's all-reduce fusion (the srt-slurm recipe
    passes enable-flashinfer-allreduce-fusion); DISAGG_WORKER_NODES off restores the deployment's count."""
    row = next(r for r in sr.load() if r["id"] == "dsr1_b200_sglang_fp4_disagg_8192x1024_c4_cfg535")
    assert sr.worker_nodes(row, 8, 2) == 1
    assert sr.simulate_kwargs(row)["kernel_engine"] == sr.SGLANG_FUSION_PROFILE
    try:
        sr.DISAGG_WORKER_NODES = False
        assert sr.worker_nodes(row, 8, 2) == 2
        assert sr.simulate_kwargs(row)["kernel_engine"] == "sglang"
    finally:
        sr.DISAGG_WORKER_NODES = True
    agg = next(r for r in sr.load() if r["backend"] == "sglang" and r["mode"] == "agg")
    assert sr.worker_nodes(agg, 8, 3) == 3   # an aggregated row: the deployment's nodes, as before


def test_sglang_fp4_rows_whose_recipe_leaves_the_prefill_backend_unset_build_cudnn_plans(monkeypatch):
    """SGLang 0.5.8.post1 passes --fp4-gemm-backend auto to FlashInfer 0.6.1's mm_fp4, cuDNN first on CUDA 13, one
    graph and plans per new token count (sglang_fp4_cudnn_plans, session 70 J): only the rows of srt-slurm
    b200-fp4/1k1k.yaml's STP variants (the prefill sets no backend); 8k1k.yaml sets one; fp8 rows run no NVFP4 GEMM."""
    rows = {r["id"]: r for r in sr.load() if r["backend"] == "sglang" and r["mode"] == "disagg"}
    assert not any(sr.sglang_fp4_cudnn_plans(r) for r in rows.values())   # off until the image's cuDNN is read
    monkeypatch.setattr(sr, "FP4_CUDNN_PLANS_MAPPED", True)
    on = {"prefill_recompile_s": pytest.approx(sr.FP4_CUDNN_SHAPES * sr.FP4_CUDNN_PLAN_S)}
    assert sr.sglang_fp4_cudnn_plans(rows["dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg527"]) == on
    assert sr.sglang_fp4_cudnn_plans(rows["dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg532"]) == on
    charged = [i for i, r in rows.items() if sr.sglang_fp4_cudnn_plans(r)]
    assert sorted(charged) == ["dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg527",
                               "dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg532"]
    row = rows["dsr1_b200_sglang_fp4_disagg_1024x1024_c512_cfg527"]
    assert sr.sglang_fp4_cudnn_plans({**row, "backend_version": "0.5.9"}) == {}
    assert "prefill_recompile_s" in sr.simulate_kwargs(row)["engine"]


def test_qwen3_32b_trtllm_rc3_fp8_runs_block_scales_only_when_mapped(monkeypatch):
    """Session 72 I2's switch: off (the checkpoint is not established), the rows keep per-tensor fp8; on, only the
    TensorRT-LLM 1.0.0rc3 Qwen3-32B fp8 rows take fp8-block."""
    row = {"backend": "trtllm", "backend_version": "1.0.0rc3", "model_path": "Qwen/Qwen3-32B",
           "gemm_quant_mode": "fp8"}
    kw = {"quantization": "fp8", "kv_dtype": "fp8"}
    sr.trtllm_qwen3_32b_fp8_block(row, kw)
    assert kw["quantization"] == "fp8"
    monkeypatch.setattr(sr, "QWEN3_32B_TRT_RC3_FP8_BLOCK_MAPPED", True)
    sr.trtllm_qwen3_32b_fp8_block(row, kw)
    assert kw == {"quantization": "fp8-block", "kv_dtype": "fp8"}
    for other in ({"backend_version": "1.2.0rc6.post1"}, {"backend": "vllm"}, {"gemm_quant_mode": ""},
                  {"model_path": "meta-llama/Llama-3.1-8B-Instruct"}):
        kw = {"quantization": "fp8"}
        sr.trtllm_qwen3_32b_fp8_block({**row, **other}, kw)
        assert kw == {"quantization": "fp8"}
