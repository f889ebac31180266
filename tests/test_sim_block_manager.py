"""The paged KV block manager alone: allocation counts, prefix-cache hits (consecutive blocks only), cached blocks
that stay hit-able after release until evicted least recently released first, and the errors a scheduler bug
would trip."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whatif.simulator.block_manager import BlockManager


def cached_bm(num_blocks=10, **kw) -> BlockManager:
    return BlockManager(num_blocks, block_size=16, prefix_caching=True, **kw)


def publish_private(bm: BlockManager, keys) -> None:
    """What a sequence does with its full prefix blocks: allocate them privately, then offer them to the cache."""
    bm.allocate(len(keys))
    for key in keys:
        assert bm.publish(key)


# ---------------------------------------------------------------- counts

def test_allocate_and_release_move_blocks_between_free_and_used():
    bm = BlockManager(10, 16)
    assert (bm.free, bm.used, bm.available) == (10, 0, 10)
    bm.allocate(4)
    bm.allocate(3)
    assert (bm.free, bm.used, bm.available) == (3, 7, 3)
    bm.release(5)
    assert (bm.free, bm.used, bm.available) == (8, 2, 8)
    bm.release(2)
    assert (bm.free, bm.used) == (10, 0)


def test_over_allocation_and_over_release_raise():
    bm = BlockManager(4, 16)
    bm.allocate(4)
    with pytest.raises(RuntimeError, match="allocating 1 KV blocks with 0 available"):
        bm.allocate(1)
    assert bm.free == 0                      # the failed call changed nothing
    bm.release(4)
    with pytest.raises(RuntimeError, match="released more"):
        bm.release(1)


def test_the_watermark_is_kept_only_when_asked():
    bm = BlockManager(10, 16, watermark_blocks=2)
    bm.allocate(7)
    assert bm.can_allocate(3) and not bm.can_allocate(4)
    assert bm.can_allocate(1, keep_watermark=True) and not bm.can_allocate(2, keep_watermark=True)


# ---------------------------------------------------------------- prefix cache

def test_lookup_hits_consecutive_blocks_only_and_references_them():
    bm = cached_bm()
    publish_private(bm, [("p", 0), ("p", 1), ("p", 3)])      # block 2 missing
    assert bm.lookup("p", 4) == [("p", 0), ("p", 1)]
    assert bm.refs[("p", 0)] == bm.refs[("p", 1)] == 2 and bm.refs[("p", 3)] == 1
    assert bm.lookup("p", 1) == [("p", 0)]                    # at most max_blocks
    assert bm.lookup("q", 4) == [] and bm.lookup(None, 4) == []
    assert bm.used == 3                                       # references share blocks: nothing new is held


def test_lookup_without_prefix_caching_finds_nothing():
    bm = BlockManager(10, 16, prefix_caching=False)
    bm.allocate(1)
    bm.publish(("p", 0))
    assert bm.lookup("p", 1) == []


def test_a_block_is_published_once():
    bm = cached_bm()
    publish_private(bm, [("p", 0)])
    bm.allocate(1)
    assert not bm.publish(("p", 0))                           # the second sequence keeps its private copy
    assert bm.refs[("p", 0)] == 1


def test_a_released_cached_block_is_evictable_but_still_hits():
    bm = cached_bm()
    publish_private(bm, [("p", 0), ("p", 1)])
    bm.unref([("p", 0), ("p", 1)])
    assert bm.used == 0 and bm.available == 10 and bm.free == 8   # counted as free, still cached
    assert list(bm.evictable) == [("p", 0), ("p", 1)]
    assert bm.lookup("p", 2) == [("p", 0), ("p", 1)]
    assert bm.used == 2 and not bm.evictable                  # referenced again: no longer evictable


def test_a_block_stays_until_its_last_reference_goes():
    bm = cached_bm()
    publish_private(bm, [("p", 0)])
    bm.lookup("p", 1)
    bm.unref([("p", 0)])
    assert bm.used == 1 and not bm.evictable
    bm.unref([("p", 0)])
    assert bm.used == 0 and list(bm.evictable) == [("p", 0)]


def test_allocation_evicts_the_least_recently_released_block_first():
    bm = cached_bm(num_blocks=4)
    publish_private(bm, [("a", 0), ("b", 0), ("c", 0)])
    bm.unref([("b", 0)])
    bm.unref([("a", 0)])
    bm.unref([("c", 0)])
    bm.lookup("b", 1)                 # re-referenced, then released again: now the most recent
    bm.unref([("b", 0)])
    assert list(bm.evictable) == [("a", 0), ("c", 0), ("b", 0)]
    bm.allocate(1)                    # the one never-cached free block: no eviction
    assert len(bm.evictable) == 3
    bm.allocate(1)
    assert bm.lookup("a", 1) == [] and ("a", 0) not in bm.refs
    bm.allocate(1)
    assert bm.lookup("c", 1) == []
    assert bm.lookup("b", 1) == [("b", 0)]
    assert bm.used == 4 and bm.available == 0


def test_referenced_cached_blocks_are_never_evicted():
    bm = cached_bm(num_blocks=3)
    publish_private(bm, [("p", 0), ("q", 0)])
    bm.unref([("q", 0)])
    assert bm.available == 2
    bm.allocate(2)                    # the free block and the evictable one
    assert ("p", 0) in bm.refs and ("q", 0) not in bm.refs
    with pytest.raises(RuntimeError):
        bm.allocate(1)


# ---------------------------------------------------------------- random operation sequences

OPS = st.lists(st.tuples(st.sampled_from(["alloc", "release", "publish", "lookup", "unref"]),
                         st.integers(0, 5), st.sampled_from(["a", "b"])), max_size=60)


@settings(max_examples=60, deadline=None)
@given(ops=OPS)
def test_random_operations_keep_the_block_accounting(ops):
    """A model of what sequences hold: private blocks and references. Blocks in use always equal private blocks
    plus distinct referenced cached blocks, and never exceed the pool."""
    bm = cached_bm(num_blocks=12)
    private = 0
    held: list[tuple] = []            # references the "sequences" hold (with repeats)
    for op, n, pid in ops:
        if op == "alloc" and bm.can_allocate(n):
            bm.allocate(n)
            private += n
        elif op == "release":
            n = min(n, private)
            bm.release(n)
            private -= n
        elif op == "publish" and private:
            key = (pid, n)
            if bm.publish(key):
                private -= 1
                held.append(key)
        elif op == "lookup":
            hits = bm.lookup(pid, n)
            assert [i for _, i in hits] == list(range(len(hits)))
            held += hits
        elif op == "unref" and held:
            bm.unref([held.pop(n % len(held))])
        assert bm.used == private + len(set(held))
        assert 0 <= bm.free and bm.used + bm.available == bm.num_blocks
        assert all(bm.refs[k] == 0 for k in bm.evictable)
        assert all(bm.refs[k] == held.count(k) for k in bm.refs)
