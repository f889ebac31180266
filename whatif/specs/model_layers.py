"""One layer's kinds (LayerSpec) and the pair counts of windowed attention; the sections a model spec may add (MoE,
MLA, the DSA indexer, linear attention, Mamba-2, an encoder) are in model_sections.py.

A layer is a token mixer (an attention kind, a recurrent kind, or none) followed by a feed-forward block (dense,
MoE or none). Parameter counts and the bytes a mixer keeps per token and per sequence follow each kind:
  full      attention over the whole context (the KV cache grows with it)
  sliding   attention over the last `sliding_window` tokens (the cache holds at most the window)
  chunked   attention inside fixed chunks of `attention_chunk_size` tokens (llama4: at most one chunk held)
  linear    Gated DeltaNet: a constant (key x value) recurrent state per head and a short-conv state
  mamba2    Mamba-2 SSD: a constant (head_dim x state) state per head and a short-conv state
  none      no mixer (Nemotron-H's MLP-only blocks)
"""
from __future__ import annotations

from dataclasses import dataclass

ATTENTION_MIXERS = ("full", "sliding", "chunked")
RECURRENT_MIXERS = ("linear", "mamba2")
MIXER_KINDS = ATTENTION_MIXERS + RECURRENT_MIXERS + ("none",)
FFN_KINDS = ("dense", "moe", "none")
STATE_DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}   # a recurrent state's dtype as configs name it


@dataclass(frozen=True)
class LayerSpec:
    """One decoder layer's kinds: its token mixer, its feed-forward block, whether it applies RoPE, whether it runs
    its own DSA indexer (False: it attends the last indexer layer's top-k, GLM-5.2's IndexShare)."""

    mixer: str = "full"
    ffn: str = "dense"
    rope: bool = True
    own_indexer: bool = True

    @property
    def attention(self) -> bool:
        return self.mixer in ATTENTION_MIXERS

    @property
    def recurrent(self) -> bool:
        return self.mixer in RECURRENT_MIXERS


def windowed_pairs(q: float, c: float, window: float) -> float:
    """(query, key) pairs of q new tokens after c cached ones when each query sees at most `window` keys
    (itself included): sum over j < q of min(c + j + 1, window)."""
    k = min(max(window - c, 0.0), q)          # queries still inside the first window
    return k * c + k * (k + 1) / 2.0 + (q - k) * window


def chunked_pairs(q: int, c: int, chunk: int) -> float:
    """Pairs of q new tokens after c cached ones when each query sees only its own chunk's earlier tokens."""
    pairs, pos, end = 0.0, c, c + q
    while pos < end:
        stop = min(end, (pos // chunk + 1) * chunk)
        start = pos - pos % chunk                    # the chunk's first token
        a, b = pos - start + 1, stop - start         # keys seen by the first and last query of this run
        pairs += (a + b) * (b - a + 1) / 2.0
        pos = stop
    return pairs
