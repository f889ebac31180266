"""The sampling kernels of an engine whose top-k/top-p filter sorts the whole vocabulary of every sequence.

vLLM's PyTorch-native `TopKTopPSampler.forward_native` (vllm/v1/sample/ops/topk_topp_sampler.py, the default CUDA
path while the FlashInfer sampler was opt-in: vllm-project/vllm#26859, 2025-10-15, until #40376, 2026-04-20; the
Triton kernel of #33538 replaced it in between) runs, for a batch whose requests carry both top-k and top-p,
`apply_top_k_top_p`: `logits.sort(dim=-1)` over [B, V] fp32 (values and int64 indices), the top-k mask, softmax,
cumsum, the top-p mask, a scatter back to vocabulary order, then softmax and the exponential-race sample. Each is a
pass over all B x V logits, so the step pays them per sequence, not once (whatif's default prices sampling as one
softmax pass: graph.py `sampling`, 8 B a logit).

Bytes each logit moves through HBM, by kernel (4-byte fp32 values, 8-byte int64 indices), mechanism not fit:
- temperature divide (in place): read + write 4 + 4 = 8
- the sort: PyTorch fills the index tensor (8), and CUB's radix sort of 32-bit keys with 8-bit digits makes
  4 passes, each reading and writing key and index (4 x 2 x 12 = 96), after one histogram read of the keys (4): 108
- top-k: compare with the k-th value (read 4, write a 1-byte mask) 5, masked_fill (1 + 4 + 4) 9
- softmax of the sorted values (two reads, one write) 12, cumsum in place 8
- top-p: compare 5, masked_fill 9
- scatter to vocabulary order: a copy of the sorted values (8), then read values 4 + indices 8, write 4: 24
- softmax again 12; the exponential noise written 4; probs / noise (two reads, one write) 12; argmax read 4
Total SORT_SAMPLER_BYTES_PER_LOGIT = 220 B. Assumed: the radix sort streams at the sampling class's memory
efficiency like the other passes (a segmented sort of 100k+ keys per row is bandwidth-bound); 8-bit digits (CUB's
onesweep default for 32-bit keys); the kernels' launches ride on the class's one overhead. Published check, not
used: vllm-project/vllm#40376 and #32558 time the PyTorch path at 2.06-2.40 ms for 128 x 131,072 logits and
3.81 ms for 256 x 131,072 (GPU not stated); this prices 128 x 131,072 at 2.2 ms on H100 SXM."""
from __future__ import annotations

from dataclasses import replace

from .ops import Op

BYTES_PER_LOGIT = {"temperature": 8.0, "sort": 108.0, "top_k": 14.0, "softmax_cumsum": 20.0, "top_p": 14.0,
                   "scatter": 24.0, "sample": 32.0}
SORT_SAMPLER_BYTES_PER_LOGIT = sum(BYTES_PER_LOGIT.values())   # 220 B


def sorted_vocab_sampling(op: Op) -> Op:
    """The sampling op `op` (graph.py's, over its logits) as the full-vocabulary sort path runs it."""
    logits = op.shape.elements
    return replace(op, bytes={**op.bytes, "hbm": logits * SORT_SAMPLER_BYTES_PER_LOGIT},
                   formula=f"{logits:g} logits x {SORT_SAMPLER_BYTES_PER_LOGIT:g} B (top-k/top-p over a "
                   "full-vocabulary sort: sort_sampler.py)")
