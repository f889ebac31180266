"""Static (request-level) batching, FasterTransformer: decode-first, but KV for the whole output is taken at
admission and finished sequences stay in the batch as padding until all finish."""
from __future__ import annotations

from .decode_first import DecodeFirst


class StaticBatching(DecodeFirst):
    request_level = True
