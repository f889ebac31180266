"""Family J (serving claims on the simulator): the mechanisms the claims rest on, each on a small run."""
import pytest

from whatif.claims.claim import Claim
from whatif.claims.family_j import CLAIMS
from whatif.claims.family_j_panels import CLAIMS as PANELS
from whatif.claims.serving import SERVING_METRICS, capacity_rps, deep_merged, meets, run


def claim(prefix: str) -> Claim:
    (c,) = [c for c in CLAIMS if c.paper.startswith(prefix)]
    return c


def small(mapping: dict, requests: int) -> dict:
    return deep_merged(mapping, {"sim": {"traffic": {"requests": requests}}})


def test_every_serving_claim_names_its_setup_and_a_serving_metric():
    assert len(CLAIMS) >= 8
    for c in CLAIMS + PANELS:
        assert c.metric in SERVING_METRICS and c.setup_note, c.paper
        assert "sim" in c.setup and "sim" in c.variant, c.paper


def test_distserve_panels_take_the_releases_gpus():
    """DistServe's OPT-66B panels (2-start-api-server.py): vLLM and DeepSpeed-MII at tp 4 on 4 GPUs, DistServe's
    (4, 1, 2, 2) placement on 8; the release's 25 prompts a GPU on each side (_plot.py)."""
    from whatif.claims.serving import cluster_gpus
    for c in PANELS:
        split = deep_merged(c.setup, c.variant)
        assert (cluster_gpus(c.setup), cluster_gpus(split)) == (4, 8), c.paper
        assert (c.setup["sim"]["traffic"]["requests"], split["sim"]["traffic"]["requests"]) == (100, 200), c.paper


def test_chunked_prefill_bounds_the_tail_gap_a_prefill_first_step_stalls():
    c = claim("Sarathi-Serve improves serving throughput within desired latency SLOs of Mistral")
    rate = 2.0             # between the two capacities (~1 and ~3 req/s): both serve, vLLM's prefills stall decodes
    base = run(small(c.setup, 120), rate).latency()["itl_s"]["p99"]
    chunked = run(small(deep_merged(c.setup, c.variant), 120), rate).latency()["itl_s"]["p99"]
    assert chunked < base


def test_capacity_is_monotone_in_the_criterion():
    c = claim("Sarathi-Serve improves serving throughput within desired latency SLOs of Mistral")
    m = small(c.setup, 80)
    loose = deep_merged(m, {"sim": {"criterion": {"p99_itl_s": 1.0}}})
    assert capacity_rps(loose) >= capacity_rps(m) > 0


def test_static_batches_wait_for_their_longest_generation():
    c = claim("Flover")
    static = run(small(c.setup, 60)).latency()["e2e_s"]["mean"]
    continuous = run(small(deep_merged(c.setup, c.variant), 60)).latency()["e2e_s"]["mean"]
    assert continuous < static


@pytest.mark.parametrize("criterion, ok", [({"attainment": 0.0}, True), ({"p99_itl_s": 1e-9}, False),
                                           ({"p50_queue_s": 1e9}, True), ({"p50_queue_s": -1.0}, False)])
def test_meets_reads_the_criterion(criterion, ok):
    c = claim("Sarathi-Serve improves serving throughput within desired latency SLOs of Mistral")
    assert meets(run(small(c.setup, 20), 1.0), criterion) is ok


def test_the_openchat_trace_lengths_are_multi_turn_prompts():
    """Sarathi-Serve's claims run its openchat_sharegpt4 lengths (Table 2: prompt median 1730 tokens), not the
    single-turn ShareGPT sample (225 tokens on average) the engines' benchmarks draw."""
    from whatif.simulator.length_profiles import LENGTH_PROFILES
    for c in CLAIMS:
        if c.paper.startswith("Sarathi-Serve"):
            assert c.setup["sim"]["traffic"]["lengths"] == "openchat-sharegpt4", c.paper
    chat = LENGTH_PROFILES["openchat-sharegpt4"]
    assert chat.prompt.mean() > 5 * LENGTH_PROFILES["sharegpt"].prompt.mean()
    assert chat.prompt.high + chat.output.high <= 8192


def test_fastgen_sla_is_its_benchmarks_rule():
    """DeepSpeed-FastGen's SLA: pandas' ewm(span=16) mean of the token gaps under 1/rate at every token, and the
    first token within prompt / 512 s; one long stall fails a request whose mean rate would pass."""
    from types import SimpleNamespace
    import numpy as np
    from whatif.claims.fastgen_sla import ema, meets

    x = np.array([1.0, 3.0, 2.0, 5.0])
    a, expect = 2 / 17, []
    for i in range(len(x)):
        w = (1 - a) ** np.arange(i, -1, -1)
        expect.append(float((w * x[: i + 1]).sum() / w.sum()))
    assert ema(x) == pytest.approx(expect)

    def record(ttft, gaps, prompt=1024):
        times = np.cumsum([ttft, *gaps])
        return SimpleNamespace(finish_s=times[-1], ttft_s=ttft, token_times=list(times),
                               request=SimpleNamespace(prompt=prompt))
    steady = record(1.0, [0.2] * 60)
    stalled = record(1.0, [0.2] * 30 + [2.0] + [0.1] * 29)     # mean gap 0.18 s: passes a mean-rate SLO
    assert meets(steady, 4.0) and not meets(stalled, 4.0)
    assert not meets(record(2.5, [0.2] * 60), 4.0)               # 1024 tokens at 512 tok/s: 2 s allowed


def client_curve_run(curve: dict):
    """A stand-in for serving.run whose closed loop of N clients finishes curve[N] = (requests/s, mean e2e s)."""
    from types import SimpleNamespace

    def fake_run(mapping, rate=None):
        rps, e2e = curve[mapping["sim"]["traffic"]["concurrency"]]
        return SimpleNamespace(summary=lambda: {"throughput": {"finished_rps": rps}},
                               latency=lambda: {"e2e_s": {"mean": e2e}})
    return fake_run


def test_latency_at_equal_throughput_is_read_off_the_client_curve(monkeypatch):
    """e2e_at_throughput: linear between the two closed-loop points around the target; inf when none reaches it."""
    from whatif.claims import serving

    monkeypatch.setattr(serving, "run", client_curve_run({1: (0.5, 2.0), 4: (1.0, 4.0), 8: (1.5, 8.0)}))
    m = {"sim": {"traffic": {}, "criterion": {"clients": [1, 4, 8], "throughput_rps": 1.2}}}
    assert serving.e2e_at_throughput(m) == pytest.approx(4.0 + 4.0 * 0.2 / 0.5)
    assert serving.e2e_at_throughput(deep_merged(m, {"sim": {"criterion": {"throughput_rps": 2.0}}})) == float("inf")


def test_throughput_at_equal_latency_is_read_off_the_client_curve(monkeypatch):
    """throughput_at_e2e: linear between the two closed-loop points around the target latency; 0 below the curve,
    the curve's highest throughput past it."""
    from whatif.claims import serving

    monkeypatch.setattr(serving, "run", client_curve_run({1: (0.5, 2.0), 4: (1.0, 4.0), 8: (1.5, 8.0)}))

    def at(e2e_s: float) -> float:
        return serving.throughput_at_e2e({"sim": {"traffic": {}, "criterion": {"clients": [1, 4, 8], "e2e_s": e2e_s}}})
    assert at(5.0) == pytest.approx(1.0 + 0.5 * 1.0 / 4.0)
    assert at(1.0) == 0.0 and at(20.0) == 1.5


def test_distserve_runs_its_releases_multi_turn_lengths():
    """DistServe's chatbot claims send each side the release's own requests (the same at every rate: its benchmark
    reseeds each rate): a 100-prompt baseline its 100, OPT-13B's split its 300, OPT-66B's split the 300's first 200
    (since session 70 F; Figure 7's means before, ~755 / ~200 tokens: the multi-turn profile kept below), not the
    single-turn sample (226 / 194) the engines' benchmarks use; its summarization claim, LongBench cut to ~2K tokens
    with the answer inside OPT's window."""
    from whatif.simulator.length_profiles import LENGTH_PROFILES
    for c in CLAIMS + PANELS:
        if c.paper.startswith("DistServe") and "trace" in c.setup["sim"]["traffic"]:   # the chatbots
            traffic = c.setup["sim"]["traffic"]
            assert traffic["requests"] == 100 and traffic["trace_rate"] == 1.0, c.paper
            split = deep_merged(c.setup, c.variant)["sim"]["traffic"]
            # OPT-13B's split its 300 (starting with the baseline's 100, in order); OPT-66B's the 300's first 200
            # (random.sample and np.random.gamma draw in order from the reseeded streams)
            assert split["requests"] == (300 if c.setup["model"] == "opt-13b" else 200), c.paper
            assert split["trace_rate"] == 3.0, c.paper
            assert split["trace"].endswith("distserve_opt_sharegpt_300.csv"), c.paper
        elif c.paper.startswith("DistServe"):
            traffic = c.setup["sim"]["traffic"]
            assert 1900 <= traffic["prompt"] and traffic["prompt"] + traffic["output"] <= 2040, c.paper
    chat = LENGTH_PROFILES["sharegpt-multiturn"]
    assert chat.means() == pytest.approx((755, 200), rel=1e-3)   # the kept pairs' means, Figure 7's
    assert chat.pair_below == 2048                                # the script drops pairs of 2048 tokens or more
    assert chat.means()[0] > 3 * LENGTH_PROFILES["sharegpt"].prompt.mean()


def test_the_releases_200_are_its_300s_first_200():
    """Why OPT-66B's split may take the 300's first 200: the release's client reseeds `random` and numpy per run, and
    both draw in order (random.sample's set method above 1,045 items; np.random.gamma's legacy fill), so a 200-prompt
    run sends the 300-prompt run's first 200 requests with its first gaps."""
    import random
    import numpy as np
    n = 20_000                       # any dataset above random.sample's set threshold (1,045 for 300 picks)
    random.seed(0)
    first = random.sample(range(n), 300)
    random.seed(0)
    assert random.sample(range(n), 200) == first[:200]
    np.random.seed(0)
    gaps = np.random.gamma(1.0, 1 / 3.0, size=300)
    np.random.seed(0)
    assert np.array_equal(np.random.gamma(1.0, 1 / 3.0, size=200), gaps[:200])


def test_sarathi_capacity_reads_the_median_scheduling_delay_not_ttft():
    """Sarathi-Serve's capacity (its release's capacity_search.py): P99 TBT and the median delay from arrival to
    first scheduled under 2 s; a Falcon-180B prompt's own prefill is not part of that delay."""
    for c in CLAIMS:
        if c.paper.startswith("Sarathi-Serve"):
            crit = c.setup["sim"]["criterion"]
            assert crit["p50_queue_s"] == 2.0 and "p50_ttft_s" not in crit, c.paper


def test_vattention_prefill_prices_a_paged_and_a_contiguous_kv_alike():
    """vAttention's prefill claims (misses): whatif charges a paged prefill only its block table, so the TTFT of one
    long prompt is the same to 0.1% either way; the paper measured the paged kernels' own slowness."""
    for prefix in ("vAttention: processing input prompts up to ... 1.45x",
                   "vAttention: processing input prompts up to 3.92x"):
        c = claim(prefix)
        paged = run(small(c.setup, 1)).latency()["ttft_s"]["mean"]
        contiguous = run(deep_merged(small(c.setup, 1), c.variant)).latency()["ttft_s"]["mean"]
        assert contiguous <= paged < 1.001 * contiguous


def test_vattention_prefill_runs_its_artifacts_unchunked_192k_point():
    """run_figure_6.sh: max tokens in a batch = the context (no chunks), 196,608-token requests split 1000:1, FA_Paged
    on 256-token blocks (Yi-6B, one GPU), FI_Paged on 16 (Llama-3-8B at TP 2)."""
    fi, fa = claim("vAttention: processing input prompts up to ... 1.45x"), claim("vAttention: processing input "
                                                                                   "prompts up to 3.92x")
    for c, model, tp, block in ((fi, "llama-3-8b", 2, 16), (fa, "yi-6b", 1, 256)):
        assert c.setup["sim"]["engine"] == {"chunked_prefill": False, "token_budget": 196_608}
        assert c.setup["sim"]["traffic"]["prompt"] == 196_411 and c.setup["context_window"] == 196_608
        assert (c.setup["model"], c.setup["parallel"]["tp"]) == (model, tp)
        assert c.setup["techniques"] == [f"paged_kv:block_size={block}"] and c.variant["techniques"] == []


def test_distserve_is_one_run_against_both_baselines_and_mii_is_splitfuse():
    """The release's plot.ipynb sets DistServe against vLLM (4.6x) and DeepSpeed-MII (7.36x, the abstract's 7.4x) on
    the same chatbot panel: DistServe's side is one run for both, and MII runs FastGen's SplitFuse (768 tokens).
    Its vLLM runs behind Ray (--engine-use-ray --worker-use-ray): vllm-0.2-ray."""
    def system_side(c: Claim) -> dict:
        side = deep_merged(c.setup, c.variant)
        side["kernel_engine"] = c.system_engine or c.baseline_engine
        return side
    vllm, mii = claim("DistServe sustains 4.6x"), claim("DistServe can serve 7.4x")
    assert system_side(vllm) == system_side(mii)
    assert vllm.baseline_engine == "vllm-0.2-ray" and not vllm.setup["sim"]["engine"]["chunked_prefill"]
    engine = mii.setup["sim"]["engine"]
    assert engine["chunked_prefill"] and engine["token_budget"] == 768 and engine["max_batch"] == 512
    # MII and FastGen run DeepSpeed-MII's loop (versions/deepspeed-mii.yaml), every MII panel and FastGen's side
    mii_claims = [c for c in CLAIMS + PANELS if "DeepSpeed-MII" in c.paper]
    fastgen = [c for c in CLAIMS if c.paper.startswith("DeepSpeed-FastGen") and c.technique != "replicas"]
    assert len(mii_claims) == 6 and len(fastgen) == 4
    # the OPT-66B chatbot SLO-scale panel (plot.ipynb cell 91): DistServe's side is one run against both baselines
    slo66 = [c for c in PANELS if c.metric == "slo_scale" and "OPT-66B chatbot" in c.paper]
    assert len(slo66) == 2 and system_side(slo66[0]) == system_side(slo66[1])
    assert {(c.baseline_engine, c.system_engine) for c in mii_claims} == {("deepspeed-mii", "distserve")}
    # DistServe's side runs its own loop (versions/distserve.yaml) against either baseline
    assert {c.system_engine for c in CLAIMS + PANELS if c.paper.startswith("DistServe")} == {"distserve"}
    assert {(c.baseline_engine, c.system_engine) for c in fastgen} == {("vllm-0.2", "deepspeed-mii")}


def test_distserve_prefill_instances_run_the_releases_context_flags():
    """Every DistServe split (chatbot and summarization) runs its release's prefill instance as launched
    (2-start-api-server.py: --context-max-tokens-per-batch 8192, --context-max-batch-size 128), not vLLM's 16,384
    tokens a step and 1,024 sequences."""
    for c in CLAIMS:
        if c.paper.startswith("DistServe"):
            cluster = c.variant["sim"]["cluster"]
            assert (cluster["prefill_token_budget"], cluster["prefill_max_batch"]) == (8192, 128), c.paper


def test_distserve_rates_are_per_gpu_of_one_server_per_backend():
    """DistServe's release runs each backend as one server (2-start-api-server.py) and plots its rate per GPU
    (ae-scripts/e2e/_plot.py: a backend's run at per-GPU rate x num_gpus, prompts per GPU): every DistServe claim's
    baseline is one instance, both sides hold as many prompts a GPU, and an SLO-scale panel's rate a GPU is one."""
    from whatif.claims.serving import cluster_gpus
    seen = 0
    for c in CLAIMS + PANELS:
        if not c.paper.startswith("DistServe"):
            continue
        base, split = c.setup, deep_merged(c.setup, c.variant)
        gpus, split_gpus = cluster_gpus(base), cluster_gpus(split)
        assert base["sim"]["cluster"]["replicas"] == 1 and split_gpus > gpus, c.paper
        traffic, split_traffic = base["sim"]["traffic"], split["sim"]["traffic"]
        assert traffic["requests"] / gpus == split_traffic["requests"] / split_gpus, c.paper
        if c.metric == "slo_scale":
            assert traffic["rate"] / gpus == split_traffic["rate"] / split_gpus, c.paper
        else:
            assert base["sim"]["criterion"]["per_gpu"], c.paper
        seen += 1
    assert seen == 5 + 7


def test_distserve_opt66b_chatbot_slo_panel_runs_the_cell_that_prints_it():
    """plot.ipynb @e2d4dca cell 91 (plot_fig8_lower) draws the OPT-66B chatbot SLO-scale panel at 25 prompts and 0.75
    req/s a GPU with SLO 2.5 s / 0.15 s, and prints 3.1439 (vLLM) / 1.8043 (MII): vLLM and MII at 3.0 req/s on 4 GPUs,
    DistServe at 6.0 on 8 (session 73 L)."""
    from whatif.claims.serving import cluster_gpus
    panels = [c for c in PANELS if c.metric == "slo_scale" and "OPT-66B chatbot" in c.paper]
    assert sorted(c.claimed for c in panels) == [1.80, 3.14]
    for c in panels:
        split = deep_merged(c.setup, c.variant)
        for mapping in (c.setup, split):
            sim = mapping["sim"]
            assert sim["traffic"]["rate"] / cluster_gpus(mapping) == 0.75, c.paper
            assert (sim["slo"]["ttft_s"], sim["slo"]["tpot_s"]) == (2.5, 0.15), c.paper


def test_capacity_per_gpu_divides_by_every_gpu_of_the_cluster(monkeypatch):
    """A per-GPU capacity is the cluster's over all its GPUs: DistServe's OPT-13B split is a prefill instance at tp 2
    and a decode instance at tp 1 (3 GPUs); its OPT-66B split (4, 1, 2, 2) takes 8."""
    from whatif.claims import serving
    monkeypatch.setattr(serving, "_capacity", lambda mapping, crit: 6.0)
    chat = claim("DistServe sustains 4.6x")
    split = deep_merged(chat.setup, chat.variant)
    assert serving.capacity_rps(split) == pytest.approx(2.0)
    assert serving.capacity_rps(deep_merged(split, {"sim": {"criterion": {"per_gpu": False}}})) == 6.0
    summary = claim("DistServe can serve ... 12.6x")
    assert serving.cluster_gpus(summary.setup) == 4
    assert serving.cluster_gpus(deep_merged(summary.setup, summary.variant)) == 8


def test_fastgen_replicas_run_the_release_client_and_request_counts_per_replica():
    """run_all_replica.sh: 16 clients and 256 requests a replica, 2600 / 60 on Llama-2-70B at tp 4; the claim is
    illustrative (whatif's replicas share nothing, so the linear figure cannot fail)."""
    c = claim("DeepSpeed-FastGen: given that the throughput")
    one, many = c.setup["sim"], deep_merged(c.setup, c.variant)["sim"]
    assert (one["traffic"]["concurrency"], one["traffic"]["requests"], one["cluster"]["replicas"]) == (16, 256, 1)
    assert (many["traffic"]["concurrency"], many["traffic"]["requests"], many["cluster"]["replicas"]) \
        == (256, 4096, 16)
    assert (one["traffic"]["prompt"], one["traffic"]["output"], c.setup["parallel"]["tp"]) == (2600, 60, 4)
    assert c.kind == "illustrative" and c.identity


def test_fastgen_runs_the_release_clients_prompt_cut_and_vllms_launched_token_budget():
    """The release's client cuts each drawn prompt to MAX_PROMPT_LENGTH 4000 (random_query_generator.py), and its
    vLLM runs with default arguments (run_all_vllm.sh), i.e. max(max_model_len 4096, 2048) tokens a step. Without the
    cut, the requests drawn past Llama-2's 4096-token window (prompt + output) were rejected, on either side."""
    fastgen = [c for c in CLAIMS if c.paper.startswith("DeepSpeed-FastGen")]
    assert len(fastgen) == 5
    for c in fastgen:
        assert c.setup["sim"]["traffic"]["prompt_max"] == 4000, c.paper
    figure4 = claim("DeepSpeed-FastGen: up to 2.3x higher effective throughput")
    assert figure4.setup["sim"]["engine"]["token_budget"] == 4096                       # vLLM's side
    assert deep_merged(figure4.setup, figure4.variant)["sim"]["engine"]["token_budget"] == 768   # SplitFuse's
    busy = deep_merged(figure4.setup, {"sim": {"traffic": {"concurrency": 16}}})
    cut = run(busy)
    assert max(r.request.prompt for r in cut.records) == 4000
    assert len(cut.finished()) == len(cut.records) == 512
    uncut = run(deep_merged(busy, {"sim": {"traffic": {"prompt_max": None}}}))
    assert len(uncut.finished()) < len(uncut.records)


def test_distserve_scores_the_ttft_its_client_times():
    """DistServe's client (2-benchmark-serving.py send_request) times a request from before its HTTP POST and scores
    ftl = token_timestamps[0] - start_time (structs.py): every DistServe claim counts each TTFT with its side's front
    end (criterion client_ttft), and that client TTFT is the engine's plus the spec's front end, so attainment falls."""
    from whatif.simulator.config import SLO
    from whatif.simulator.metrics import attains
    for c in CLAIMS + PANELS:
        if c.paper.startswith("DistServe"):
            assert deep_merged(c.setup, c.variant)["sim"]["criterion"]["client_ttft"] is True, c.paper
    r = run(small(claim("DistServe sustains 4.6x").setup, 30), 1.0)
    front = r.frontend
    assert front is not None and front.per_request_s > 0
    q = r.records[0]
    assert q.served_ttft_s(front) == pytest.approx(q.ttft_s + front.seconds(q.request.prompt))
    edge = SLO(ttft_s=(q.ttft_s + q.served_ttft_s(front)) / 2)   # between the engine's TTFT and the client's
    assert attains(q, edge) and not attains(q, edge, front)
    assert r.attainment(client=True) <= r.attainment()
    assert not meets(r, {"attainment": 1.0, "client_ttft": True}) or meets(r, {"attainment": 1.0})
