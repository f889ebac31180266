"""The paper claims as tests, not targets: each claim's kind follows from its fields, scored claims are judged
by symmetric bands set from the paper alone, and every claim's verdict (in band, miss, conditional, ...) is
pinned in tests/claim_verdicts.py: a change that moves a verdict must change its pin, and say why in the commit.
docs/reproduction.md is generated from the same rows."""
import json
import math
from dataclasses import replace

import pytest

from whatif.claims import all_claims
from whatif.claims.claim import FACTOR, NOT_SCORED_WORDS, Assumption, Claim, merged
from tests.benchmark_module import load_benchmark
from tests.claim_verdicts import VERDICTS

BASE = dict(technique="kivi", paper="x", metric="max_batch", setup={}, variant={}, why="y")


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("reproduce")


@pytest.fixture(scope="module")
def results(bench):
    return bench.rows()


# ---------------------------------------------------------------- kinds, by rule (fast)

def test_kind_follows_from_the_fields():
    assert Claim(claimed=2.0, **BASE).kind == "scored"
    assert Claim(claimed=None, **BASE).kind == "no figure"
    assert Claim(claimed=2.0, derived="the budget is the claimed ratio", **BASE).kind == "illustrative"
    assert Claim(claimed=2.0, identity="half the heads is half the bytes", **BASE).kind == "illustrative"
    assert Claim(claimed=2.0, illustrative="whatif's metric is a mean, the paper's a tail", **BASE).kind \
        == "illustrative"
    assumed = Assumption("bits", (2, 4), 2, "not stated")
    assert Claim(claimed=2.0, assumed=assumed, **BASE).kind == "conditional"
    # an input taken from the result outranks an assumption: the claim is illustrative
    assert Claim(claimed=2.0, assumed=assumed, derived="bits from the ratio", **BASE).kind == "illustrative"
    with pytest.raises(AssertionError):
        Claim(claimed=2.0, derived="steps from the speed-up", miss="only a scored claim can miss", **BASE)


def test_an_input_documented_as_derived_from_the_claim_is_never_in_a_scored_claim():
    for c in all_claims():
        text = f"{c.why} {c.setup_note}".lower()
        said = [w for w in NOT_SCORED_WORDS if w in text]
        assert not (said and c.scored), (c.paper, said)
        if c.derived or c.identity or c.illustrative:
            assert not c.scored and len(c.not_scored_because) > 20, c.paper


def test_claims_the_issue_named_are_not_scored():
    """Identities and inputs taken from the result (issue 41): never counted as scored."""
    named = ("reduction in memory costs by over 20%", "ThinK with KIVI: batch size from 4x", "X-EcoMLA",
             "DFloat11: 'reduces LLM size by 30%'", "Compresso", "PV-Tuning", "with continuous batching on a real",
             "2X reduction in end-to-end response latency over prefix", "Double Sparsity-Offload",
             "dParallel", "LocalLeap", "compared to recent methods that handle long contexts, CacheGen")
    for prefix in named:
        found = [c for c in all_claims() if c.paper.startswith(prefix)]
        assert found, prefix
        assert all(c.kind in ("illustrative", "conditional") for c in found), prefix


def test_no_per_claim_knobs_and_one_prediction_per_setup():
    knobs = {"launch_us", "efficiency", "host_us", "cpu_us"}
    seen = {}
    for c in all_claims():
        assert not knobs & set(c.setup) and not knobs & set(c.variant), c.paper
        if c.kind not in ("scored", "conditional"):
            continue
        key = (repr(c.setup), repr(merged(c.setup, c.variant)), c.metric, c.baseline_engine, c.system_engine)
        assert key not in seen, f"one prediction counted twice: {c.paper} / {seen.get(key)}"
        seen[key] = c.paper


# ---------------------------------------------------------------- symmetric bands (fast)

def test_bands_are_symmetric_factors_of_the_papers_figure():
    assert Claim(claimed=2.0, **BASE).effective_band == pytest.approx((2.0 / FACTOR, 2.0 * FACTOR))
    assert Claim(claimed=3.0, bound="at_least", **BASE).effective_band == (pytest.approx(3.0 / FACTOR), math.inf)
    assert Claim(claimed=2.0, paper_range=(1.5, 3.0), **BASE).effective_band \
        == pytest.approx((1.5 / FACTOR, 3.0 * FACTOR))
    # a stated percentage is banded on the change: 7.2% -> [5.5%, 9.4%], not 1.072 /x 1.3
    lo, hi = Claim(claimed=1.072, percent=True, **BASE).effective_band
    assert (lo, hi) == pytest.approx((1 + 0.072 / FACTOR, 1 + 0.072 * FACTOR))
    lo, hi = Claim(claimed=1 / 1.11, percent=True, **BASE).effective_band   # "11% overhead"
    assert (lo, hi) == pytest.approx((1 / (1 + 0.11 * FACTOR), 1 / (1 + 0.11 / FACTOR)))
    for c in all_claims():
        if c.kind in ("scored", "conditional") and not c.band_why:
            lo, hi = c.effective_band
            assert lo <= c.claimed <= hi, c.paper
            if not c.percent and c.bound == "about":
                ends = c.paper_range or (c.claimed, c.claimed)
                assert (lo, hi) == pytest.approx((ends[0] / FACTOR, ends[1] * FACTOR)), c.paper


def test_a_scored_band_cannot_be_set_by_hand_without_a_reason():
    c = next(c for c in all_claims() if c.scored)
    with pytest.raises(AssertionError):
        replace(c, band=(0.1, 100.0))
    assert replace(c, band=(0.1, 100.0), band_why="the paper's figure spans models").effective_band == (0.1, 100.0)


def test_an_assumption_rewrites_its_technique_parameter_everywhere():
    c = Claim(claimed=2.0, **{**BASE, "setup": {"techniques": ["instinfer:in_storage=false"]},
                              "variant": {"techniques": ["instinfer:read_share=0.125,x=1"]}})
    swept = Assumption("read_share", (0.125, 0.5), 0.125, "s").at(c, 0.5)
    assert swept.variant["techniques"] == ["instinfer:read_share=0.5,x=1"]
    assert swept.setup == c.setup


# ---------------------------------------------------------------- verdicts, pinned (slow: every claim runs)

@pytest.mark.slow
def test_every_claims_verdict_is_pinned(bench, results):
    got = {r["id"]: bench.verdict(r) for r in results}
    moved = {k: (VERDICTS.get(k), v) for k, v in got.items() if VERDICTS.get(k) != v}
    stale = set(VERDICTS) - set(got)
    assert not moved and not stale, f"verdicts moved (pinned, now): {moved}; pins without a claim: {stale}"


@pytest.mark.slow
def test_every_miss_names_its_mechanism_and_no_explanation_is_stale(results):
    unexplained = [r["id"] for r in results
                   if r["claim"].scored and not r["outcome"].in_band and len(r["claim"].miss.strip()) < 30]
    assert not unexplained, "a scored claim outside its band must say which mechanism whatif leaves out"
    stale = [r["id"] for r in results if r["claim"].miss and r["outcome"].in_band]
    assert not stale, "a claim marked as a miss is back in its band: remove its `miss`"


@pytest.mark.slow
def test_conditional_claims_flip_within_their_plausible_range(results):
    """The rule for `conditional`: the verdict must actually turn on the assumed input, and the claim's own
    run is the sweep at its assumed value."""
    for r in results:
        c = r["claim"]
        if c.kind != "conditional":
            continue
        verdicts = {inside for _v, _g, inside in r["sweep"]}
        assert verdicts == {True, False}, (r["id"], r["sweep"])
        at_assumed = [g for v, g, _ in r["sweep"] if v == c.assumed.assumed]
        assert at_assumed == [pytest.approx(r["outcome"].gain, rel=1e-9)], r["id"]


@pytest.mark.slow
def test_acceptance_assumptions_that_do_not_flip_stay_scored():
    from whatif.claims import evaluate
    from whatif.claims.family_f import ASSUMED_ACCEPTANCE, CLAIMS, PLAUSIBLE_ACCEPTANCE, at_acceptance
    for c in CLAIMS:
        if c.paper not in ASSUMED_ACCEPTANCE or c.kind not in ("scored", "conditional"):
            continue
        flips = len({evaluate(at_acceptance(c, a)).in_band for a in PLAUSIBLE_ACCEPTANCE}) > 1
        assert flips == (c.kind == "conditional"), c.paper


@pytest.mark.slow
def test_checks_on_unscored_claims_hold(results):
    broken = [r["id"] for r in results if r["claim"].kind in ("illustrative", "no figure")
              and r["outcome"].in_band is False]
    assert not broken


@pytest.mark.slow
def test_counts_add_up_and_serving_claims_run_on_the_simulator(bench, results):
    n = bench.counts(results)
    assert n["scored"] + n["conditional"] + n["illustrative"] + n["no_figure"] == n["claims"] == len(results)
    assert n["within_band"] == sum(1 for r in results if r["claim"].scored and r["outcome"].in_band)
    assert n["serving"] >= 8


@pytest.mark.slow
def test_json_rows_carry_the_fields(bench, results):
    keys = {"id", "paper", "metric", "paper_value", "predicted", "scored", "kind", "verdict", "band_low",
            "band_high", "within_band", "why", "sweep"}
    records = [json.loads(json.dumps(bench.record(r))) for r in results]
    assert all(keys <= set(rec) for rec in records)
    assert len({rec["id"] for rec in records}) == len(records)
    for rec in records:
        if rec["verdict"] == "miss":
            assert rec["why"].startswith("miss: ") and len(rec["why"]) > 30, rec["id"]
        if rec["kind"] == "illustrative":
            assert rec["why"].startswith("illustrative: "), rec["id"]
        if rec["kind"] == "conditional":
            assert rec["why"].startswith("conditional on ") and rec["sweep"], rec["id"]


@pytest.mark.slow
def test_reproduction_doc_is_current(bench, results):
    from pathlib import Path
    doc = Path(__file__).resolve().parents[1] / "docs" / "reproduction.md"
    assert bench.markdown(results) == doc.read_text(), \
        "docs/reproduction.md is stale: run python benchmarks/reproduce.py --write"


def test_sourced_acceptances_hold_their_verdict_over_their_sourced_range():
    """Session 72 K: TriForce's acceptance is its authors' bound (above 0.9), FLASH's its release's 2.77 accepted
    tokens a round (alpha 0.549 on the claim's tree); neither may be a sweep point that happens to pass."""
    from whatif.claims import evaluate
    from whatif.claims.family_f import CLAIMS, _FLASH_ALPHA, at_acceptance
    from whatif.roofline.speculation import expected_tokens, parse_tree
    assert abs(expected_tokens(parse_tree("3x2x2x1x1", "tree"), (_FLASH_ALPHA,) * 5) - 2.77) < 0.01
    triforce = next(c for c in CLAIMS if c.paper.startswith("TriForce: up to 2.31x"))
    assert triforce.scored
    import whatif.claims.family_f as f
    f.ASSUMED_ACCEPTANCE[triforce.paper] = f.AcceptanceSweep(0.9)   # to vary it over the stated range only
    try:
        assert all(evaluate(at_acceptance(triforce, a)).in_band for a in (0.9, 0.95, 0.999))
    finally:
        del f.ASSUMED_ACCEPTANCE[triforce.paper]
