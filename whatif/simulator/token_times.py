"""When a request's output tokens came out, stored by iteration rather than by token.

A decoding sequence gains one token in every iteration of its engine, so its tokens are a run of
that engine's iteration end times (one shared array of floats per engine), kept as (array, first,
stop). Tokens emitted otherwise (the first, out of prefill; several at once from a speculative
round) are points (time, tokens). Memory grows per iteration, not per generated token.

A chunk is the tokens a request got at one time: one token per chunk in plain decoding, the
accepted tokens of a round under speculative decoding. Inter-token latency is measured between
chunks, as serving engines report it when tokens stream in chunks."""
from __future__ import annotations

from array import array
from bisect import bisect_right

import numpy as np


class TokenTimes:
    __slots__ = ("pieces", "count")

    def __init__(self, times=()):
        self.pieces: list[tuple] = []   # (time, tokens) points and (ends, first, stop) runs, in order
        self.count = 0
        if len(times):   # (a record's starts empty: no loop set up)
            for t in times:
                self.add(t)

    def add(self, t: float, tokens: int = 1) -> None:
        """`tokens` tokens came out at `t` (one chunk)."""
        self.pieces.append((t, tokens))
        self.count += tokens

    def add_run(self, ends, first: int, stop: int) -> None:
        """One token at each of ends[first:stop] (iteration end times, ascending)."""
        if stop > first:
            self.pieces.append((ends, first, stop))
            self.count += stop - first

    def __len__(self) -> int:
        return self.count

    def tolist(self) -> list[float]:
        """Every token's time (a chunk's time repeated for each of its tokens)."""
        out: list[float] = []
        for p in self.pieces:
            if len(p) == 2:
                out += [p[0]] * p[1]
            else:
                out += p[0][p[1]:p[2]]
        return out

    def chunk_times(self) -> np.ndarray:
        """The time of each chunk, in order."""
        parts = [np.asarray(p[0][p[1]:p[2]], dtype=float) if len(p) == 3 else np.array([p[0]], dtype=float)
                 for p in self.pieces if len(p) == 3 or p[1] > 0]
        return np.concatenate(parts) if parts else np.zeros(0)

    def chunk_gaps(self) -> np.ndarray:
        """Seconds between consecutive chunks (the inter-token latencies)."""
        return np.diff(self.chunk_times())

    @property
    def first(self) -> float | None:
        for p in self.pieces:
            if len(p) == 2 and p[1] > 0:
                return p[0]
            if len(p) == 3:
                return p[0][p[1]]
        return None

    @property
    def last(self) -> float | None:
        for p in reversed(self.pieces):
            if len(p) == 2 and p[1] > 0:
                return p[0]
            if len(p) == 3:
                return p[0][p[2] - 1]
        return None

    def count_until(self, t: float) -> int:
        """Tokens that came out at or before `t`."""
        last = self.pieces[-1] if self.pieces else None
        if last is not None and (last[0] if len(last) == 2 else last[0][last[2] - 1]) <= t:
            return self.count   # (pieces are in time order: all of them; the common case)
        n = 0
        for p in self.pieces:
            if len(p) == 2:
                if p[0] > t:
                    break
                n += p[1]
            else:
                k = bisect_right(p[0], t, p[1], p[2]) - p[1]
                n += k
                if k < p[2] - p[1]:
                    break
        return n


def pooled_gaps(emissions) -> tuple[np.ndarray, np.ndarray]:
    """Every inter-chunk gap of the given TokenTimes, pooled, as (values, counts): a gap of an engine's
    iteration ends that many runs span is one value counted that many times, so the pool costs memory per
    iteration, not per token. Gaps between pieces (the first token to the first run, a preemption's
    pause) are values of their own."""
    return gather(emissions)[3:]


def gather(emissions) -> tuple[np.ndarray, ...]:
    """(first, last, count, gap values, gap counts) of the given TokenTimes: each one's first and last chunk's
    time (NaN without tokens) and tokens, as arrays, and pooled_gaps(). The common pieces (a first token, then
    one run of an engine's iteration ends) are read as four numbers and worked out as arrays; others one by one."""
    emissions = emissions if isinstance(emissions, list) else list(emissions)
    counts = np.fromiter((t.count for t in emissions), dtype=np.int64, count=len(emissions))
    firsts, lasts = np.full(len(emissions), np.nan), np.full(len(emissions), np.nan)
    engines: dict[int, tuple] = {}   # id(ends) -> (ends, other pieces' run starts, their stops, common pieces)
    others = []
    key, common = None, None
    for i, t in enumerate(emissions):
        pieces = t.pieces
        if len(pieces) == 2:
            p, q = pieces
            if len(q) == 3 and len(p) == 2 and p[1] > 0:
                if q[0] is not key:
                    key = q[0]
                    common = _engine(engines, key)[3].extend
                common((p[0], q[1], q[2], i))   # (first token time, run start, run stop, index), flat
                continue
        others.append(i)
    loose: list[float] = []
    gap = loose.append
    for i in others:
        t = emissions[i]
        a, b = t.first, t.last
        if a is not None:
            firsts[i], lasts[i] = a, b
        prev = None
        for p in t.pieces:
            if len(p) == 2:
                if p[1] == 0:
                    continue
                start = stop = p[0]
            else:
                ends, lo, hi = p
                start, stop = ends[lo], ends[hi - 1]
                if hi - lo > 1:
                    entry = _engine(engines, ends)
                    entry[1].append(lo)
                    entry[2].append(hi)
            if prev is not None:
                gap(start - prev)
            prev = stop
    values, weights = [np.asarray(loose, dtype=float)], [np.ones(len(loose))]
    for ends, los, his, common in engines.values():
        e = np.array(ends, dtype=float)
        lo, hi = np.asarray(los, dtype=np.int64), np.asarray(his, dtype=np.int64)
        if common:   # the first token's time, the run's last, the gap between them
            c = np.fromiter(common, dtype=float, count=len(common)).reshape(-1, 4)   # (no shape discovery)
            rows, t0, c_lo, c_hi = c[:, 3].astype(np.int64), c[:, 0], c[:, 1].astype(np.int64), c[:, 2].astype(np.int64)
            firsts[rows], lasts[rows] = t0, e[c_hi - 1]
            values.append(e[c_lo] - t0)
            weights.append(np.ones(len(rows)))
            lo, hi = np.concatenate([lo, c_lo]), np.concatenate([hi, c_hi])
        # gap j (ends[j] to ends[j+1]) is in run [lo, hi) when lo <= j <= hi - 2: +1 at lo, -1 at hi - 1, summed
        long = hi - lo > 1
        runs = np.bincount(lo[long], minlength=len(e)) - np.bincount(hi[long] - 1, minlength=len(e))
        values.append(np.diff(e))
        weights.append(np.cumsum(runs)[:-1].astype(float))
    return firsts, lasts, counts, np.concatenate(values), np.concatenate(weights)


def _engine(engines: dict, ends) -> tuple:
    """gather's entry for one engine's iteration ends: (ends, other pieces' run starts, their stops, the common
    pieces), made on first use."""
    entry = engines.get(id(ends))
    if entry is None:
        entry = engines[id(ends)] = (ends, array("q"), array("q"), [])
    return entry
