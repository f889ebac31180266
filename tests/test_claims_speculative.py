"""Family F claims (speculative decoding): bands, the assumed-acceptance sweeps, and the mechanisms the
claims' explanations rest on (overlap bounds, batch scaling, short draft contexts, long-context gains)."""
from dataclasses import replace

import pytest

from whatif.claims import evaluate
from whatif.claims.claim import merged, scenario_of
from whatif.claims.family_f import ASSUMED_ACCEPTANCE, CLAIMS, AcceptanceSweep, at_acceptance
from whatif.specs.models import load_model
from whatif.roofline.techniques.registry import parse_technique
from tests.benchmark_module import load_benchmark

ALPHAS = (0.5, 0.6, 0.7, 0.8, 0.9)


def claim(prefix: str):
    found = [c for c in CLAIMS if c.paper.startswith(prefix)]
    assert len(found) == 1, prefix
    return found[0]


def decoders(mapping: dict) -> list:
    return [t for t in map(parse_technique, mapping.get("techniques", [])) if t.decodes]


def gain(c, **variant_changes) -> float:
    return evaluate(replace(c, variant={**c.variant, **variant_changes})).gain


@pytest.mark.parametrize("c", [c for c in CLAIMS if c.band], ids=lambda c: c.paper[:40])
def test_family_f_claims_within_band(c):
    outcome = evaluate(c)
    assert outcome.in_band, (c.paper, outcome.gain, c.band)


def test_every_claim_runs_a_decoder_and_says_what_it_assumed():
    for c in CLAIMS:
        assert decoders(merged(c.setup, c.variant)), c.paper
        assert c.setup_note, c.paper
    assert len({c.paper for c in CLAIMS}) == len(CLAIMS)


def test_assumed_acceptances_name_claims_and_reproduce_them():
    papers = {c.paper for c in CLAIMS}
    assert set(ASSUMED_ACCEPTANCE) <= papers
    for c in CLAIMS:
        sweep = ASSUMED_ACCEPTANCE.get(c.paper)
        if sweep is None:
            continue
        assert "assumed" in c.setup_note, c.paper
        # the sweep at the assumed value is the claim itself
        assert evaluate(at_acceptance(c, sweep.assumed)).gain == pytest.approx(evaluate(c).gain, rel=1e-9), c.paper


def test_a_published_block_efficiency_is_converted_not_assumed():
    c = claim("Direct Alignment")
    assert c.paper not in ASSUMED_ACCEPTANCE
    (draft,) = decoders(c.variant)
    tokens, _, _ = draft.acceptance(1)
    assert tokens == pytest.approx(2.3, abs=0.01)    # the paper's block efficiency


def test_a_published_mean_accepted_length_is_converted_not_assumed():
    c = claim("Token Recycling")
    assert c.paper not in ASSUMED_ACCEPTANCE
    (draft,) = decoders(c.variant)
    tokens, _, _ = draft.acceptance(1)
    assert tokens == pytest.approx(2.73, abs=0.01)   # Spec-Bench leaderboard's mean accepted tokens, Vicuna-7B


def test_medusa_1_runs_spec_benchs_measured_mean_accepted_tokens():
    # Spec-Bench's A100 leaderboard: Medusa-1 heads on Vicuna-7B-v1.3, 2.32 mean accepted tokens a step
    c = claim("Medusa-1 can achieve")
    assert c.paper not in ASSUMED_ACCEPTANCE and c.kind == "scored"
    (draft,) = decoders(c.variant)
    tokens, _, _ = draft.acceptance(1)
    assert tokens == pytest.approx(2.32, abs=0.01)
    # the heads keep the technique's default profile, scaled down (the default yields ~2.56 tokens)
    assert float(draft.alphas.split("/")[0]) < 0.6 and tokens < 2.5


def test_specdecpp_runs_the_acceptance_its_release_measured_not_an_assumed_one():
    # Kaffaljidhmah2/SpecDec_pp README sample: 180 tokens, 67 target calls, 20 mismatched -> 113 of 133 accepted
    accepted, rejected = 180 - 67, 20
    for prefix in ("SpecDec++ (llama-2-chat", "SpecDec++ on Alpaca"):
        c = claim(prefix)
        assert c.paper not in ASSUMED_ACCEPTANCE and c.kind == "scored", prefix
        for spec in decoders(c.variant) + decoders(c.setup):
            assert spec.alpha == pytest.approx(accepted / (accepted + rejected), abs=0.005), prefix


def test_sweep_rewrites_every_decoder_and_nothing_else():
    bsd = claim("Batch Speculative Decoding Done Right (Vicuna")
    swept = at_acceptance(bsd, 0.9)
    (spec,) = decoders(swept.setup)
    assert spec.alpha == 0.9 and spec.batch_policy == "realign" and spec.draft == "vicuna-68m"
    assert swept.variant == bsd.variant        # the variant changes the batch only
    medusa = AcceptanceSweep(0.6, (1.0, 0.5))
    assert medusa.params(0.8) == {"alphas": "0.8/0.4"}
    assert medusa.params(1.0) == {"alphas": "1/0.5"}


def _chain_at_batch_1(c) -> bool:
    if decoders(c.setup) or scenario_of(c.setup).workload.batch != 1:
        return False
    (d,) = decoders(c.variant)
    return not d.tree and d.candidates == 1 and not getattr(d, "adaptive", False)


def test_sweep_is_monotone_in_acceptance_for_a_chain_drafter_at_batch_1():
    chains = [c for c in CLAIMS if c.paper in ASSUMED_ACCEPTANCE and _chain_at_batch_1(c)]
    assert len(chains) >= 4
    for c in chains:
        gains = [evaluate(at_acceptance(c, a)).gain for a in ALPHAS]
        assert all(a < b for a, b in zip(gains, gains[1:])), (c.paper, gains)


def test_medusa_2_heads_beat_medusa_1():
    assert evaluate(claim("Medusa-2")).gain > evaluate(claim("Medusa-1")).gain > 1.5


def test_pearl_overlap_gain_is_at_most_2x_and_independent_of_acceptance():
    """Drafting beside the verify pass turns draft + verify into max(draft, verify): at most 2x, and the
    same at any acceptance (both rounds yield the same tokens)."""
    c = claim("PEARL: a superior speedup performance up to ...")
    gains = [evaluate(at_acceptance(c, a)).gain for a in (0.5, 0.9)]
    assert 1.0 < gains[0] <= 2.0
    assert gains[1] == pytest.approx(gains[0], rel=0.01)


def test_batch_speculation_scales_throughput_less_than_the_batch():
    c = claim("Batch Speculative Decoding Done Right (Vicuna")
    g = evaluate(c).gain
    assert 1.0 < g < 8.0
    # re-aligning the padded KV every round costs time a paged (ragged) batch does not spend
    assert evaluate(claim("Batch Speculative Decoding Done Right: EQSPEC")).gain > 1.0
    ragged = gain(c, techniques=["speculative:draft=vicuna-68m,k=5,alpha=0.6"])
    assert ragged > g


def test_rapid_gains_as_the_drafter_reads_a_shorter_context():
    c = claim("RAPID")
    by_context = [gain(c, techniques=[f"speculative:draft=llama-3.1-8b,draft_context={n},k=4,alpha=0.8"])
                  for n in (0, 32768, 8192, 2048)]
    assert all(a < b for a, b in zip(by_context, by_context[1:])), by_context
    assert by_context[0] < 1.0      # a same-size drafter reading the whole context never pays


def test_triforce_gain_grows_with_the_context():
    c = claim("TriForce")
    short = evaluate(replace(c, setup={**c.setup, "workload": {**c.setup["workload"], "prompt": 16384}})).gain
    assert short < evaluate(c).gain


def test_spectr_candidates_help_most_at_middling_acceptance():
    c = claim("SpecTr: a further")
    assert evaluate(c).gain > 1.0
    low, high = (evaluate(at_acceptance(c, a)).gain for a in (0.5, 0.95))
    assert low > high     # a lone chain misses less often as acceptance rises: extra candidates matter less


def test_new_drafter_profiles_share_their_targets_vocabularies():
    assert load_model("vicuna-68m").vocab_size == load_model("vicuna-7b").vocab_size
    assert load_model("qwen3-0.6b").vocab_size == load_model("qwen3-8b").vocab_size
    assert load_model("vicuna-13b").total_params() == load_model("llama-2-13b").total_params()


def test_acceptance_meeting_finds_where_the_gain_crosses_the_claim():
    bench = load_benchmark("reproduce")
    c = claim("Medusa-2")
    ranges = bench.acceptance_meeting(c, {})
    assert len(ranges) == 1 and ranges[0][1] == bench.SEARCH_ALPHAS[-1]
    edge = ranges[0][0]
    assert bench._gain_at(c, edge - 0.01) < c.claimed <= bench._gain_at(c, edge + 0.01)
    assert bench._meets(ranges).startswith(">= ")
    assert bench.acceptance_meeting(claim("RAPID"), {}) == []          # never met: reported as none
    # SpecTr's 4 candidates over 1: at most ~1.18x (at 0.35-0.5) since a lower-ranked candidate takes the measured
    # rank falloff (session 63), never its 1.37x; with independent siblings (siblings=1) the gain peaks higher and
    # meets the figure only in a middle range, which the bracketing must find
    assert bench.acceptance_meeting(claim("SpecTr: a further"), {}) == []
    c = claim("SpecTr: a further")
    independent = replace(c, setup={**c.setup, "techniques": [t + ",siblings=1" for t in c.setup["techniques"]]},
                          variant={**c.variant, "techniques": [t + ",siblings=1" for t in c.variant["techniques"]]})
    spectr = bench.acceptance_meeting(independent, {})
    assert len(spectr) == 1 and bench.SEARCH_ALPHAS[0] < spectr[0][0] < spectr[0][1] < bench.SEARCH_ALPHAS[-1]
