"""Where an eager loop blocks its host on the GPU around every attention call (kernels.sync_around_attention).

An eager engine's host launches kernels ahead of the GPU, so a step costs the larger of its launches and its
kernels (forward_pass.launch_queue_time). A loop that calls torch.cuda.synchronize() before and after each
attention call stops that: before it, the host waits for the layer's projections to finish; after it, for the
attention itself, whose whole time is then added to the host's, and the next kernels' launches start only
afterwards. Read at source in TidalDecode's release (DerrickYLJ/TidalDecode tidal/models/TDAttention.py,
TDAttention.forward: `torch.cuda.synchronize()` before and after its prefill_forward, and each decode path's
decode_sparse_attn; its top-k between a pair of its own), which its full-attention baseline runs as well.
The synchronize's own round trip is not priced (sync_s 0).
"""
from __future__ import annotations

from ..specs.op_kinds import ATTENTION_CLASSES
from .ops import is_overlapped


def attention_sync_points(times) -> frozenset[int]:
    """ids of the ops the host waits for the GPU before launching: each attention op (synchronize before the
    call) and the op after it (synchronize after the call). `times` in launch order, as launch_queue_time
    walks them; ops `is_overlapped` runs on another stream are skipped, as there."""
    serial = [t for t in times if not is_overlapped(t.op)]
    marks: set[int] = set()
    for i, t in enumerate(serial):
        if t.op.op_class in ATTENTION_CLASSES:
            marks.add(id(t.op))
            if i + 1 < len(serial):
                marks.add(id(serial[i + 1].op))
    return frozenset(marks)
