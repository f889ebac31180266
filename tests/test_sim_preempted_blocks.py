"""vLLM V1's preemption by recompute, as its scheduler does it: the preempted sequence's full KV blocks stay in the
prefix cache (freed tail first, evicted only when reused), so coming back it recomputes only what was lost; and a
step that preempted admits no waiting request. Each test compares runs with the behaviour on and off."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from whatif.simulator.block_manager import BlockManager
from whatif.simulator.config import SchedulerConfig
from whatif.simulator.request import FINISHED
from whatif.roofline.engines import engine_spec

from tests.test_simulator import check_conservation, check_kv_invariant, poisson, run, small_kv, statuses

VLLM_V1 = SchedulerConfig.for_engine(engine_spec("vllm"))


def test_lookup_can_start_past_the_blocks_another_key_covered():
    bm = BlockManager(10, 16, prefix_caching=True)
    bm.allocate(3)
    for i in (2, 3, 4):
        assert bm.publish((("own", 7), i))
    bm.unref([(("own", 7), i) for i in (2, 3, 4)])
    assert bm.lookup(("own", 7), 10) == []                       # block 0 missing: nothing from the start
    assert bm.lookup(("own", 7), 10, start=2) == [(("own", 7), i) for i in (2, 3, 4)]
    assert bm.lookup(("own", 7), 4, start=2) == [(("own", 7), i) for i in (2, 3)]


def test_the_vllm_spec_turns_both_on_and_other_engines_keep_them_off():
    assert VLLM_V1.preempted_blocks_cached and not VLLM_V1.admits_after_preempting
    for name in ("sglang", "trtllm"):
        other = SchedulerConfig.for_engine(engine_spec(name))
        assert not other.preempted_blocks_cached and other.admits_after_preempting


def _preempting_run(engine: SchedulerConfig):
    reqs = poisson(np.random.default_rng(8), 30, rate=100.0, prompt=(100, 300), output=(100, 300))
    res = run(reqs, small_kv(48, engine), engine)
    assert statuses(res) == {FINISHED}
    check_kv_invariant(res)
    check_conservation(res, reqs)
    return reqs, res


def _redone(engine: SchedulerConfig) -> tuple[int, int]:
    """Prompt tokens recomputed with the preempted blocks dropped and kept cached."""
    reqs, plain = _preempting_run(replace(engine, preempted_blocks_cached=False))
    _, kept = _preempting_run(engine)
    prompts = sum(r.prompt for r in reqs)
    assert sum(r.preemptions for r in plain.records) > 0 and sum(r.preemptions for r in kept.records) > 0
    return sum(plain.log.columns["prefill_tokens"]) - prompts, sum(kept.log.columns["prefill_tokens"]) - prompts


def test_a_preempted_sequence_recomputes_less_when_its_blocks_stay_cached():
    # re-entering at once (a chunk cut to the free blocks), most of what was preempted comes back as cache hits
    redone_plain, redone_kept = _redone(replace(VLLM_V1, admits_partial_chunk=True))
    assert redone_plain > 0
    assert 0 <= redone_kept < 0.5 * redone_plain
    # vLLM V1 admits the budget's chunk whole (session 74 I): the victim waits for a completion, by when others have
    # reused part of its cached blocks; still less recomputed (5,569 vs 6,545 tokens here)
    redone_plain, redone_kept = _redone(VLLM_V1)
    assert 0 <= redone_kept < redone_plain


def test_a_step_that_preempted_admits_nothing_new():
    _, res = _preempting_run(VLLM_V1)
    col = res.log.columns
    preempting = {s for s, p in zip(col["start_s"], col["preempted"]) if p}
    assert preempting
    # a request's first admission is stamped with its step's start: none falls on a preempting step
    assert not any(r.first_scheduled_s in preempting for r in res.records)
    # (re-admissions are not stamped; the two runs part where one takes a preempted sequence back at once, which
    # needs a chunk cut to the free blocks: under vLLM's whole-chunk admission the victim waits for a completion
    # either way, session 74 I)
    cut = replace(VLLM_V1, admits_partial_chunk=True)
    _, waiting = _preempting_run(cut)
    _, admitting = _preempting_run(replace(cut, admits_after_preempting=True))
    assert [r.token_times for r in admitting.records] != [r.token_times for r in waiting.records]
