"""benchmarks/serving_signatures.py: signatures read from the serving set's measured TTFT alone (the decode-time
slope of a run's TTFT, the light-load excess over the prediction), on made-up rows and on the committed table."""
import pytest

from tests.benchmark_module import load_benchmark

sg = load_benchmark("serving_signatures")


def _row(osl: int, n: int, ttft: float, tpot: float = 10.0, predicted: float = 50.0, **over) -> dict:
    row = {"id": f"r{osl}-{n}", "engine": "trtllm", "version": "1.0", "source": "f.csv", "model": "m",
           "system": "h100_sxm", "mode": "agg", "tp": "1", "isl": "1024", "osl": str(osl), "concurrency": str(n),
           "measured_ttft_ms": str(ttft), "measured_tpot_ms": str(tpot), "predicted_ttft_ms": str(predicted)}
    row.update(over)
    return row


def test_fit_line_recovers_a_line_and_refuses_one_x():
    assert sg.fit_line([1.0, 2.0, 4.0], [5.0, 7.0, 11.0]) == pytest.approx((2.0, 3.0))
    with pytest.raises(ValueError, match="all equal"):
        sg.fit_line([2.0, 2.0], [1.0, 3.0])


def test_a_wait_for_the_next_completion_reads_slope_one_and_a_flat_ttft_zero():
    waits = [_row(osl, 8, 60 + (osl - 1) * 10.0 / 8) for osl in (128, 256, 512)]
    flat = [_row(osl, 16, 80.0, model="flat") for osl in (128, 256, 512)]
    found = sg.slopes(waits + flat)
    by_model = {run[3]: groups for run, groups in found.items()}
    (tp, isl, n, slope, icpt), = by_model["m"]
    assert (tp, isl, n) == (1, 1024, 8) and slope == pytest.approx(1.0) and icpt == pytest.approx(60.0)
    assert by_model["flat"][0][3] == pytest.approx(0.0)


def test_slopes_skip_groups_with_too_few_outputs_and_loads_over_the_limit():
    two = [_row(osl, 8, 100.0 + osl) for osl in (128, 256)]
    busy = [_row(osl, 64, 100.0 + osl) for osl in (128, 256, 512)]
    assert sg.slopes(two + busy, max_clients=32) == {}
    assert len(sg.slopes(busy, max_clients=64)) == 1


def test_light_load_excess_reads_the_lowest_concurrency_only():
    rows = [_row(128, 4, 150.0, predicted=50.0), _row(256, 4, 130.0, predicted=50.0),
            _row(128, 64, 900.0, predicted=100.0)]
    (n, diff, ratio, count), = sg.light_load_excess(rows).values()
    assert (n, count) == (4, 2) and diff == pytest.approx(90.0) and ratio == pytest.approx((1 / 3 + 50 / 130) / 2)


def test_only_the_llama_run_of_tensorrt_llm_1_0_waits_a_completion_in_the_committed_table():
    """The finding docs/accuracy.md quotes: among the aiperf runs of TensorRT-LLM 1.0.0rc3 on H100 (one source,
    one release), Llama-3.1-8B's TTFT grows by D / N with the output length, Qwen3-32B's and Qwen3-235B's do not."""
    found = sg.slopes(sg.load())
    median = {run[2].rsplit("/", 1)[-1]: sorted(g[3] for g in groups)[len(groups) // 2]
              for run, groups in found.items() if run[0] == "trtllm" and run[1] == "1.0.0rc3"}
    assert 0.8 < median["meta-llama_Llama-3.1-8B-Instruct.csv"] < 1.2
    assert abs(median["Qwen_Qwen3-32B.csv"]) < 0.2 and abs(median["Qwen_Qwen3-235B-A22B-FP8.csv"]) < 0.2


def test_the_token_rate_is_a_closed_loops_output_over_its_cycle_and_compares_tp_sizes():
    row = _row(101, 8, 100.0, tpot=9.0)   # cycle 100 + 100 x 9 = 1,000 ms: 8 x 101 tokens a second
    assert sg.tokens_per_s(row) == pytest.approx(808.0)
    rows = [row, _row(101, 8, 100.0, tpot=4.0, tp="2"), _row(101, 4, 50.0, tp="4")]
    (n, rates), = sg.rate_by_tp(rows).values()
    assert n == 8 and sorted(rates) == [1, 2] and rates[2] == pytest.approx(8 * 101 / 0.5)


def test_output_length_twins_split_a_ttft_excess_into_a_prefill_stall_and_the_rest():
    """Two rows that differ only in output length: the TPOT excess that shrinks as 1 / (OSL - 1) is the other
    clients' prefills stalling the decodes (S per prefill); the TTFT excess left over is R."""
    def row(osl, n=4, stall=100.0, base=1.0):
        tpot = 10.0 + base + (n - 1) * stall / (osl - 1)
        return _row(osl, n, 200.0, tpot=tpot, predicted=50.0, predicted_tpot_ms="10.0", ep="1", gemm_quant="fp8")
    (run, pairs), = sg.prefill_stall([row(1024), row(8192), row(1024, n=64)]).items()
    (tp, ep, quant, isl, n, stall, rest), = pairs        # N = 64 is over the default limit
    assert (tp, isl, n) == ("1", "1024", "4") and stall == pytest.approx(100.0) and rest == pytest.approx(50.0)
    assert sg.prefill_stall([row(1024)]) == {}          # no twin


def test_qwen35_on_sglang_stalls_its_decodes_more_per_prefill_than_deepseek_in_the_committed_table():
    """The reading the session-51 note quotes: on SGLang 0.5.9 (InferenceX, B200) each Qwen3.5-397B prefill holds the
    running decodes ~90-170 ms longer than whatif prices it, DeepSeek's ~40-75 ms; both leave ~20-90 ms of each
    request's TTFT excess outside the step loop."""
    found = sg.prefill_stall(sg.load())
    med = {}
    for run, pairs in found.items():
        if run[0] == "sglang" and run[1] == "0.5.9":
            med.setdefault(run[3], []).extend(p[-2] for p in pairs)
    qwen = sorted(med["Qwen/Qwen3.5-397B-A17B"])[len(med["Qwen/Qwen3.5-397B-A17B"]) // 2]
    deepseek = sorted(med["deepseek-ai/DeepSeek-R1"])[len(med["deepseek-ai/DeepSeek-R1"]) // 2]
    # (committed table at fd8d98f: 164 and 54 ms; it reads predictions too, so the bound is loose)
    assert qwen > 60 and qwen - deepseek > 40, (qwen, deepseek)


def test_excess_by_load_keeps_a_flat_excess_flat_and_a_queued_one_rising():
    flat = [_row(1024, n, 300.0, predicted=100.0) for n in (4, 8, 16)]
    rising = [_row(8192, n, 100.0 + 50 * n, predicted=100.0) for n in (4, 8)]
    lone = [_row(512, 4, 90.0)]
    (run, layouts), = sg.excess_by_load(flat + rising + lone).items()
    by_osl = {g[4]: g[5] for g in layouts}
    assert set(by_osl) == {"1024", "8192"}    # one concurrency alone is no curve
    assert by_osl["1024"] == {4: 200.0, 8: 200.0, 16: 200.0}
    assert by_osl["8192"] == {4: 200.0, 8: 400.0}


def test_qwen35_at_tp8_on_sglang_misses_the_same_ms_at_4_to_16_clients_in_the_committed_table():
    runs = sg.excess_by_load(sg.load())
    qwen = [g for run, gs in runs.items() if run[0] == "sglang" and run[3] == "Qwen/Qwen3.5-397B-A17B"
            and run[1] == "0.5.9" for g in gs if g[:5] == ("8", "1", "fp8", "1024", "1024")]
    assert qwen
    for *_, excess in qwen:
        assert set(excess) == {4, 8, 16}
        assert max(excess.values()) - min(excess.values()) < 60   # flat (221 / 215 / 238 ms at 270983d)


def test_a_closed_loops_rate_and_requests_in_service_follow_littles_law():
    """N / (TTFT + D) requests a second and N x D / (TTFT + D) decoding, from the measured or the predicted means."""
    row = _row(101, 8, 100.0, tpot=9.0, predicted=400.0, predicted_tpot_ms="6.0")   # cycles 1,000 and 1,000 ms
    assert sg.requests_per_s(row) == pytest.approx(8.0) and sg.in_service(row) == pytest.approx(7.2)
    assert sg.requests_per_s(row, "predicted") == pytest.approx(8.0)
    assert sg.in_service(row, "predicted") == pytest.approx(4.8)
    heavy = sg.heavy_load([row, _row(101, 64, 100.0, predicted_tpot_ms="10.0")], min_clients=64)
    (key, by_tp), = heavy.items()
    assert key[1:] == (1024, 101, 64) and set(by_tp) == {1}


def test_the_cycle_split_tells_a_rate_error_from_a_split_error():
    """Same rate, TTFT x0.25: the prediction decodes more of the cycle (a split error, rate x1.00)."""
    split = _row(101, 64, 400.0, tpot=9.0, predicted=100.0, predicted_tpot_ms="12.0")    # 1,300 ms cycles both
    (count, rate, ttft, share, pshare), = sg.cycle_split([split]).values()
    assert count == 1 and rate == pytest.approx(1.0) and ttft == pytest.approx(0.25)
    assert share == pytest.approx(900 / 1300) and pshare == pytest.approx(1200 / 1300)
    assert sg.cycle_split([split], min_clients=128) == {}


def test_tensorrt_llm_1_0_llama_at_heavy_load_has_its_rate_right_and_its_ttft_split_wrong_in_the_committed_table():
    """The session-53 reading (issue 37) docs/accuracy.md quotes: Llama-3.1-8B on TensorRT-LLM 1.0.0rc3 (H100, N 64-128)
    is predicted at the measured request rate (median within 10%) while its TTFT reads x0.3-0.45: the prediction
    decodes a larger share of each client's cycle than the deployment did, it does not run faster."""
    found = {run[2].rsplit("/", 1)[-1]: v for run, v in sg.cycle_split(sg.load()).items()
             if run[0] == "trtllm" and run[1] == "1.0.0rc3"}
    count, rate, ttft, share, pshare = found["meta-llama_Llama-3.1-8B-Instruct.csv"]
    assert count >= 60 and 0.9 < rate < 1.1 and 0.3 < ttft < 0.45 and share < pshare - 0.04


def test_decode_slots_in_service_read_a_cap_below_the_derived_batch():
    """Little's law on a disaggregated row: 6 clients over 3 decode workers, each request decoding (0.9 x 1,000 - 1)
    x 10 ms (sa-bench's mean output): a TTFT as long as the decode time leaves half the clients decoding, one per
    worker, where the set's decode_batch_size implies 2."""
    capped = _row(1000, 6, ttft=8_990.0, mode="disagg", source="db-dump/2026-04-27", decode_ranks="3")
    assert sg.decode_in_service(capped) == pytest.approx((1.0, 2.0), rel=1e-3)
    assert sg.decode_in_service(_row(1024, 6, 100.0)) is None   # aggregated: no decode pool


def test_a_ttft_miss_splits_exactly_into_a_rate_term_and_a_decode_term():
    """measured - predicted TTFT = (measured - predicted cycle) + (predicted - measured decode time); a db-dump row's
    sa-bench clients average 0.9 x OSL. A decode priced slow with the rate right puts the whole miss in the decode
    term."""
    row = _row(1024, 64, 3000.0, tpot=20.0, predicted=1000.0, predicted_tpot_ms="22.0", source="db-dump/x",
               mode="disagg")
    rate, dec = sg.ttft_miss_terms(row)
    assert rate + dec == pytest.approx(3000.0 - 1000.0)
    assert dec == pytest.approx((0.9 * 1024 - 1) * 2.0) and rate == pytest.approx(2000.0 - dec)
    same_rate = _row(1024, 64, 1000.0 + (1024 - 1) * 2.0, tpot=20.0, predicted=1000.0, predicted_tpot_ms="22.0")
    assert sg.ttft_miss_terms(same_rate)[0] == pytest.approx(0.0)


def test_sglang_deepseek_disaggregated_ttft_misses_are_mostly_rate_in_the_committed_table():
    """The 23 SGLang DeepSeek B200 disaggregated rows: most of their summed TTFT miss is the rate term (the prefill
    pools served faster than measured), the rest the decode term. Until session 58 the decode term was the larger (the
    prediction's decode, x1.1-1.4 slow at TP8, throttled its closed loop: 72 s against 49 s); the decode workers'
    all-reduce fusion and shared-expert stream brought that decode to x1.05 (41 s against 78 s)."""
    rows = [r for r in sg.load() if r["engine"] == "sglang" and r["mode"] == "disagg" and r["system"] == "b200_sxm"
            and "deepseek" in r["model"].lower()]
    terms = [sg.ttft_miss_terms(r) for r in rows]
    rate, dec = sum(t[0] for t in terms), sum(t[1] for t in terms)
    assert len(rows) == 23 and rate > dec > 0


def test_tpot_across_tp_compares_the_two_largest_tp_sizes_measured_and_predicted():
    rows = [_row(256, 128, 500.0, tpot=t, tp=tp, predicted_tpot_ms=p)
            for tp, t, p in (("1", 30.0, 25.0), ("4", 10.0, 9.0), ("8", 10.0, 7.2))]
    rows += [_row(256, 16, 90.0, tpot=5.0, tp="8", predicted_tpot_ms="4.0")]   # under min_clients: skipped
    ((run, isl, osl, n), (lo, hi, meas, pred)), = sg.tpot_across_tp(rows).items()
    assert (isl, osl, n, lo, hi) == (1024, 256, 128, 4, 8)
    assert meas == pytest.approx(1.0) and pred == pytest.approx(0.8)
    assert sg.tpot_across_tp([rows[1]]) == {}    # one TP size: nothing to compare


def test_tensorrt_llm_1_0_tpot_at_1k_prompts_and_128_clients_does_not_shorten_from_tp4_to_tp8():
    """The session-59 reading docs/accuracy.md quotes: TensorRT-LLM 1.0.0rc3 on H100, 128 clients, 1,024-token
    prompts: measured TPOT at TP8 is within 5% of TP4's for Llama-3.1-8B and Qwen3-32B (the prediction shortens it
    to x0.80-0.86), while at 4,096-token prompts it shortens as predicted (x0.70-0.78)."""
    found = sg.tpot_across_tp(sg.load(), min_clients=128)
    picked = {(run[2].rsplit("/", 1)[-1], isl): [] for run, isl, *_ in found}
    for (run, isl, _osl, _n), (lo, hi, meas, pred) in found.items():
        if run[0] == "trtllm" and run[1] == "1.0.0rc3" and (lo, hi) == (4, 8):
            picked[(run[2].rsplit("/", 1)[-1], isl)].append((meas, pred))
    for model in ("meta-llama_Llama-3.1-8B-Instruct.csv", "Qwen_Qwen3-32B.csv"):
        short, long = picked[(model, 1024)], picked[(model, 4096)]
        assert len(short) == 3 and all(0.94 < m < 1.05 and p < 0.87 for m, p in short)
        assert len(long) == 3 and all(m < 0.8 and abs(m - p) < 0.05 for m, p in long)


def test_tensorrt_llm_1_0_llama_request_rate_at_128_clients_stays_put_from_tp4_to_tp8():
    """The request ceiling docs/accuracy.md quotes (session 59): Llama-3.1-8B on TensorRT-LLM 1.0.0rc3, H100, 128
    clients, 128 output tokens: ~35-36 requests/s (full outputs) at TP4 and TP8 for 1,024- and 2,048-token prompts
    alike, where the prediction's rate grows with TP (TP8 over TP4 by more than 20%)."""
    found = sg.heavy_load(sg.load(), min_clients=128)
    seen = 0
    for (run, isl, osl, _n), by_tp in found.items():
        if run[0] == "trtllm" and run[1] == "1.0.0rc3" and "Llama" in run[3] and osl == 128 and isl in (1024, 2048):
            (m4, p4, *_), (m8, p8, *_) = by_tp[4], by_tp[8]
            assert 34 < m4 < 38 and 34 < m8 < 38 and abs(m8 / m4 - 1) < 0.05 and p8 / p4 > 1.2
            seen += 1
    assert seen == 2


def test_excess_across_tp_tells_a_prefill_price_from_a_cost_per_request():
    """A prefill priced at x0.5 misses its price again (slope 1, intercept 0); a cost per request the same ms at
    every TP (slope 0); under 3 TP sizes no line."""
    priced = [_row(1024, 4, 2 * pred, predicted=pred, tp=str(tp)) for tp, pred in ((1, 80.0), (2, 50.0), (4, 35.0))]
    fixed = [_row(1024, 4, pred + 25, predicted=pred, tp=str(tp), model="fixed")
             for tp, pred in ((1, 80.0), (2, 50.0), (4, 35.0))]
    two = [_row(1024, 4, 60.0, predicted=pred, tp=str(tp), model="two") for tp, pred in ((1, 50.0), (2, 30.0))]
    loaded = [_row(1024, 64, 900.0, predicted=80.0, model="m")]   # over max_clients: left out
    found = sg.excess_across_tp(priced + fixed + two + loaded)
    points, line = found[("trtllm", "m", "h100_sxm", 1024)]
    assert [p[:2] for p in points] == [(1, 1), (2, 1), (4, 1)] and line == pytest.approx((1.0, 0.0), abs=1e-9)
    assert found[("trtllm", "fixed", "h100_sxm", 1024)][1] == pytest.approx((0.0, 25.0), abs=1e-9)
    assert found[("trtllm", "two", "h100_sxm", 1024)][1] is None


def test_gptoss_on_tensorrt_llm_b200_misses_a_cost_per_request_not_a_prefill_price_in_the_committed_table():
    """Session 59: gpt-oss-120b TensorRT-LLM B200 at <= 8 clients reads x0.5-0.75 at every TP. At 1k the excess grows
    from TP1 to TP8 (6 -> 26 ms at 16cfdf5) while the predicted TTFT falls: a per-request cost growing with TP; at 8k
    it stays ~25 ms from TP2 to TP8 while the prediction falls 70 -> 53 ms, where a prefill priced at x0.69 would
    read slope ~0.45 and intercept ~0."""
    found = sg.excess_across_tp(sg.load())
    (_, line_1k), (points_8k, line_8k) = (found[("trtllm", "openai/gpt-oss-120b", "b200_sxm", isl)]
                                          for isl in (1024, 8192))
    assert line_1k[0] < 0
    assert line_8k[0] < 0.3 and line_8k[1] > 8
    assert max(p[2] for p in points_8k if p[0] >= 2) - min(p[2] for p in points_8k if p[0] >= 2) < 10


def test_measured_across_tp_tells_a_floor_from_a_step_that_shortens():
    """A TTFT that halves with TP as priced reads x0.5 / x0.5; one that stays put while the price halves reads ~x1 /
    x0.5; under 3 TP sizes or over max_clients nothing."""
    gpu = [_row(1024, 4, 2 * pred, predicted=pred, tp=str(tp)) for tp, pred in ((1, 80.0), (2, 60.0), (8, 40.0))]
    floor = [_row(1024, 4, 45.0, predicted=pred, tp=str(tp), model="floor")
             for tp, pred in ((1, 80.0), (2, 60.0), (8, 40.0))]
    two = [_row(1024, 4, 60.0, predicted=pred, tp=str(tp), model="two") for tp, pred in ((1, 50.0), (2, 30.0))]
    loaded = [_row(1024, 64, 900.0, predicted=80.0, tp="4")]   # over max_clients: left out
    found = sg.measured_across_tp(gpu + floor + two + loaded)
    assert found[("trtllm", "m", "h100_sxm", 1024)] == pytest.approx((1, 8, 80.0, 0.5, 0.5))
    assert found[("trtllm", "floor", "h100_sxm", 1024)] == pytest.approx((1, 8, 45.0, 1.0, 0.5))
    assert ("trtllm", "two", "h100_sxm", 1024) not in found


def test_two_light_load_ttfts_stay_put_from_tp1_to_tp8_in_the_committed_table():
    """Session 59 (helper J): of every aggregated group at <= 8 clients over 3+ TP sizes, two measure a TTFT that TP
    does not shorten while the prediction halves: gpt-oss-120b on TensorRT-LLM B200 at 1k (39 -> 45 ms, x1.14 against
    x0.61 priced) and Llama-3.1-70B on vLLM B200 at 1k (111 -> 97 ms, x0.88 against x0.44), the two whose excess grows
    with TP; their 8k rows follow the GPUs (x0.65 / x0.41)."""
    found = sg.measured_across_tp(sg.load())
    flat = {k for k, (_, _, _, m, p) in found.items() if m > 0.8 and p < 0.7}
    assert flat == {("trtllm", "openai/gpt-oss-120b", "b200_sxm", 1024), ("vllm", "meta-llama/Llama-3.1-70B",
                                                                          "b200_sxm", 1024)}
    assert all(found[(e, m, "b200_sxm", 8192)][3] < 0.7 for e, m, _, _ in flat)


def test_excess_by_cell_keeps_releases_and_precisions_apart():
    """One cell per (engine, version, GPU, model, GEMM precision): the median excess at each (input length, TP);
    rows over max_clients and disaggregated rows left out."""
    rows = [_row(1024, 4, 70.0, predicted=50.0, gemm_quant="fp8", tp="4"),
            _row(1024, 8, 90.0, predicted=50.0, gemm_quant="fp8", tp="4"),
            _row(1024, 2, 60.0, predicted=50.0, gemm_quant="nvfp4", tp="4"),
            _row(1024, 4, 80.0, predicted=50.0, gemm_quant="fp8", tp="4", version="1.2"),
            _row(1024, 4, 150.0, predicted=100.0, gemm_quant="fp8", tp="4", isl="8192"),
            _row(1024, 64, 900.0, predicted=50.0, gemm_quant="fp8", tp="4"),
            _row(1024, 4, 900.0, predicted=50.0, gemm_quant="fp8", tp="4", mode="disagg")]
    found = sg.excess_by_cell(rows)
    assert found[("trtllm", "1.0", "h100_sxm", "m", "fp8")] == {(1024, 4): (2, 30.0), (8192, 4): (1, 50.0)}
    assert found[("trtllm", "1.0", "h100_sxm", "m", "nvfp4")] == {(1024, 4): (1, 10.0)}
    assert found[("trtllm", "1.2", "h100_sxm", "m", "fp8")] == {(1024, 4): (1, 30.0)}


def test_model_layers_reads_the_spec():
    assert sg.model_layers("meta-llama/Llama-3.1-70B") == (80, 0)
    assert sg.model_layers("openai/gpt-oss-120b") == (36, 36)
    assert sg.model_layers("no-such/model") == (0, 0)


def test_the_light_load_excess_is_not_a_cost_per_layer_across_cells_in_the_committed_table():
    """Session 60 (helper G): the ~1 ms a layer read off two cells does not carry to the others. TensorRT-LLM B200:
    Llama-3.1-70B fp8 (80 dense layers) misses < 10 ms at 1k and TP1-4 where gpt-oss-120b 1.2.0rc2.post2 (36 layers)
    misses > 10 ms at TP2-8, the same at 8k (flat in the prompt: per request, not per token). TensorRT-LLM 1.0.0rc3
    H100 at 1k: Llama-3.1-8B (32 layers) misses more at every TP than Qwen3-32B (64). vLLM Llama-3.1-70B fp8 at 1k:
    > 40 ms at TP4-8 on B200, < 10 at TP2-8 on H100 (the same 80 layers)."""
    cells = sg.excess_by_cell(sg.load())
    llama = cells[("trtllm", "", "b200_sxm", "meta-llama/Llama-3.1-70B", "fp8")]
    gptoss = cells[("trtllm", "1.2.0rc2.post2", "b200_sxm", "openai/gpt-oss-120b", "nvfp4")]
    assert all(llama[(1024, tp)][1] < 10 for tp in (1, 2, 4))
    # (> 15 ms until session 61, whose MXFP4 x MXFP8 expert fit prices gpt-oss's B200 prefill higher: 12-25 ms now)
    assert all(gptoss[(1024, tp)][1] > 10 for tp in (2, 4, 8))
    assert all(abs(gptoss[(8192, tp)][1] - gptoss[(1024, tp)][1]) < 10 for tp in (2, 4, 8))
    llama8b = cells[("trtllm", "1.0.0rc3", "h100_sxm", "meta-llama/Llama-3.1-8B-Instruct", "")]
    qwen32b = cells[("trtllm", "1.0.0rc3", "h100_sxm", "Qwen/Qwen3-32B", "fp8")]
    assert min(g for (isl, _), (_, g) in llama8b.items() if isl == 1024) > \
        max(g for (isl, _), (_, g) in qwen32b.items() if isl == 1024)
    b200 = cells[("vllm", "", "b200_sxm", "meta-llama/Llama-3.1-70B", "fp8")]
    h100 = cells[("vllm", "", "h100_sxm", "meta-llama/Llama-3.1-70B", "fp8")]
    # (H100 < 0 until session 74 M ran its launch as vLLM read it, bf16 KV and synchronous: -4.9 / -5.6 / +4.5 ms)
    assert all(b200[(1024, tp)][1] > 40 for tp in (4, 8)) and all(h100[(1024, tp)][1] < 10 for tp in (2, 4, 8))


def test_tensorrt_llm_1_0_llama_streams_one_token_ceiling_at_every_tp_in_the_committed_table():
    """The session-61 reading docs/accuracy.md quotes (issue 37): Llama-3.1-8B on TensorRT-LLM 1.0.0rc3 (H100) tops
    out at 9.08-9.28k output tokens/s in its five fastest rows, over TP2, TP4 and TP8 (~108 us a streamed token
    whatever the GPUs); Qwen3-32B and Qwen3-235B of the same campaign never reach it (6.2k and 4.6k at most)."""
    rows = [r for r in sg.load() if r["engine"] == "trtllm" and r["version"] == "1.0.0rc3" and r["mode"] == "agg"]
    rates = {}
    for r in rows:
        rates.setdefault(r["model"], []).append((sg.tokens_per_s(r), int(r["tp"])))
    llama = sorted(rates["meta-llama/Llama-3.1-8B-Instruct"], reverse=True)[:5]
    assert all(9.0e3 < rate < 9.35e3 for rate, _ in llama) and {tp for _, tp in llama} == {2, 4, 8}
    assert max(rates["Qwen/Qwen3-32B"])[0] < 6.3e3 and max(rates["Qwen/Qwen3-235B-A22B-FP8"])[0] < 4.6e3


def test_sglang_deepseek_fp8_first_token_does_not_wait_for_its_stream_interval_in_the_committed_table():
    """Session 61 (helper K, issue 37): InferenceX's SGLang DeepSeek fp8 recipe on B200 (benchmarks/dsr1_fp8_b200.sh at
    1fc5d73) launches `--stream-interval 30`. Were the first token held to the interval, a client's TTFT would be at
    least 29 decode steps; at 4-8 clients and 1k prompts (SGLang 0.5.9) it measures 19-22 TPOTs. SGLang streams a
    request's first token at once (stream_output_generation: `len(req.output_ids) % stream_interval == 1`), as do
    TensorRT-LLM (py_executor `_handle_responses`: `py_decoding_iter == 1 or ...`, PR #5836) and vLLM
    (output_processor: `sent_tokens_offset == 0`): the interval spaces the later chunks only."""
    rows = [r for r in sg.load() if r["engine"] == "sglang" and r["version"] == "0.5.9" and r["mode"] == "agg"
            and "DeepSeek" in r["model"] and r["system"] == "b200_sxm" and r["gemm_quant"] == "fp8"
            and r["isl"] == "1024" and float(r["concurrency"]) <= 8 and r["source"].startswith("db-dump")]
    steps = [float(r["measured_ttft_ms"]) / float(r["measured_tpot_ms"]) for r in rows]
    assert len(steps) >= 4
    assert max(steps) < 30 - 1 - 5   # at least 5 decode steps short of the interval's hold
