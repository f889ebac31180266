"""Family D (sparse attention): each technique's mechanism moves the costs it should, the claims'
bands hold, bad parameters and impossible combinations are clear errors."""
import pytest

from whatif.roofline.ops import link_bytes
from whatif.claims import evaluate
from whatif.claims.family_d import CLAIMS
from whatif.errors import WhatifError
from whatif.roofline.attention import causal_pairs
from whatif.roofline.estimate import Workload
from whatif.roofline.techniques.registry import make_technique, parse_technique, technique_set
from whatif.roofline.techniques.kit import window_pairs
from whatif.scenario import Scenario

LONG = Workload(batch=4, prompt=65536, output=64)


def run(techniques=(), model="llama-3.1-8b", workload=LONG, hardware="a100-sxm-80gb", max_batch=False):
    return Scenario(model=model, hardware=hardware, workload=workload,
                    techniques=tuple(techniques)).run(with_max_batch=max_batch)


def decode_ops(e, prefix=""):
    return [t for t in e.decode.op_times if t.op.name.startswith(prefix)]


def attention_bytes(e):
    return sum(t.op.hbm_bytes * t.op.count for t in e.decode.op_times if t.op.name.startswith("attention"))


def prefill_time(e, cls="attention"):
    return sum(t.total_s * n for p, n in e.prefill for t in p.op_times if t.op.op_class.startswith(cls))


@pytest.fixture(scope="module")
def base():
    return run()


# ---- decode selection: reads fall, selection is paid where the paper pays it
@pytest.mark.parametrize("spec", ["quest", "tidaldecode", "tokenselect", "double_sparsity", "lserve", "lm_infinite",
                                  "shadowkv", "a2ats", "double_sparsity:offload=true"])
def test_decode_selection_reads_less_kv_from_hbm(base, spec):
    e = run([spec])
    assert attention_bytes(e) < attention_bytes(base) / 3
    if spec in ("quest", "tidaldecode", "double_sparsity"):      # decode-only: prefill (almost) untouched
        assert e.ttft_s == pytest.approx(base.ttft_s, rel=1e-4)   # double sparsity writes its label cache


def test_quest_keeps_its_first_two_layers_dense_and_scores_pages_in_the_rest(base):
    e = run(["quest"])
    full = [t for t in decode_ops(e, "attention") if t.op.shape.max_context > 60000]
    assert sum(t.op.count for t in full) == 2
    assert decode_ops(e, "quest_page_scores")[0].op.count == 30
    assert run(["quest:dense_layers=0"]).tpot_s < e.tpot_s


def test_tidaldecode_pays_selection_only_on_its_selection_layers():
    e = run(["tidaldecode"])
    full = [t for t in decode_ops(e, "attention") if t.op.shape.max_context > 60000]
    assert sum(t.op.count for t in full) == 4              # 2 dense + 2 selection layers
    assert decode_ops(e, "tidal_topk")[0].op.count == 2
    assert run(["tidaldecode:selection_layers=4"]).tpot_s > e.tpot_s


def test_tokenselect_selection_reads_every_key_unless_the_selection_cache_hits():
    e = run(["tokenselect:reuse=0.0"])
    scores = decode_ops(e, "tokenselect_scores")[0].op
    keys = 4 * 65600 * 8 * 128 * 2                         # cached keys of 4 sequences, one layer, bf16
    assert scores.hbm_bytes > 0.9 * keys
    assert run(["tokenselect:reuse=0.9"]).tpot_s < e.tpot_s
    # chunks attend the selection only (~1/9 of the pairs at 64K), at the gathered-token rate (gathered_attention.py)
    assert prefill_time(run(["tokenselect"])) < prefill_time(run()) / 2


def test_double_sparsity_labels_cost_memory_on_gpu_and_offload_moves_kv_to_the_host(base):
    gpu, off = run(["double_sparsity"]), run(["double_sparsity:offload=true"])
    assert base.memory.kv_cache_bytes < gpu.memory.kv_cache_bytes < 1.01 * base.memory.kv_cache_bytes
    assert off.memory.kv_cache_bytes < base.memory.kv_cache_bytes / 100
    fetch = decode_ops(off, "double_sparsity_kv_fetch")[0].op
    assert fetch.op_class == "transfer" and fetch.shape.overlap
    assert link_bytes(fetch) == pytest.approx(4 * 65600 / 16 * 2048 * 2, rel=0.01)
    assert not decode_ops(gpu, "double_sparsity_kv_fetch")
    assert run(["double_sparsity:token_share=0.03125"]).tpot_s < gpu.tpot_s


def test_lserve_streaming_heads_halve_kv_memory_and_prefill_attention(base):
    e = run(["lserve"])
    assert 0.5 < e.memory.kv_cache_bytes / base.memory.kv_cache_bytes < 0.52
    # prefill: half the heads keep all pairs, the streaming half only its 128 + 8192 window (the release's ctx window)
    expected = 0.5 + 0.5 * window_pairs(65536, 0, 128 + 8192) / causal_pairs(65536, 0)
    assert prefill_time(e) / prefill_time(base) == pytest.approx(expected, rel=0.05)
    narrow = run(["lserve:prefill_sink=64,prefill_local=256"])     # decode's window in prefill too: ~half
    assert 0.5 < prefill_time(narrow) / prefill_time(base) < 0.52
    assert narrow.tpot_s == pytest.approx(e.tpot_s)                # the prefill window does not touch decode
    assert run(["lserve:streaming_share=0.75"]).memory.kv_cache_bytes < e.memory.kv_cache_bytes


def test_lserve_dense_heads_prefill_vertical_slash_only_past_128k():
    # LServe section 4.3: MInference's prefill sparsity on the dense heads, activated after 128K tokens
    short = Workload(batch=1, prompt=120000, output=4)
    assert prefill_time(run(["lserve"], workload=short)) == pytest.approx(
        prefill_time(run(["lserve:minference_after=0"], workload=short)))

    def gradient_8b(spec):     # Llama-3-8B with a 1M window (LServe's long-context Gradient model)
        return Scenario(model="llama-3-8b", hardware="a100-sxm-80gb", techniques=(spec,), context_window=1_048_576,
                        workload=Workload(batch=1, prompt=262144, output=4)).run()

    sparse, dense = gradient_8b("lserve"), gradient_8b("lserve:minference_after=0")
    assert prefill_time(sparse) < prefill_time(dense) / 2
    names = {t.op.name for p, _ in sparse.prefill for t in p.op_times}
    assert "lserve_dense_pattern_estimate" in names
    assert not any("pattern_estimate" in t.op.name for p, _ in dense.prefill for t in p.op_times)
    assert sparse.tpot_s == pytest.approx(dense.tpot_s)


def test_shadowkv_keeps_low_rank_keys_on_gpu_and_fetches_values_each_step(base):
    e = run(["shadowkv"], max_batch=True)
    assert e.memory.kv_cache_bytes < base.memory.kv_cache_bytes / 4
    names = {t.op.name for t in e.decode.op_times}
    assert {"shadowkv_landmark_scores", "shadowkv_key_rebuild", "shadowkv_value_fetch"} <= names
    fetch = decode_ops(e, "shadowkv_value_fetch")[0].op
    assert link_bytes(fetch) == pytest.approx(4 * 2048 * 8 * 128 * 2 * 0.4)   # 40% of the budget misses
    assert run(["shadowkv:reuse=0.0"]).tpot_s > e.tpot_s
    prefill = {t.op.name for p, _ in e.prefill for t in p.op_times}
    assert {"shadowkv_key_svd", "shadowkv_value_offload"} <= prefill
    assert e.max_batch > 4 * run(max_batch=True).max_batch


def test_a2ats_attends_retrieved_tokens_on_the_cpu_or_fetches_them():
    cpu = run(["a2ats"])
    assert decode_ops(cpu, "a2ats_cpu_attention")[0].op.shape.bandwidth == 300e9
    assert run(["a2ats:cpu_bandwidth=600"]).tpot_s < cpu.tpot_s
    gpu = run(["a2ats:cpu_attention=false"])
    assert decode_ops(gpu, "a2ats_kv_fetch") and not decode_ops(gpu, "a2ats_cpu_attention")
    assert run(["a2ats:topk=0.01"]).tpot_s < cpu.tpot_s


# ---- prefill sparsity
def test_window_pairs_is_the_causal_count_until_the_window_binds():
    assert window_pairs(100, 50, 10**9) == causal_pairs(100, 50)
    assert window_pairs(10, 0, 4) == 1 + 2 + 3 + 4 * 7
    assert window_pairs(8192, 100000, 7096) == 8192 * 7096


def test_minference_gain_grows_with_context_and_density_overrides_the_pattern():
    gains = []
    for prompt in (16384, 65536, 130000):
        wl = Workload(1, prompt, 16)
        gains.append(run([], workload=wl).ttft_s / run(["minference"], workload=wl).ttft_s)
    assert gains == sorted(gains) and gains[-1] > 2
    wl = Workload(1, 65536, 16)
    assert run(["minference:density=0.5"], workload=wl).ttft_s > run(["minference"], workload=wl).ttft_s


def test_sale_estimation_pass_costs_time_and_density_saves_it():
    wl = Workload(1, 65536, 16)
    dense = prefill_time(run([], workload=wl))
    assert prefill_time(run(["sale:density=1.0"], workload=wl)) > dense
    assert prefill_time(run(["sale:density=1.0,bits=8"], workload=wl)) > prefill_time(run(["sale:density=1.0"],
                                                                                          workload=wl))
    assert prefill_time(run(["sale"], workload=wl)) < dense / 2


def test_hyperattention_is_exact_below_its_minimum_length_and_near_linear_above():
    h = make_technique("hyperattention")
    assert h.pairs(4096) == causal_pairs(4096, 0)
    assert h.pairs(131072) < causal_pairs(131072, 0) / 10
    assert h.pair_fraction(1, 100000) == 1.0


def test_hyperattention_pays_its_gathers_merges_and_bias_at_every_approximated_level():
    """The release's recursion (hyper_attn.py): each level whose off-diagonal half reaches min_seq_len hashes,
    sorts and gathers that half's Q/K/V, builds the Triton path's block mask and merges outputs by log-sum-exp."""
    h = make_technique("hyperattention")
    assert [h.levels(n) for n in (4096, 8192, 131072)] == [0, 1, 5]
    wl = Workload(1, 131056, 16, prefill_chunk=131056)     # 2**17 tokens with the output: five levels
    ops = {t.op.name: t.op for p, _ in run(["hyperattention"], workload=wl).prefill for t in p.op_times}
    no_mask = {t.op.name: t.op for p, _ in run(["hyperattention:bias_mask=false"], workload=wl).prefill
               for t in p.op_times}
    e = run([], workload=wl)
    hq, d = e.model.num_heads, e.model.head_dim
    out = 5 * 131056 / 2 * hq * d                      # five levels of half the sequence's queries
    assert ops["hyperattention_merge"].shape.elements == pytest.approx(out)
    mask = 5 * 131056 / 2 * hq * h.sample_size * 10.0
    assert ops["hyperattention_merge"].hbm_bytes - no_mask["hyperattention_merge"].hbm_bytes == pytest.approx(mask)


def test_dense_prefill_extrapolates_to_about_half_an_hour_at_one_million_tokens():
    # MInference's motivating figure: 30 minutes for an 8B model to prefill 1M tokens on one A100.
    n1, n2 = 65000, 130000
    t1 = run([], workload=Workload(1, n1, 16)).ttft_s
    t2 = run([], workload=Workload(1, n2, 16)).ttft_s
    quad = (t2 - 2 * t1) / (n2 * n2 - 2 * n1 * n1)
    lin = (t1 - quad * n1 * n1) / n1
    minutes = (lin * 2**20 + quad * 2**40) / 60
    assert 15 < minutes < 60


# ---- errors and composition
@pytest.mark.parametrize(("spec", "key"), [
    ("quest:dense_layers=-1", "dense_layers"), ("tidaldecode:budget=0", "budget"),
    ("tokenselect:reuse=1.0", "reuse"), ("double_sparsity:token_share=0", "token_share"),
    ("double_sparsity:label_bits=5", "label_bits"), ("lserve:streaming_share=1.0", "streaming_share"),
    ("shadowkv:rank=0", "rank"), ("a2ats:topk=2", "topk"), ("minference:density=1.5", "density"),
    ("sale:bits=3", "bits"), ("hyperattention:block_size=0", "block_size"), ("lm_infinite:n_local=0", "n_local")])
def test_bad_parameters_name_the_key(spec, key):
    with pytest.raises(WhatifError, match=f"{spec.split(':')[0]}:{key}="):
        parse_technique(spec)


@pytest.mark.parametrize(("combo", "slot"), [
    ("quest+tidaldecode", "decode selection"), ("shadowkv+kivi", "kv format"), ("minference+sale", "prefill sparsity"),
    ("lserve+h2o", "kv budget"), ("a2ats+double_sparsity", "decode selection")])
def test_conflicting_mechanisms_are_errors(combo, slot):
    with pytest.raises(WhatifError, match=slot):
        technique_set([combo])


def test_prefill_and_decode_sparsity_compose():
    e = run(["minference", "quest"])
    assert e.ttft_s < run(["quest"]).ttft_s and e.tpot_s < run(["minference"]).tpot_s


@pytest.mark.parametrize("name", ["shadowkv", "a2ats", "double_sparsity"])
def test_key_based_selection_refuses_latent_attention(name):
    with pytest.raises(WhatifError, match=f"{name}: deepseek-v3 uses latent attention"):
        Scenario(model="deepseek-v3", hardware="dgx-h100", gpus=8, workload=Workload(1, 1024, 16),
                 techniques=(name,)).run(with_max_batch=False)


# ---- claims
@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.band], ids=lambda c: f"{c.technique}-{c.metric}")
def test_claim_band(claim):
    outcome = evaluate(claim)
    # a stated known miss must stay a miss: if the model comes back into the band, the statement goes
    assert outcome.in_band is not bool(claim.miss), (claim.technique, claim.metric, outcome.gain, claim.band)
