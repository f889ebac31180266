"""The acceptance arithmetic of speculative decoding (roofline/speculation.py): draft trees, the
expected tokens a round yields, batches that advance by their least-accepting sequence, and
SpecDec++'s adaptive draft length."""
import itertools
import math

import pytest

from whatif.errors import WhatifError
from whatif.roofline import speculation as spec

ALPHAS = (0.0, 0.1, 0.5, 0.8, 0.95, 1.0)
KS = (1, 2, 4, 7)


def per_depth(alpha: float, levels: int) -> tuple[float, ...]:
    return (alpha,) * levels


def leviathan(a: float, k: int) -> float:
    """Expected tokens per round of a chain of k drafts, each accepted with probability a."""
    return k + 1.0 if a == 1.0 else (1.0 - a ** (k + 1)) / (1.0 - a)


# ---------------------------------------------------------------- chains

@pytest.mark.parametrize("a,k", itertools.product(ALPHAS, KS))
def test_chain_matches_leviathans_closed_form(a, k):
    tree = spec.chain(k)
    assert spec.expected_tokens(tree, per_depth(a, k)) == pytest.approx(leviathan(a, k))
    assert spec.chain_expected_tokens(a, k) == pytest.approx(leviathan(a, k))


def test_chain_limits():
    assert spec.expected_tokens(spec.chain(5), per_depth(1.0, 5)) == 6.0     # every draft accepted
    assert spec.expected_tokens(spec.chain(5), per_depth(0.0, 5)) == 1.0     # only the verify pass's token
    # more drafts never yield fewer tokens, and never more than 1 / (1 - a)
    for a in (0.3, 0.8):
        gains = [spec.chain_expected_tokens(a, k) for k in range(1, 12)]
        assert gains == sorted(gains) and gains[-1] < 1 / (1 - a)


@pytest.mark.parametrize("a,k", itertools.product((0.0, 0.3, 0.69, 0.95), KS))
def test_chain_alpha_inverts_the_chain_formula(a, k):
    assert spec.chain_alpha(spec.chain_expected_tokens(a, k), k) == pytest.approx(a, abs=1e-9)


def test_chain_alpha_refuses_a_length_a_chain_cannot_reach():
    with pytest.raises(WhatifError, match="acceptance length"):
        spec.chain_alpha(4.5, 3)


def test_per_depth_alphas_multiply_along_the_chain():
    alphas = (0.9, 0.6, 0.3)
    reach = spec.reach_probabilities(spec.chain(3), alphas)
    assert reach == pytest.approx([0.9, 0.9 * 0.6, 0.9 * 0.6 * 0.3])
    assert spec.expected_tokens(spec.chain(3), alphas) == pytest.approx(1 + sum(reach))


# ---------------------------------------------------------------- trees

def test_product_tree_shapes():
    assert spec.product_tree((1, 1, 1)) == spec.chain(3)
    assert len(spec.product_tree((4, 3, 2, 1))) == 4 + 12 + 24 + 24
    assert spec.nodes_per_depth(spec.product_tree((3, 2, 2))) == [3, 6, 12]
    assert spec.depth(spec.product_tree((2, 2))) == 2
    assert spec.nodes_per_depth(spec.candidates_tree(3, 4)) == [3, 3, 3, 3]   # SpecTr: one branching, at the root


@pytest.mark.parametrize("a", ALPHAS)
def test_a_1x1x1_tree_is_the_chain(a):
    alphas = per_depth(a, 3)
    tree = spec.parse_tree("1x1x1", "t")
    assert tree == spec.chain(3)
    assert spec.expected_tokens(tree, alphas) == pytest.approx(leviathan(a, 3))


@pytest.mark.parametrize("a", (0.2, 0.5, 0.8))
def test_more_siblings_never_give_fewer_tokens(a):
    alphas = per_depth(a, 3)
    chain = spec.expected_tokens(spec.chain(3), alphas)
    last = chain
    for widths in [(2, 1, 1), (2, 2, 1), (3, 2, 1), (3, 2, 2), (4, 3, 2)]:
        got = spec.expected_tokens(spec.product_tree(widths), alphas)
        assert got >= last - 1e-12
        last = got
    assert last > chain   # siblings strictly help when a draft can be rejected
    # adding any node to any tree adds its probability, never less
    tree = spec.parse_tree("0/0.0/1", "t")
    bigger = spec.parse_tree("0/0.0/1/1.0/0.1", "t")
    assert spec.expected_tokens(bigger, alphas) > spec.expected_tokens(tree, alphas)


def test_siblings_are_tried_in_rank_order():
    """A depth is reached when one of its siblings is accepted: 1 - prod_r (1 - a f_r) for w siblings; with
    independent siblings (f = 1, the rule before session 63) that is 1 - (1 - a)^w."""
    for a, w in itertools.product((0.3, 0.7), (1, 2, 5)):
        reach = spec.reach_probabilities(spec.product_tree((w,)), (a,))
        assert reach[0] == pytest.approx(1 - math.prod(1 - a * spec.rank_falloff(r) for r in range(w)))
        old = spec.reach_probabilities(spec.product_tree((w,)), (a,), spec.INDEPENDENT_SIBLINGS)
        assert old[0] == pytest.approx(1 - (1 - a) ** w)
        assert reach[0] <= old[0] + 1e-12 and reach[0] <= 1.0
    # a deeper tree never reaches a depth with probability above 1 (one accepted path)
    reach = spec.reach_probabilities(spec.product_tree((6, 6, 6)), (0.9, 0.9, 0.9))
    assert all(0 <= p <= 1 + 1e-12 for p in reach) and reach == sorted(reach, reverse=True)


def test_rank_falloff_is_medusas_measured_table():
    """f from Medusa's Vicuna-7B head-0 top-k accuracy (assets/medusa_acc.csv): top-1 0.560, top-2 0.672, so the
    second candidate is right in (0.672 - 0.560) / (1 - 0.560) = 0.253 of the top one's misses: f_1 = 0.452."""
    assert spec.RANK_FALLOFF[0] == 1.0
    assert spec.RANK_FALLOFF[1] == pytest.approx(0.4519, abs=1e-4)
    assert spec.RANK_FALLOFF[2:] == pytest.approx((0.3012, 0.2145, 0.1487), abs=1e-4)
    falling = [spec.rank_falloff(r) for r in range(10)]
    assert falling == sorted(falling, reverse=True) and falling[-1] > 0   # extrapolated past rank 4, still falling
    # Sequoia's positional acceptance: the shares of one parent's children sum to at most 1
    for a in (0.3, 0.8, 1.0):
        assert sum(spec.positional_acceptance(a, r) for r in range(20)) <= 1.0 + 1e-12


def test_a_small_tree_by_hand():
    """Tree 2x1 at a = 0.5: node (0,) 0.5; node (1,) 0.5*0.4519*(1-0.5) = 0.11298; (0,0) 0.5*0.5 = 0.25;
    (1,0) 0.11298*0.5 = 0.05649. E = 1 + 0.5 + 0.11298 + 0.25 + 0.05649 = 1.91947 (independent: 2.125)."""
    tree = spec.product_tree((2, 1))
    assert spec.expected_tokens(tree, (0.5, 0.5)) == pytest.approx(1.91947, abs=1e-5)
    assert spec.expected_tokens(tree, (0.5, 0.5), spec.INDEPENDENT_SIBLINGS) == pytest.approx(2.125)
    # a falloff given by hand: rank 1 at 0.5 of the top draft's acceptance
    assert spec.expected_tokens(tree, (0.6, 0.5), (1.0, 0.5)) == pytest.approx(
        1 + 0.6 + 0.6 * 0.5 * 0.4 * (1 + 0.5) + 0.6 * 0.5)


@pytest.mark.parametrize("widths", [(3, 2, 2, 1, 1), (4, 3, 2, 1), (4, 3, 2), (2, 2, 2, 2)])
def test_tree_tokens_rise_with_acceptance(widths):
    tree = spec.product_tree(widths)
    gains = [spec.expected_tokens(tree, per_depth(a, len(widths))) for a in [i / 20 for i in range(21)]]
    assert gains == sorted(gains) and gains[0] == 1.0 and gains[-1] == pytest.approx(len(widths) + 1)
    # the tree still beats the chain of its depth below a = 1, by less than independent siblings would give
    for a in (0.3, 0.5, 0.8):
        alphas = per_depth(a, len(widths))
        new, old = spec.expected_tokens(tree, alphas), spec.expected_tokens(tree, alphas, spec.INDEPENDENT_SIBLINGS)
        assert leviathan(a, len(widths)) < new < old


def test_falloff_spec_parses_or_is_a_one_line_error():
    assert spec.parse_falloff("", "w") == spec.RANK_FALLOFF
    assert spec.rank_falloff(5, spec.parse_falloff("1", "w")) == 1.0
    assert [spec.rank_falloff(r, spec.parse_falloff("1/0.5/0.3", "w")) for r in range(5)] == [1, 0.5, 0.3, 0.3, 0.3]
    for bad in ("0.5", "1/1.5", "1/x", "/"):
        with pytest.raises(WhatifError, match="w="):
            spec.parse_falloff(bad, "w")


def test_spectr_candidates_raise_the_first_depth_only_by_branching():
    a, k = 0.6, 4
    one = spec.expected_tokens(spec.candidates_tree(1, k), per_depth(a, k))
    assert one == pytest.approx(leviathan(a, k))
    more = [spec.expected_tokens(spec.candidates_tree(c, k), per_depth(a, k)) for c in (1, 2, 4, 8)]
    assert more == sorted(more) and more[-1] > more[0]
    # every candidate is a full chain: the gain is bounded by the chain's with a first draft always accepted
    assert more[-1] < 1 + leviathan(a, k - 1)


def test_explicit_nodes_parse_and_sort():
    tree = spec.parse_tree(" 1/0/0.1/0.0 ", "t")
    assert tree == ((0,), (1,), (0, 0), (0, 1))
    assert spec.parse_tree("0/0.0/0.0.0", "t") == spec.chain(3)


@pytest.mark.parametrize("bad", ["2x", "x", "", "axb", "2x0", "0x2", "0/0.0.0", "0/0", "-1", "0/0.-1", "0/./1"])
def test_bad_trees_are_one_line_errors(bad):
    with pytest.raises(WhatifError) as e:
        spec.parse_tree(bad, "--technique speculative:tree")
    msg = str(e.value)
    assert msg.startswith("--technique speculative:tree=") and "\n" not in msg


def test_alphas_per_depth_repeat_the_last():
    assert spec.parse_alphas("0.9/0.8", 0.5, 4, "w") == (0.9, 0.8, 0.8, 0.8)
    assert spec.parse_alphas("", 0.5, 3, "w") == (0.5, 0.5, 0.5)
    assert spec.parse_alphas("0.9/0.8/0.7", 0.5, 2, "w") == (0.9, 0.8)
    for bad in ("1.5", "0.9/-0.1", "0.9/x", "/"):
        with pytest.raises(WhatifError, match="w="):
            spec.parse_alphas(bad, 0.5, 3, "w")


# ---------------------------------------------------------------- batches

@pytest.mark.parametrize("a", (0.5, 0.8, 0.95))
def test_a_batch_advancing_by_its_least_tends_to_one_token(a):
    reach = spec.reach_probabilities(spec.chain(4), per_depth(a, 4))
    by_batch = [spec.expected_min_tokens(reach, b) for b in (1, 2, 8, 64, 512)]
    assert by_batch[0] == pytest.approx(1 + sum(reach))          # one sequence: its own acceptance
    assert all(x > y or y == 1.0 for x, y in zip(by_batch, by_batch[1:]))   # fewer as the batch grows
    assert by_batch[-1] == pytest.approx(1.0, abs=0.02)
    assert spec.expected_min_tokens([1.0] * 4, 512) == 5.0       # all accepted: min is still k+1


def test_expected_max_count():
    """E[max of B copies] of a count with P(X >= i) = s_i: the deepest row a batch drafts."""
    survival = [1.0, 0.5, 0.25]
    assert spec.expected_max_count(survival, 1) == pytest.approx(1.75)          # E[X] for one
    by_batch = [spec.expected_max_count(survival, b) for b in (1, 4, 64)]
    assert by_batch == sorted(by_batch) and by_batch[-1] == pytest.approx(3.0, abs=1e-6)
    assert spec.expected_max_count([1.0] * 4, 7) == 4.0


# ---------------------------------------------------------------- adaptive draft length (SpecDec++)

def test_beta_grid_has_the_requested_mean():
    for mean, c in ((0.8, 4.0), (0.5, 1.0), (0.3, 50.0)):
        x, w = spec.beta_grid(mean, c)
        assert w.sum() == pytest.approx(1.0) and (w >= 0).all()
        assert float((x * w).sum()) == pytest.approx(mean, abs=2e-3)


@pytest.mark.parametrize("a,k", [(0.6, 3), (0.8, 5), (0.9, 8)])
def test_adaptive_that_never_stops_is_the_fixed_chain(a, k):
    """Every token alike (spread -> large) and a stop threshold above the whole draft's rejection
    (1 - a^k): the drafter always drafts k, and accepts like a chain."""
    reach, survival = spec.adaptive_chain(a, 1e7, stop=1 - a ** k + 0.01, k_max=k)
    assert survival == pytest.approx([1.0] * k)
    assert reach == pytest.approx(spec.reach_probabilities(spec.chain(k), per_depth(a, k)), rel=1e-3)
    assert 1 + sum(reach) == pytest.approx(leviathan(a, k), rel=1e-3)


def test_adaptive_stops_on_the_whole_drafts_rejection():
    """SpecDec++ stops once P(any drafted token rejected) exceeds the threshold, not one token's: with every
    token at 0.8 and a threshold of 0.5, drafts 1-3 keep 0.8^3 = 0.51 >= 0.5 and the fourth ends the round."""
    reach, survival = spec.adaptive_chain(0.8, 1e7, stop=0.5, k_max=6, lag=0)
    assert survival == pytest.approx([1.0, 1.0, 1.0, 1.0, 0.0, 0.0], abs=1e-9)
    assert reach[:4] == pytest.approx([0.8, 0.64, 0.512, 0.4096], rel=1e-3)


def test_released_loop_stops_one_draft_later():
    """The released loop reads the head on the previous draft (1 at the first step), so it drafts one token
    more than the paper's rule: a fifth draft where lag 0 stops after four."""
    reach, survival = spec.adaptive_chain(0.8, 1e7, stop=0.5, k_max=6)
    assert survival == pytest.approx([1.0, 1.0, 1.0, 1.0, 1.0, 0.0], abs=1e-9)
    assert reach[:5] == pytest.approx([0.8 ** d for d in range(1, 6)], rel=1e-3)


def test_adaptive_that_always_stops_drafts_one():
    a = 0.8
    reach, survival = spec.adaptive_chain(a, 1e7, stop=1 - a - 0.05, k_max=6, lag=0)  # every rejection > stop
    assert survival[0] == 1.0 and max(survival[1:]) < 1e-9
    assert reach[0] == pytest.approx(a) and max(reach[1:]) < 1e-9
    released = spec.adaptive_chain(a, 1e7, stop=1 - a - 0.05, k_max=6)        # its --bound 2 20: two drafts
    assert released[1][:2] == [1.0, 1.0] and max(released[1][2:]) < 1e-9


def test_a_head_weighted_toward_rejection_stops_earlier():
    """train.py weights rejected tokens' loss by w, so the head predicts p / (p + w (1 - p)): at p = 0.8 and
    w = 6, 0.4, under a 0.6 bar at once (two drafts, the release's floor); exact, the bar passes 0.8 and 0.8^2
    = 0.64, so four drafts."""
    exact = spec.adaptive_chain(0.8, 1e7, stop=0.4, k_max=6)
    weighted = spec.adaptive_chain(0.8, 1e7, stop=0.4, k_max=6, head_weight=6.0)
    assert exact[1] == pytest.approx([1.0, 1.0, 1.0, 1.0, 0.0, 0.0], abs=1e-9)
    assert weighted[1] == pytest.approx([1.0, 1.0, 0.0, 0.0, 0.0, 0.0], abs=1e-9)
    assert weighted[0][:2] == pytest.approx(exact[0][:2], rel=1e-3)     # the true acceptance is unchanged


def test_adaptive_stops_where_acceptance_is_low():
    """With varied acceptance, stopping early drafts fewer tokens, and the drafts it keeps are the
    likelier ones: accepted tokens per drafted token rise."""
    a, k = 0.7, 6
    never = spec.adaptive_chain(a, 2.0, stop=0.999, k_max=k)
    early = spec.adaptive_chain(a, 2.0, stop=0.5, k_max=k)
    assert sum(early[1]) < sum(never[1])                   # fewer drafted
    assert sum(early[0]) < sum(never[0])                   # fewer accepted too
    assert sum(early[0]) / sum(early[1]) > sum(never[0]) / sum(never[1])   # but a better yield per draft
    for reach, survival in (never, early):
        assert all(r <= s + 1e-12 for r, s in zip(reach, survival))        # reached only if drafted
