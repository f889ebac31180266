"""The paper claims as an honest test: scored claims are judged by bands set from the paper alone, every
scored miss names the mechanism whatif leaves out, illustrative claims are never counted, and the counts
cannot regress silently. docs/reproduction.md is generated from the same rows."""
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from whatif.claims import all_claims
from whatif.claims.claim import TOLERANCE, Claim
from tests.benchmark_module import load_benchmark

ROOT = Path(__file__).resolve().parents[1]

# The floor the scored set must hold: raise it when a mechanism lands, never lower it to pass. (It went from
# 80 to 77 once, for honesty, not to pass: hf-transformers' eager host cost was an assumed 37.5 us per kernel
# chosen after seeing the claims; the measured 100 us (gpt-fast's eager Llama) replaced it. And to 76 when
# vLLM's spec took its large-GPU defaults (vllm/engine/arg_utils.py: 8192 tokens per step on >= 70 GiB), which
# moved TPI-LLM's edge-device memory claim, emulated on H100s, out of band; its miss says so. Then up to 82 with
# mechanisms: Accelerate's pageable host copies, HF generate's held previous cache, TPI-LLM's FP32 setup,
# Hydragen's real attention shape, DEL's layer reuse, speculative rounds eager on eager engines; then 84 with
# gpt-fast's preallocated cache read whole (Double Sparsity's baseline) and CacheGen's chunks arriving before
# the prefill can start; then 85 with StreamingLLM on the A6000 its section 4.5 names; then 86 with Token
# Recycling's acceptance from its published mean accepted length instead of an assumed one; then 87 with
# Double Sparsity's operator claim on the grid its released benchmark sweeps; then 90 with SpecDec++'s three
# speed-ups on the authors' host launch cost, derived from their README's measured eager 7B drafter (20.9 ms a
# token) by the engine profile's own per-kernel rule, not chosen from the claims.)
SCORED_AT_LEAST = 118
WITHIN_BAND_AT_LEAST = 90


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("reproduce")


@pytest.fixture(scope="module")
def results(bench):
    return bench.rows()


@pytest.mark.slow
def test_counts_do_not_regress(bench, results):
    n = bench.counts(results)
    assert n["scored"] >= SCORED_AT_LEAST, n
    assert n["within_band"] >= WITHIN_BAND_AT_LEAST, n
    assert n["misses_explained"] == n["misses"], n


@pytest.mark.slow
def test_every_scored_miss_is_explained_and_no_explanation_is_stale(results):
    unexplained = [r["id"] for r in results
                   if r["claim"].scored and not r["outcome"].in_band and not r["claim"].miss.strip()]
    assert not unexplained, "a scored claim outside its band must say which mechanism whatif leaves out"
    stale = [r["id"] for r in results if r["claim"].miss and r["outcome"].in_band]
    assert not stale, "a claim marked as a miss is back in its band: remove its `miss`"


@pytest.mark.slow
def test_illustrative_and_figureless_claims_are_not_counted(bench, results):
    n = bench.counts(results)
    illustrative = [r for r in results if r["claim"].illustrative]
    assert len(illustrative) == n["illustrative"] >= 16
    assert not any(r["claim"].scored for r in illustrative)
    assert n["scored"] + n["illustrative"] + n["no_figure"] == n["claims"] == len(results)
    # flipping an illustrative claim's outcome changes no count
    scored = [r for r in results if r["claim"].scored]
    assert n["within_band"] == sum(1 for r in scored if r["outcome"].in_band)


def test_scored_bands_come_from_the_paper_and_hold_its_figure():
    for c in all_claims():
        if not c.scored:
            continue
        lo, hi = c.effective_band
        assert lo <= c.claimed <= hi, c.paper
        if not c.band_why:
            ends = c.paper_range or (c.claimed, c.claimed)
            assert lo == pytest.approx(0.0 if c.bound == "at_most" else ends[0] * (1 - TOLERANCE))
            assert hi == (math.inf if c.bound == "at_least" else pytest.approx(ends[1] * (1 + TOLERANCE)))


def test_a_scored_band_cannot_be_set_by_hand_without_a_reason():
    c = next(c for c in all_claims() if c.scored)
    with pytest.raises(AssertionError):
        replace(c, band=(0.1, 100.0))
    assert replace(c, band=(0.1, 100.0), band_why="the paper's figure spans models").effective_band == (0.1, 100.0)


def test_illustrative_claims_name_the_input_that_encodes_the_result():
    for c in all_claims():
        assert not (c.illustrative and c.miss), c.paper
        if c.illustrative:
            assert len(c.illustrative) > 20, c.paper


@pytest.mark.slow
def test_checks_on_unscored_claims_hold(results):
    broken = [r["id"] for r in results if not r["claim"].scored and r["outcome"].in_band is False]
    assert not broken


@pytest.mark.slow
def test_json_rows_carry_the_fields(bench, results):
    keys = {"id", "paper", "metric", "paper_value", "predicted", "scored", "band_low", "band_high",
            "within_band", "why"}
    records = [json.loads(json.dumps(bench.record(r))) for r in results]
    assert all(keys <= set(rec) for rec in records)
    assert len({rec["id"] for rec in records}) == len(records)
    for rec in records:
        if rec["scored"] and not rec["within_band"]:
            assert rec["why"].startswith("miss: ") and len(rec["why"]) > 30, rec["id"]
        if rec["kind"] == "illustrative":
            assert rec["why"].startswith("illustrative: "), rec["id"]


def test_claim_kinds():
    base = dict(technique="kivi", paper="x", metric="max_batch", setup={}, variant={}, why="y")
    assert Claim(claimed=2.0, **base).kind == "scored"
    assert Claim(claimed=2.0, illustrative="the budget is the claim", **base).kind == "illustrative"
    assert Claim(claimed=None, **base).kind == "no figure"
    assert Claim(claimed=2.0, bound="at_least", **base).effective_band == (1.4, math.inf)
    assert Claim(claimed=2.0, paper_range=(1.0, 2.0), **base).effective_band == pytest.approx((0.7, 2.6))
    with pytest.raises(AssertionError):
        Claim(claimed=None, miss="no figure cannot miss", **base)


@pytest.mark.slow
def test_reproduction_doc_is_current(bench, results):
    assert bench.markdown(results) == (ROOT / "docs" / "reproduction.md").read_text(), \
        "docs/reproduction.md is stale: run python benchmarks/reproduce.py --write"
