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
    assert kw["traffic"]["requests"] == 16 * (sr.WARMUP_ROUNDS + sr.ROUNDS)


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
    assert sr.simulate_kwargs(_row(silicon_data_source=image + "post3", **tp))["techniques"] == ["mtp:k=3"]
    assert sr.simulate_kwargs(_row(silicon_data_source=image + "post3"))["techniques"] == ["mtp:k=1"]  # attention DP
    assert "techniques" not in sr.simulate_kwargs(_row(silicon_data_source=image + "post2", **tp))
    assert "techniques" not in sr.simulate_kwargs(_row(silicon_data_source=image + "post3", backend="sglang", **tp))


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
    # (64 rows: TTFT 1,656% MAPE from TRT-LLM DeepSeek NVFP4 rows predicted 100x+ high, median 60.4%, 24 off by
    # 3x; TPOT 21.9%, 24.0% before the DeepSeek layout / MTP / MLA-module changes): pinned where they are, the
    # targets are not met
    assert ttft["mape"] < 2000 and ttft["median_ape"] < 66 and ttft["off3x"] <= 26, ttft
    assert tpot["mape"] < 23, tpot


@pytest.mark.slow
def test_the_whole_file():
    results = sr.run_all(sr.load(), jobs=2)
    assert not [r.reason for r in results if r.reason.startswith("internal error")]
    ok = [r for r in results if r.expressible]
    # 2,401 (2,423 before 22 DeepSeek-R1 attention-DP rows were found to run MTP, which the per-rank
    # attention-DP simulation refuses with its reason)
    assert len(ok) >= 2401
    ttft, tpot = sr.stats(ok, "ttft"), sr.stats(ok, "tpot")
    assert ttft["mape"] < 125 and ttft["median_ape"] < 52 and ttft["off3x"] <= 700, ttft   # (2,401: 109.2%, 49.9%, 684)
    assert tpot["mape"] < 17, tpot                               # (16.1%; 22.6% before)
