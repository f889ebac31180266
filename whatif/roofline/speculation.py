"""Acceptance arithmetic of speculative decoding: draft trees, expected tokens per round, batches.

A draft tree is a set of nodes, each a path of sibling ranks from the root (the last verified
token): (0,) is the top draft for the next position, (0, 1) the second-ranked draft after it. A
chain of k drafts is (0,), (0, 0), ... Siblings are tried in rank order and the first accepted wins
(SpecInfer / SpecTr's k-sequential draft selection; Sequoia's sampling without replacement), so at
most one node per depth is accepted. Given its parent was accepted and its higher-ranked siblings
were rejected, the rank-r node at depth d is accepted with probability c_dr = a_d * f_r: a_d is the
depth's top-1 acceptance and f the rank falloff (f_0 = 1, so chains keep a_d). The node's share of
its parent, c_dr * prod_{j<r} (1 - c_dj), is Sequoia's "positional acceptance" p_r (arXiv 2402.12374,
Infini-AI-Lab/Sequoia tree_search.py: a subtree's value is 1 + sum_r p_r * value(child r)), so

    P(reach depth d) = sum over nodes at depth d of the product of p along the node's path
    E[tokens per round] = 1 + sum_d P(reach depth d)      (the verify pass adds one token itself)

For a chain with one alpha this is (1 - a^(k+1)) / (1 - a) (Leviathan et al.).

The default falloff is measured, not assumed: a lower-ranked candidate is one the drafter already
thought less likely, so after a miss on the top draft it is accepted far less often than the top
draft was. MEDUSA_TOPK_ACCURACY below is Medusa's measured cumulative top-k accuracy of the head that
predicts the next token from the target's last hidden state (the head nearest an EAGLE-style
drafter, on Vicuna-7B, the claims' model); f_r = c_r / c_0 from it. (Until session 63 f was 1 at
every rank: each sibling got a fresh chance at a_d, which made a 3x2x2x1x1 tree at a = 0.5 yield
3.39 tokens a round; with the measured falloff it yields 2.52, against 1.97 for a chain of 5.)
"""
from __future__ import annotations

import math
from functools import reduce
from typing import TYPE_CHECKING

from ..errors import WhatifError

if TYPE_CHECKING:
    import numpy as np

Tree = tuple[tuple[int, ...], ...]


def chain(k: int) -> Tree:
    return tuple((0,) * d for d in range(1, k + 1))


def product_tree(widths: tuple[int, ...]) -> Tree:
    """Every node at depth d-1 has widths[d-1] children (ranks 0..w-1): a chain is 1x1x1."""
    nodes: list[tuple[int, ...]] = []
    level: list[tuple[int, ...]] = [()]
    for w in widths:
        level = [p + (r,) for p in level for r in range(w)]
        nodes += level
    return tuple(nodes)


def candidates_tree(candidates: int, k: int) -> Tree:
    """SpecTr: `candidates` independent draft sequences of length k (branching only at the root)."""
    return tuple((r,) + (0,) * (d - 1) for r in range(candidates) for d in range(1, k + 1))


MAX_TREE_NODES = 4096   # draft-tree nodes: published trees have 26-768 (Medusa 63, EAGLE-2 60, Sequoia <= 768)


def _check_tree_size(nodes: float, spec: str, where: str) -> None:
    """Before the tree is built: a 64x64x64x64 tree has 17 million nodes and would run for minutes."""
    if nodes > MAX_TREE_NODES:
        raise WhatifError(f"{where}={spec[:40]!r}: {nodes:,.0f} nodes; valid: at most {MAX_TREE_NODES:,} (published "
                          f"draft trees have 26 to 768)")


def parse_tree(spec: str, where: str) -> Tree:
    """'4x3x2' (a product tree of widths per depth) or explicit nodes '0/0.0/0.1/1' (ranks joined by '.')."""
    spec = spec.strip()
    try:
        if "/" in spec or "." in spec:
            _check_tree_size(spec.count("/") + 1, spec, where)
            nodes = tuple(tuple(int(r) for r in node.split(".")) for node in spec.split("/") if node.strip())
        else:
            widths = tuple(int(w) for w in spec.split("x") if len(w.strip()) <= 12)
            if len(widths) != spec.count("x") + 1 or min(widths) < 1:   # a zero width would cut the tree short
                raise ValueError
            import numpy as np   # (here only: listing techniques imports no numpy)
            _check_tree_size(sum(int(np.prod(widths[:d + 1], dtype=float)) for d in range(len(widths))), spec,
                             where)
            nodes = product_tree(widths)
    except ValueError:
        raise WhatifError(f"{where}={spec!r}: must be widths >= 1 per depth like 4x3x2, or nodes like 0/0.0/1 "
                          f"(sibling ranks from the root, joined by '.')") from None
    if not nodes or any(r < 0 for n in nodes for r in n) or any(len(n) == 0 for n in nodes):
        raise WhatifError(f"{where}={spec!r}: needs at least one node, with ranks >= 0")
    have = set(nodes)
    missing = [n for n in nodes if len(n) > 1 and n[:-1] not in have]
    if missing:
        raise WhatifError(f"{where}={spec!r}: node {'.'.join(map(str, missing[0]))} has no parent in the tree")
    if len(have) != len(nodes):
        raise WhatifError(f"{where}={spec!r}: a node is listed twice")
    return tuple(sorted(nodes, key=lambda n: (len(n), n)))


def depth(tree: Tree) -> int:
    return max((len(n) for n in tree), default=0)


def nodes_per_depth(tree: Tree) -> list[int]:
    """Nodes at depth 1..D: the tokens a drafter proposes at each step."""
    counts = [0] * depth(tree)
    for n in tree:
        counts[len(n) - 1] += 1
    return counts


def parse_alphas(spec: str, alpha: float, levels: int, where: str) -> tuple[float, ...]:
    """Acceptance per depth: '0.9/0.8/0.7' (the last repeats for deeper levels) or `alpha` at every depth."""
    if spec.strip():
        try:
            values = [float(a) for a in spec.split("/") if a.strip()]
        except ValueError:
            raise WhatifError(f"{where}={spec!r}: must be acceptance rates per depth like 0.9/0.8/0.7") from None
    else:
        values = [alpha]
    if not values or not all(0.0 <= a <= 1.0 for a in values):
        raise WhatifError(f"{where}={spec!r}: acceptance rates must be in [0, 1]")
    return tuple(values[min(d, len(values) - 1)] for d in range(levels))


# Medusa-1 on Vicuna-7B v1.3, head 0 (the next token after the base model's own): cumulative top-1..top-5
# accuracy against the target's greedy token, as measured by the authors (github.com/FasterDecoding/Medusa,
# assets/medusa_acc.csv, column train/medusa0_top1..top5; their heads_accuracy.py counts the target's token
# within the head's top-k). Greedy top-k accuracy is the positional acceptance a tree of top-k siblings gets.
MEDUSA_TOPK_ACCURACY = (0.5603876709938049, 0.6717196702957153, 0.7271371483802795, 0.7599403262138367,
                        0.7799453139305115)


def falloff_from_topk(cumulative: tuple[float, ...]) -> tuple[float, ...]:
    """f_r = c_r / c_0, c_r = P(rank r right | ranks < r wrong) = (top(r+1) - top(r)) / (1 - top(r))."""
    shares = [cumulative[0]] + [b - a for a, b in zip(cumulative, cumulative[1:])]
    cond = [s / (1.0 - (cumulative[r - 1] if r else 0.0)) for r, s in enumerate(shares)]
    return tuple(c / cond[0] for c in cond)


# (1, 0.452, 0.301, 0.215, 0.149); the other heads and the 13B/33B rows of the same table give f_1 0.45-0.54.
RANK_FALLOFF = falloff_from_topk(MEDUSA_TOPK_ACCURACY)


def rank_falloff(rank: int, falloff: tuple[float, ...] = RANK_FALLOFF) -> float:
    """f_r; past the measured ranks it keeps shrinking by the last measured ratio (an extrapolation)."""
    if rank < len(falloff):
        return falloff[rank]
    if len(falloff) < 2 or falloff[-2] <= 0:
        return falloff[-1]
    return falloff[-1] * (falloff[-1] / falloff[-2]) ** (rank - len(falloff) + 1)


def positional_acceptance(a: float, rank: int, falloff: tuple[float, ...] = RANK_FALLOFF) -> float:
    """Sequoia's p_r: the share of rounds in which the rank-r sibling is the accepted one, given the parent was."""
    return a * rank_falloff(rank, falloff) * math.prod(1.0 - a * rank_falloff(j, falloff) for j in range(rank))


def node_probability(node: tuple[int, ...], alphas: tuple[float, ...],
                     falloff: tuple[float, ...] = RANK_FALLOFF) -> float:
    return reduce(lambda p, dr: p * positional_acceptance(alphas[dr[0]], dr[1], falloff), enumerate(node), 1.0)


def reach_probabilities(tree: Tree, alphas: tuple[float, ...],
                        falloff: tuple[float, ...] = RANK_FALLOFF) -> list[float]:
    """P(the accepted path reaches depth d), d = 1..D."""
    reach = [0.0] * depth(tree)
    for n in tree:
        reach[len(n) - 1] += node_probability(n, alphas, falloff)
    return reach


def expected_tokens(tree: Tree, alphas: tuple[float, ...], falloff: tuple[float, ...] = RANK_FALLOFF) -> float:
    """Tokens a sequence gains per round: the accepted drafts plus the verify pass's own token."""
    return 1.0 + sum(reach_probabilities(tree, alphas, falloff))


INDEPENDENT_SIBLINGS = (1.0,)   # every sibling a fresh chance at a_d: the rule before session 63 (an upper bound)


def parse_falloff(spec: str, where: str) -> tuple[float, ...]:
    """'' = the measured default; '1' = independent siblings; '1/0.5/0.3' (ranks 0, 1, 2, ...; the last repeats)."""
    if not spec.strip():
        return RANK_FALLOFF
    try:
        values = tuple(float(f) for f in spec.split("/") if f.strip())
    except ValueError:
        values = ()
    if not values or values[0] != 1.0 or not all(0.0 <= f <= 1.0 for f in values):
        raise WhatifError(f"{where}={spec!r}: must be per-rank factors in [0, 1] starting at 1, like 1/0.45/0.3 "
                          f"('1' = independent siblings)")
    return values + (values[-1],)   # (two equal last values: rank_falloff repeats it)


def chain_expected_tokens(alpha: float, k: int) -> float:
    """Closed form for a chain with one alpha (Leviathan et al., eq. 1)."""
    return float(k + 1) if alpha == 1.0 else (1.0 - alpha ** (k + 1)) / (1.0 - alpha)


def chain_alpha(tokens: float, k: int) -> float:
    """The one alpha at which a chain of k drafts yields `tokens` a round (chain_expected_tokens inverted, by
    bisection): a published acceptance length (accepted drafts + 1) read as a per-draft acceptance."""
    if not 1.0 <= tokens <= k + 1:
        raise WhatifError(f"acceptance length {tokens}: valid: 1 to k + 1 = {k + 1} tokens a round")
    lo, hi = 0.0, 1.0
    for _ in range(60):   # (tokens rise with alpha: 60 halvings reach float precision)
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if chain_expected_tokens(mid, k) < tokens else (lo, mid)
    return (lo + hi) / 2


def profile_alphas(alpha: float, levels: int, profile: tuple[float, ...] = ()) -> tuple[float, ...]:
    """Acceptance per depth: `alpha` x profile[d] (the last factor repeats; capped at 1); no profile: alpha."""
    scale = profile or (1.0,)
    return tuple(min(1.0, alpha * scale[min(d, len(scale) - 1)]) for d in range(levels))


def tree_alpha(tokens: float, tree: Tree, falloff: tuple[float, ...] = RANK_FALLOFF,
               profile: tuple[float, ...] = ()) -> float:
    """The top-1 alpha at which `tree` yields `tokens` a round: a published mean accepted length read as an
    acceptance (tokens rise with alpha on a product tree; bisection as in chain_alpha). Every depth accepts at
    alpha, or with `profile` depth d at alpha x profile[d] (Medusa's heads, each less accurate than the last)."""
    if not 1.0 <= tokens <= depth(tree) + 1:
        raise WhatifError(f"acceptance length {tokens}: valid: 1 to the tree's depth + 1 = {depth(tree) + 1} tokens")
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        reached = expected_tokens(tree, profile_alphas(mid, depth(tree), profile), falloff)
        lo, hi = (mid, hi) if reached < tokens else (lo, mid)
    return (lo + hi) / 2


def expected_min_tokens(reach: list[float], batch: int) -> float:
    """Tokens per round when a batch advances by its least-accepting sequence (sequences independent):
    E[min] = 1 + sum_d P(reach d)^B."""
    return 1.0 + sum(p ** batch for p in reach)


def expected_max_count(survival: list[float], batch: int) -> float:
    """E[max over `batch` independent copies of a count X], from survival[i] = P(X >= i+1)."""
    return sum(1.0 - (1.0 - s) ** batch for s in survival)


def beta_grid(mean: float, concentration: float, points: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """Per-token acceptance probabilities p ~ Beta(mean*c, (1-mean)*c) on a midpoint grid (values, weights)."""
    import numpy as np   # (here only: listing techniques imports no numpy)
    x = (np.arange(points) + 0.5) / points
    a, b = max(mean * concentration, 1e-6), max((1.0 - mean) * concentration, 1e-6)
    logw = (a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x)
    w = np.exp(logw - logw.max())
    return x, w / w.sum()


def adaptive_chain(alpha: float, concentration: float, stop: float, k_max: int,
                   bins: int = 4000, lag: int = 1, head_weight: float = 1.0) -> tuple[list[float], list[float]]:
    """SpecDec++: the drafter's head predicts each draft's acceptance p_i, and the round stops once the
    predicted probability that at least one drafted token is rejected exceeds `stop` (arXiv 2405.19715,
    abstract and Algorithm 1): after draft d when 1 - p_1 ... p_d > stop, i.e. the product of the
    acceptances falls below 1 - stop.

    Acceptance varies per token (Beta with mean `alpha`, `concentration` assumed), independently by
    position, and the head predicts it exactly. Returns (P(reach depth d), P(drafted >= d)) for
    d = 1..k_max: depth d is drafted when the product over the earlier drafts is still >= 1 - stop,
    and reached when those were accepted (probability: that product) and it is. The product's
    distribution is carried on a grid of -log(product) up to -log(1 - stop), `bins` steps.

    `lag`: drafts made before the head's predictions count. The released loop (Kaffaljidhmah2/SpecDec_pp
    specdec_pp/hf_generation.py, schedule 'ada') reads the head at each drafter step on the last input position,
    the previous draft (train.py labels each position with its own token's acceptance), taking 1 at the first
    step ("no proposed tokens"); so after d drafts it stops on the product over drafts 1..d-1, one draft later
    than the paper's rule (lag 0), and never before two drafts (its --bound 2 20).

    `head_weight`: the head is trained with rejected tokens' loss weighted w (train.py `--weight_mismatch`, 6 in
    the README's recipe); that weighted cross-entropy is least at p / (p + w (1 - p)), so the head predicts
    that, not p, and the rule multiplies those (1: the exact prediction)."""
    import numpy as np
    x, w = beta_grid(alpha, concentration)
    limit = -math.log(1.0 - stop)
    step = limit / bins
    neglog = -np.log(x / (x + head_weight * (1.0 - x)))    # -log of the head's prediction
    going = neglog <= limit                   # a draft that keeps the product above 1 - stop by itself
    index = np.minimum((neglog[going] / step).astype(int), bins - 1)
    kernel = np.bincount(index, weights=w[going], minlength=bins)
    accepted = np.bincount(index, weights=(w * x)[going], minlength=bins)    # the same, times the true p
    free = min(k_max, 1 + lag)                # drafts made whatever the head predicts: product 1 before them
    reach, survival = [alpha ** d for d in range(1, free + 1)], [1.0] * free
    mass = kernel.copy()                      # distribution of -log(predicted product of the counted drafts)
    value = accepted.copy()                   # by bin: E[true product of those drafts], going on
    for _ in range(free, k_max):
        survival.append(float(mass.sum()))
        reach.append(float(value.sum()) * alpha ** free)   # the `free` newest drafts: independent of the stop
        mass = np.convolve(mass, kernel)[:bins]
        value = np.convolve(value, accepted)[:bins]
    return reach, survival
