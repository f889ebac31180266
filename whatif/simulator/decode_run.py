"""Runs of decode-only iterations in one tight loop, between the events that change a batch.

A scheduler with nothing it can admit, swap in, receive or prefill (Scheduler.only_decodes) only
decodes: every decoding sequence gains a token an iteration, the batch keeps its rows, and its
cached tokens grow by the rows each step. Until an event comes (an arrival, a KV transfer, another
engine's iteration, a sequence that finishes or offers a block to the prefix cache, a block
shortage) such an iteration needs none of the scheduler's machinery: a block for each sequence
whose block phase comes due (counted: Scheduler.take_due_blocks), the (memoized) price of the
batch shape, the clock moved on, the end time and the log row stored. `decode_run` does exactly
that while it holds and leaves the scheduler as the full loop (Replica._run) would have left it; the
first iteration at which anything else could happen is the full loop's. The run is the same,
iteration for iteration and float for float (tests/test_sim_decode_run.py)."""
from __future__ import annotations

from array import array
from bisect import bisect_right
from itertools import accumulate

import numpy as np

from .clock import run_until_mine
from .iteration_time import BUCKETS, EXACT_BELOW
from .scheduling.sequence import Batch


def decode_run(replica, scheduler) -> Waiting | None:
    """Run `scheduler`'s decode-only iterations back to back, each as Replica._run would (same clock,
    blocks, token times and log rows), until the next one could meet anything else. An iteration at
    which sequences finish or offer blocks is completed by the scheduler, and the run goes on.

    When another event (an arrival, most often) comes before the next decode-only iteration ends, that
    iteration is still formed here (its blocks taken, as the scheduler would at its start: nothing else could
    join it). The events while it runs are then made here, as the clock would make them while the engine waits
    (clock.run_until_mine), and the scheduler completes it; where that cannot be (another process resumed with
    this one must run first, or the run stops before it ends) it is returned as a Waiting for Replica._run to
    wait out on the clock and complete."""
    if replica.ahead:   # the step formed next, as Replica._run forms it: only requests that arrived before
        scheduler.admit_before = scheduler.last_start   # the last step began join it (called as that step ends)
    if not scheduler.only_decodes():
        return None
    return _run(replica, scheduler, replica.env, replica.log.pending)


INF = float("inf")


# A decode-only iteration formed at `start` that ends after another event: Replica._run waits `duration`
# and completes it as the scheduler's batch `batch`, logging `waiting` and `running` (a plain tuple: one is
# made per arrival).
Waiting = tuple[float, float, Batch, int, int]   # (start, duration, batch, waiting, running)


def _run(replica, scheduler, env, rows_out: list) -> Waiting | None:
    """decode_run's loop: its log rows go to `rows_out` (the log's pending rows, flat; settled as it ends), the
    iteration prices it looked up in the memo count as the times' hits."""
    # Scheduler.take_due_blocks and .decoded, inlined (two calls a step were a third of this loop's cost): the
    # phase sets, the first-due counts and the step are the scheduler's own, stored back before it runs again.
    # (the heap `dues` stays the scheduler's: pushed and popped in place)
    bound = scheduler.bound
    if bound is None or bound[0] is not replica:
        bound = scheduler.bound = _bound(replica, scheduler)
    _, bm, index, queue, price, quotes, ends_append, aheads, due_n, size, dues, formed_ahead, queued, kv_arrived, \
        awaiting, swapped = bound
    inf = INF
    step = scheduler.step   # (moved only by decoded and complete below)
    # Every step priced here counts as a memo hit except those priced anew: one a step moved on (a step returned as
    # Waiting has not moved it, and a shortage returns before pricing), so the hits are the steps less the misses
    hits = -step
    ninf = -inf   # (head's "look again": made once, not a float a step)
    visited = scheduler.visited
    now_s = env.now   # the clock, kept here and stored back before anything else reads it
    begun = None      # the start of the latest iteration this run completed
    before = scheduler.admit_before   # the start of the iteration before the one formed next (ahead), else inf
    try:
        while True:   # (only_decodes holds)
            # A waiting request held back only because it arrived after the step before began (ahead) joins the
            # first step formed after one that began later: the full loop's (one formed ahead admits nothing else)
            if formed_ahead and begun is not None:   # (`before` is the latest step's start, kept as `begun`)
                before = begun
            gate = queued[0].req.arrival_s if formed_ahead and queued and queued[0].req.arrival_s > before else inf
            # (scheduler.decode_shape, inlined) fixed until sequences finish (a due step)
            decoding = len(scheduler.decoding)
            rows, base = decoding + scheduler.padding, scheduler.context_base + scheduler.padding_context
            running, waiting = len(scheduler.running), len(queued)
            used = bm.num_blocks - (bm.free + len(bm.evictable))   # (bm.used; changes below only by the blocks taken)
            # Read once until they can change: the step at which sequences finish or offer a block (only complete
            # moves it), the next event's time (the queue only by a wake-up), the last step of the current
            # price's bucket (the mean context grows with the step).
            finishing = dues[0][0] - 1 if dues else inf   # (scheduler.next_event_step() - 1)
            head = queue[0][0] if queue else inf
            last, duration = -1, 0.0
            near = head   # (head - SPAN_MIN * duration: a stretch is tried only while the next event is further)
            idle = replica.idle   # (it moves only while events are made, below: read again then)
            joined = 0            # (the queue's length after arrivals during a step, for the rows after it)
            rare = idle           # (events were made during the step, or an engine idles: the tail below runs)
            while True:
                if gate != inf and (before if begun is None else begun) >= gate:   # the held-back request can
                    return None   # join this one (an engine that forms no step ahead has none: its `gate` is inf)
                if now_s < near and step <= last and finishing - step > SPAN_MIN \
                        and gate == inf and not replica.idle:   # (the next event's distance first: it fails most)
                    # a stretch of steps that only add tokens: one array update, as this loop would run them
                    k, taken, price_s, price_last = replica.stepping.span(   # (_span unless the caller gave one)
                        replica, scheduler, step, finishing - 1, now_s, duration, last, head, used,
                        (rows, base, decoding, waiting, running))
                    if k:
                        step += k
                        visited = step - 1
                        begun = scheduler.ends[-2]
                        now_s = scheduler.ends[-1]
                        used += taken
                        duration, last = price_s, price_last
                        near = head - SPAN_MIN * duration
                        continue
                # the blocks due now, counted (Scheduler.take_due_blocks)
                p = step % size
                ahead = aheads[p]
                now = ahead.get(step, 0) if ahead else 0   # sequences whose first due step this is
                n = due_n[p] + now
                if n:
                    if bm.free >= n:
                        bm.free -= n
                    elif n <= bm.free + len(bm.evictable):
                        bm.allocate(n)
                    else:                            # a shortage: preemption is the full loop's
                        return None
                if now:
                    del ahead[step]
                    due_n[p] += now
                visited = step
                if step > last:   # (else the same bucket: the same memoized price; times.decode_span's memo read first)
                    mean = (base + decoding * step) // rows
                    quote = quotes.get((rows, mean if mean <= EXACT_BELOW else BUCKETS.get(mean)))
                    if quote is None:
                        duration, hi = price(rows, mean)
                        hits -= 1
                    else:
                        duration, hi = quote
                    last = ((hi + 1) * rows - 1 - base) // decoding   # the last step whose mean is <= hi
                    near = head - SPAN_MIN * duration
                end = now_s + duration               # (now_s: this step's start until it ends)
                used += n                            # (taken exactly that many from the available)
                if not end < head:                   # (env.peek) another event comes first
                    if env.held or not end < env.stop_at:   # the clock's: Replica._run waits it out
                        hits += 1
                        return now_s, duration, Batch(rows, base + decoding * step, decoding), \
                            waiting, running
                    # the events while it runs are made here, as the clock would make them (state stored back
                    # first; the rows logged so far are in the log already)
                    env.now = now_s
                    scheduler.step, scheduler.visited = step, visited
                    if begun is not None:
                        scheduler.last_start, scheduler.last_end = begun, now_s
                    first = queued[0] if waiting else None   # (what only_decodes reads, to see what the events moved)
                    others = len(kv_arrived) + len(awaiting) + len(swapped)
                    run_until_mine(env, end)
                    was, used = used, bm.num_blocks - (bm.free + len(bm.evictable))   # (another engine may move)
                    # Arrivals alone (the common event) that only this step's formed-ahead successor cannot take: the
                    # batch and only_decodes' answer stay (the head is the same one, or one that arrived during this
                    # step, after the step formed next began: gated), so the run goes on with the queue's new length
                    # and gate, as the look again below would find them
                    if formed_ahead and used == was and len(queued) > waiting and len(scheduler.running) == running \
                            and len(kv_arrived) + len(awaiting) + len(swapped) == others and not replica.idle \
                            and (queued[0] is first if first is not None else queued[0].req.arrival_s > now_s):
                        head = queue[0][0] if queue else inf
                        near = head - SPAN_MIN * duration
                        joined = len(queued)
                    else:
                        head = ninf                  # (the events may have changed what runs next: look again)
                    rare = True
                begun, now_s = now_s, end   # (begun, this step's start: ahead, the step before the one formed next)
                if step >= finishing:                # sequences finish or offer a block as this ends
                    env.now = end
                    scheduler.step, scheduler.visited = step, visited
                    scheduler.complete_decodes(end)
                    step, visited = scheduler.step, scheduler.visited
                    rows_out += (index, begun, duration, rows, 0, 0, bm.num_blocks - (bm.free + len(bm.evictable)),
                                 waiting, running, 0, 0.0)
                    if replica.idle:
                        replica.wake()
                    break                            # the batch changed: look again
                ends_append(end)                     # (Scheduler.decoded: every row gained a token at `end`)
                step += 1
                rows_out += (index, begun, duration, rows, 0, 0, used, waiting, running, 0, 0.0)   # (in place)
                if not rare:                         # (nothing below to do: one test a step)
                    continue
                rare = idle
                if joined:                           # (the arrivals above: the rows from here count them)
                    if first is None:                # (a new head: held back until a step begins after it)
                        gate = queued[0].req.arrival_s
                    waiting, joined = joined, 0
                if idle or head == ninf:
                    if replica.idle:
                        env.now = end
                        replica.wake()
                        if head != ninf:
                            head = queue[0][0] if queue else inf
                            near = head - SPAN_MIN * duration
                    if head == ninf:
                        break
            scheduler.step, scheduler.visited = step, visited
            scheduler.admit_before = begun if formed_ahead and begun is not None else before
            if not scheduler.only_decodes():
                return None
    finally:
        env.now = now_s
        if begun is not None:
            scheduler.last_start, scheduler.last_end = begun, now_s
        scheduler.step, scheduler.visited = step, visited
        replica.times.hits += hits + step
        replica.log.settle()   # (rows_out is its pending list: once a run, not a step)


def _bound(replica, scheduler) -> tuple:
    """What _run reads of `replica` and `scheduler` that stays the same object all their life (each set once, in
    their __init__; the containers change in place): read once per scheduler, not once per run (~0.75 runs a
    request, ~25 attribute reads each)."""
    bm, times = replica.bm, replica.times
    return (replica, bm, replica.index, replica.env.queue, times.decode_span, times.quotes, scheduler.ends.append,
            scheduler.ahead, scheduler.due_n, bm.block_size, scheduler.dues, replica.ahead, scheduler.waiting,
            scheduler.kv_arrived, scheduler.awaiting_kv, scheduler.swapped_out)


SPAN_MIN = 32        # steps of a stretch worth one array update (shorter ones: the loop's step by step)
SPAN_MAX = 1 << 14   # steps of one update at most (the arrays' size)


def _span(replica, scheduler, step: int, end_step: float, now_s: float, duration: float, last: int, head: float,
          used: int, shape: tuple) -> tuple[int, int, float, int]:
    """Run decode-only steps from `step` (started at `now_s`; priced `duration` up to step `last`) up to
    `end_step` (the last before sequences finish) at once, crossing into the next price bucket while its price is
    in the memo: the blocks each step takes (its phase's due sequences, counted as take_due_blocks does), the end
    times (summed one by one, as the loop adds them: numpy's accumulate is sequential) and the log rows, each as
    the loop makes it. Stops before the first step that ends at or after `head` (the next event), needs more
    blocks than are free (the loop's own path: eviction or preemption) or needs a price not in the memo. Returns
    (steps taken, blocks taken, the price and last step of the bucket the next step is in, or of the last one
    looked at); no steps when fewer than SPAN_MIN would be."""
    rows, base, decoding, waiting, running = shape
    quotes = replica.times.quotes
    durations, counts, lasts = [], [], []
    k, spent, stop = 0, now_s, int(min(end_step, step + SPAN_MAX - 1))   # (an int: end_step is one or inf)
    while True:   # the buckets' prices, until the stretch's end or (about) the next event
        n = min(last, stop) - (step + k) + 1
        if spent + duration * n >= head:      # (about) the steps before the next event, one more to be sure
            n = max(1, min(n, int((head - spent) / duration) + 2)) if duration > 0 else n
        durations.append(duration)
        counts.append(n)
        lasts.append(last)
        k += n
        spent += duration * n
        if step + k > stop or spent >= head:
            break
        mean = (base + decoding * (step + k)) // rows
        quote = quotes.get((rows, mean if mean <= EXACT_BELOW else BUCKETS.get(mean)))
        if quote is None:
            break
        duration, hi = quote
        last = ((hi + 1) * rows - 1 - base) // decoding
    if k < SPAN_MIN:
        return 0, 0, 0.0, 0
    per_step = np.full(k, duration) if len(counts) == 1 else np.array(durations).repeat(counts)
    ends = np.empty(k + 1)
    ends[0] = now_s
    ends[1:] = per_step
    np.add.accumulate(ends, out=ends)          # ends[j + 1]: step j's end
    k = min(k, int(ends[1:].searchsorted(head)))   # steps ending before the next event
    if k < SPAN_MIN:
        return 0, 0, 0.0, 0
    bm, size = scheduler.bm, scheduler.bm.block_size
    aheads, due_n = scheduler.ahead, scheduler.due_n
    first = step % size
    steady = due_n[:]   # due each cycle (ahead ones join below)
    needs = np.empty((k // size + 1, size), dtype=np.int64)
    needs[:] = steady[first:] + steady[:first]   # (each row a cycle of phases from the stretch's first step)
    needs = needs.reshape(-1)[:k]
    joins = []   # (phase, first due step, count) of sequences whose first due step falls in the stretch
    for p in range(size):
        if aheads[p]:
            for due, count in aheads[p].items():
                if step <= due < step + k:
                    joins.append((p, due, count))
                    needs[due - step::size] += count   # due at their first step and every cycle on
    taken = needs.cumsum()
    k = min(k, int(taken.searchsorted(bm.free, "right")))   # steps whose blocks are all free ones
    if k < SPAN_MIN:
        return 0, 0, 0.0, 0
    blocks = int(taken[k - 1])
    bm.free -= blocks
    for p, due, count in joins:
        if due < step + k:
            del aheads[p][due]
            due_n[p] += count
    scheduler.ends.frombytes(ends[1:k + 1].tobytes())
    log = replica.log
    log._flush()   # (the rows before these first: the columns keep the order rows were made in)
    if not log.keep:
        log.dropped += k
        return _next_bucket(k, blocks, counts, durations, lasts)
    c = log.stored
    c["start_s"].frombytes(ends[:k].tobytes())
    c["duration_s"].frombytes(per_step[:k].tobytes())
    c["kv_blocks_used"].frombytes((used + taken[:k]).astype(np.intc).tobytes())
    for name, value in (("replica", replica.index), ("decode_seqs", rows), ("prefill_seqs", 0),
                        ("prefill_tokens", 0), ("waiting", waiting), ("running", running), ("preempted", 0)):
        c[name].extend(array("i", [value]) * k)
    c["swap_s"].extend(array("d", [0.0]) * k)
    return _next_bucket(k, blocks, counts, durations, lasts)


def _next_bucket(k: int, blocks: int, counts: list, durations: list, lasts: list) -> tuple[int, int, float, int]:
    """_span's answer: its k steps and blocks taken, the price and last step of the bucket the step after them is in."""
    segment = bisect_right(list(accumulate(counts)), k - 1)
    segment = min(segment, len(counts) - 1)
    return k, blocks, durations[segment], lasts[segment]
