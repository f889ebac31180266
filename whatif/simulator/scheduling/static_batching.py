"""Static (request-level) batching, FasterTransformer: decode-first, but KV for the whole output is taken at
admission and finished sequences stay in the batch as padding until all finish."""
from __future__ import annotations

from .decode_first import DecodeFirst
from ...accel.marks import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)   # (compiled: users' policies subclass it)
class StaticBatching(DecodeFirst):
    request_level = True
