"""Paged KV cache: a pool of fixed-size blocks, with prefix caching (vLLM's automatic prefix caching).

A sequence holds private blocks and, with prefix caching, references to cached blocks keyed by
(prefix id, block index). A cached block nobody references stays cached until its space is needed
(least recently released first), so a later request with the same prefix can still hit it."""
from __future__ import annotations

from collections import OrderedDict


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int, watermark_blocks: int = 0, prefix_caching: bool = False):
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.watermark_blocks = watermark_blocks
        self.prefix_caching = prefix_caching
        self.free = num_blocks                         # neither held nor cached
        self.reserved = 0                              # set aside for admitted requests' whole outputs (reserve)
        self.refs: dict[tuple, int] = {}               # cached block -> sequences referencing it
        self.evictable: OrderedDict[tuple, None] = OrderedDict()   # cached blocks with no reference, LRU first

    @property
    def available(self) -> int:
        return self.free + len(self.evictable)

    @property
    def used(self) -> int:
        """Blocks held by sequences (cached blocks nobody references count as free)."""
        return self.num_blocks - (self.free + len(self.evictable))   # (available, inlined: asked every iteration)

    def can_allocate(self, n: int, keep_watermark: bool = False) -> bool:
        return n <= self.free + len(self.evictable) - (self.watermark_blocks if keep_watermark else 0)

    def allocate(self, n: int) -> None:
        if n > self.free + len(self.evictable):
            raise RuntimeError(f"allocating {n} KV blocks with {self.available} available")   # a scheduler bug
        while self.free < n:
            key, _ = self.evictable.popitem(last=False)   # evict the least recently released cached block
            del self.refs[key]
            self.free += 1
        self.free -= n

    def release(self, n: int) -> None:
        self.free += n
        if self.free > self.num_blocks:
            raise RuntimeError("released more KV blocks than allocated")   # a scheduler bug

    def lookup(self, prefix_id, max_blocks: int, start: int = 0) -> list[tuple]:
        """Cached blocks start, start + 1, ... of `prefix_id` (stopping at the first missing one, below
        `max_blocks`), each now referenced by the caller."""
        if not self.prefix_caching or prefix_id is None:
            return []
        hits = []
        for i in range(start, max_blocks):
            key = (prefix_id, i)
            if key not in self.refs:
                break
            self._ref(key)
            hits.append(key)
        return hits

    def publish(self, key: tuple) -> bool:
        """Turn one of the caller's private blocks into cached block `key`. False when another
        sequence cached that block first (the caller keeps its private copy)."""
        if key in self.refs:
            return False
        self.refs[key] = 1
        return True

    def unref(self, keys: list[tuple]) -> None:
        for key in keys:
            self.refs[key] -= 1
            if self.refs[key] == 0:
                self.evictable[key] = None

    def _ref(self, key: tuple) -> None:
        if self.refs[key] == 0:
            del self.evictable[key]
        self.refs[key] += 1
