"""What a windowed attention layer attends, as groups and a pair share the attention kernel model reads.

A sliding-window layer (window W, the query included) and DeepSeek Sparse Attention (top-k tokens) see at most W
keys a query; a chunked-local layer (llama4) sees only its own chunk's earlier tokens. Either way the kernel reads
at most the last W (or the chunk's) cached tokens: the groups' cached counts are capped there, and the pairs it
computes are those counts' causal pairs times `pair_share` (the exact windowed pairs over them)."""
from __future__ import annotations

from ..specs.model_layers import chunked_pairs, windowed_pairs
from .attention import causal_pairs


def window_groups(groups: tuple, window: int) -> tuple:
    """Groups with the cached tokens a window of `window` keys can reach: min(c, window - 1)."""
    return tuple((q, min(c, max(window - 1, 0)), n) for q, c, n in groups)


def chunk_groups(groups: tuple, chunk: int) -> tuple:
    """Groups with the cached tokens of the current chunk only: c mod chunk."""
    return tuple((q, c % chunk, n) for q, c, n in groups)


def window_share(window: int):
    """pair_fraction(q, c) over window_groups: windowed pairs / causal pairs of the capped groups."""
    def share(q, c):
        full = causal_pairs(q, c)
        return windowed_pairs(q, c, window) / full if full else 1.0
    return share


def chunk_share(chunk: int):
    """pair_fraction(q, c) over chunk_groups (c < chunk): a query sees only its own chunk."""
    def share(q, c):
        full = causal_pairs(q, c)
        return chunked_pairs(q, c, chunk) / full if full else 1.0
    return share


def combined(first, second):
    """Two pair fractions applied together (a technique's sparse prefill inside a window)."""
    if first is None or second is None:
        return first or second
    return lambda q, c: first(q, c) * second(q, c)
