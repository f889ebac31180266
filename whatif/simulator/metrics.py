"""What a simulation run measured: per-request latencies and their percentiles, throughput, SLO attainment
and goodput, KV-memory use, batch sizes and GPU busy time, as a JSON-able summary, a text table, pandas
frames and CSV files."""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from operator import attrgetter

import numpy as np

from ..errors import WhatifError
from ..specs.engines import FrontEnd
from .collections_paused import collections_paused
from .config import SLO
from .log import ITERATION_COLUMNS, IterationLog, ReplicaInfo
from .request import FINISHED, REJECTED, STATUSES, Record
from .token_times import gather
from .metrics_text import (
    WINDOW_NOTE, STEADY_NOTE, ITL_NOTE, GOODPUT_NOTE, ATTAINMENT_NOTE,
    SERVED_NOTE, UNBOUNDED_NOTE, batch_line, cache_line, counts_line, latency_table, memory_line, setup_lines,
    slo_line, throughput_lines,
)
from .order_stats import counted_stats, stats
from .overload import overload, verdict_line
from .record_windows import busy_window_s, record_times, steady_window
from .run_length import judged, run_length, short_line

NAN = float("nan")
_STATUS = attrgetter("status")


def attains(record: Record, slo: SLO, front: FrontEnd | None = None) -> bool:
    """DistServe: a request attains the SLO when it finished within both objectives; a missing objective is not
    checked, and a one-token request has no TPOT, so it passes that part. With `front` the TTFT is the client's
    (Record.served_ttft_s: the server's front end included), as a benchmark client that times from its send reads it."""
    if record.status != FINISHED:
        return False
    if slo.ttft_s is not None and (record.ttft_s if front is None else record.served_ttft_s(front)) > slo.ttft_s:
        return False
    tpot = record.tpot_s
    return slo.tpot_s is None or tpot is None or tpot <= slo.tpot_s


def offered_rps(records: list[Record]) -> float | None:
    """Arrivals per second between the first and the last arrival (None for fewer than two, or all at once)."""
    if len(records) < 2:
        return None
    span = records[-1].request.arrival_s - records[0].request.arrival_s
    return (len(records) - 1) / span if span > 0 else None


def _per_s(count: float, window_s: float | None) -> float | None:
    if window_s is None:
        return None
    return count / window_s if window_s > 0 else None


def _fraction(part: float, whole: float) -> float | None:
    return part / whole if whole else None


@dataclass(eq=False)
class SimulationResult:
    """Everything a run produced. records: every request that arrived, in id order; log: one row per iteration
    per replica; end_s: simulated seconds when the run stopped; setup / lookup_stats: carried from the engine."""

    records: list[Record]
    log: IterationLog
    replicas: list[ReplicaInfo]
    end_s: float
    slo: SLO
    setup: dict
    lookup_stats: dict
    frontend: FrontEnd | None = None   # the engine spec's server front end (None: no spec, or none to pay)
    clients: int = 0                   # a closed loop's clients (0: an open loop, whose run length is judged)
    _summary: dict | None = field(default=None, init=False, repr=False)
    _gathered: tuple | None = field(default=None, init=False, repr=False)   # token_times.gather of the records
    _times: tuple | None = field(default=None, init=False, repr=False)      # record_times of the records
    _prompts: np.ndarray | None = field(default=None, init=False, repr=False)   # each record's prompt tokens
    _statuses: Counter | None = field(default=None, init=False, repr=False)     # records per status

    # ---------------------------------------------------------------- requests

    def finished(self) -> list[Record]:
        return [r for r in self.records if r.status == FINISHED]

    def window_s(self) -> float | None:
        arrival, _, _, finish = self.record_times()
        return busy_window_s(arrival, finish)

    def record_times(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """record_times of every record, read once (the summary's latencies and windows all use them)."""
        if self._times is None:
            self._times = record_times(self.records)
        return self._times

    def prompts(self) -> np.ndarray:
        """Each record's prompt tokens (int64), read once (the throughput's and the prefix cache's sums use them)."""
        if self._prompts is None:
            self._prompts = np.array([r.request.prompt for r in self.records], dtype=np.int64)
        return self._prompts

    def attainment(self, slo: SLO | None = None, client: bool = False) -> float | None:
        """Share of arrived requests that attain `slo` (default: the run's); None without an objective or arrivals.
        `client`: each TTFT as the client measures it, the spec's front end included (attains)."""
        slo = self.slo if slo is None else slo
        if not slo.given or not self.records:
            return None
        front = self.frontend if client else None
        return sum(attains(r, slo, front) for r in self.records) / len(self.records)

    def goodput_rps(self, slo: SLO | None = None) -> float | None:
        """SLO-attaining requests per second of the busy window (DistServe's goodput at this rate)."""
        slo = self.slo if slo is None else slo
        if not slo.given:
            return None
        attaining = sum(attains(r, slo) for r in self.records)
        rate = _per_s(attaining, self.window_s())
        offered = offered_rps(self.records)
        if rate is None or offered is None:
            return rate
        return min(rate, offered * attaining / len(self.records))

    def overload_verdict(self) -> dict:
        """overload.py's verdict on this run, without the rest of the summary (a capacity probe reads only this)."""
        return overload(*self.record_times()[:2], self.end_s, offered_rps(self.records),
                        _per_s(self._status_counts()[FINISHED], self.window_s()))

    def overloaded(self) -> bool:
        """Whether the offered load outran the run: its queue grew throughout (overload.py's rule)."""
        return bool(self.overload_verdict()["overloaded"])

    def long_enough(self) -> bool:
        """Whether the run's arrivals last long enough to reach the rate's steady state (run_length.py)."""
        arrival, _, _, finish = self.record_times()
        return run_length(arrival, finish, self.end_s)["long_enough"]

    def run_length_verdict(self) -> dict:
        """run_length.judged of this run: an open loop's arrivals against its requests' mean latency."""
        arrival, _, _, finish = self.record_times()
        return judged(arrival, finish, self.end_s, self.clients > 0)

    def latency(self) -> dict:
        done = self.finished()
        # Record's ttft_s, tpot_s, e2e_s, queue_s and served_ttft_s as arrays over the finished records (a million
        # in long runs; None as NaN, as stats' float conversion reads it), each value the same float arithmetic
        everyone = len(done) == len(self.records)   # (the common case: the arrays over all records, read once)
        arrival, first, sched, finish = self.record_times() if everyone else record_times(done)
        served = ()
        front = self.frontend
        if front is not None:   # (Record.served_ttft_s)
            sent = np.array([r.request.sent_s for r in done], dtype=float)
            prompts = self.prompts() if everyone else np.array([r.request.prompt for r in done], dtype=np.int64)
            lengths, at = np.unique(prompts, return_inverse=True)   # front.seconds once per prompt length
            f = np.array([front.seconds(p) for p in lengths.tolist()], dtype=float)[at.reshape(-1)]
            served = np.where(np.isnan(sent), (first - arrival) + f, first - sent)
        # (gathered once for every record when all finished: the window's tokens read it too)
        a, b, n, gaps, repeats = self._gather() if everyone else gather(r.emitted for r in done)
        many = n >= 2
        return {
            "ttft_s": stats(first - arrival),
            "tpot_s": stats((b[many] - a[many]) / (n[many] - 1)),
            "itl_s": counted_stats(gaps, repeats),
            "e2e_s": stats(finish - arrival),
            "queue_s": stats(sched - arrival),
            "served_ttft_s": stats(served),
        }

    def _status_counts(self) -> Counter:
        """Records per status, counted once."""
        if self._statuses is None:
            self._statuses = Counter(map(_STATUS, self.records))
        return self._statuses

    def _counts(self) -> dict:
        counts = self._status_counts()
        out = {"arrived": len(self.records), **{s: counts.get(s, 0) for s in STATUSES}}
        rejected = [r for r in self.records if r.status == REJECTED] if counts[REJECTED] else []
        out["rejected_reasons"] = dict(Counter(r.reason for r in rejected))
        out["rejected_longest_tokens"] = max((r.request.prompt + r.request.output for r in rejected), default=None)
        return out

    def _throughput(self) -> dict:
        window = self.window_s()
        arrival, first, _, finish = self.record_times()
        end = None if window is None else window + float(arrival.min())
        # tokens that came out (and prompts whose prefill completed) inside the window, finished or not
        generated = 0 if end is None else self._tokens_until(end)
        prefilled = 0 if end is None else int(self.prompts()[first <= end].sum())   # (exact: integers)
        return {"window_s": window, "window": WINDOW_NOTE,
                "finished_rps": _per_s(self._status_counts()[FINISHED], window),
                "output_tok_s": _per_s(generated, window), "input_tok_s": _per_s(prefilled, window),
                "offered_rps": offered_rps(self.records), "steady": self._steady(first)}

    def _steady(self, first_token: np.ndarray) -> dict:
        """Throughput between the 10% and the 90% completion (STEADY_NOTE); `first_token`: each record's time."""
        window = steady_window(self.record_times()[3])
        if window is None:
            return {"window_s": None, "from_s": None, "finished_rps": None, "output_tok_s": None,
                    "window": STEADY_NOTE}
        start, stop, completions = window
        begun = first_token <= stop
        tokens = self._tokens_until(stop, begun) - self._tokens_until(start, begun)
        return {"window_s": stop - start, "from_s": start, "finished_rps": completions / (stop - start),
                "output_tok_s": tokens / (stop - start), "window": STEADY_NOTE}

    def _gather(self) -> tuple:
        """token_times.gather of every record's tokens, worked out once."""
        if self._gathered is None:
            self._gathered = gather([r.emitted for r in self.records])
        return self._gathered

    def _tokens_until(self, t: float, among: np.ndarray | None = None) -> int:
        """Tokens the records (those `among` marks) got at or before `t` (TokenTimes.count_until summed): whole
        counts where the last chunk came by then, none where the first came after, the rest asked."""
        first, last, count = self._gather()[:3]
        some = count > 0 if among is None else (count > 0) & among
        whole = some & (last <= t)
        partial = np.flatnonzero(some & ~whole & ~(first > t))
        return int(count[whole].sum()) + sum(self.records[i].emitted.count_until(t) for i in partial.tolist())

    def _slo(self) -> dict:
        given = self.slo.given
        return {"ttft_s": self.slo.ttft_s, "tpot_s": self.slo.tpot_s, "target": self.slo.attainment,
                "attaining": sum(attains(r, self.slo) for r in self.records) if given else None,
                "attainment": self.attainment(), "goodput_rps": self.goodput_rps(),
                "counted_over": ATTAINMENT_NOTE, "goodput": GOODPUT_NOTE}

    def _prefix_cache(self) -> dict:
        admitted = ~np.isnan(self.record_times()[2])   # (first scheduled: None as NaN)
        cached = int(np.array([r.cached_tokens for r in self.records], dtype=np.int64)[admitted].sum())
        prompt = int(self.prompts()[admitted].sum())
        return {"cached_tokens": cached, "prompt_tokens": prompt, "hit_rate": _fraction(cached, prompt),
                "counted_over": "admitted requests, at their first admission"}

    # ---------------------------------------------------------------- iterations

    def _columns(self) -> dict[str, np.ndarray]:
        """The log's columns as arrays over their typed memory (no copy: counts stay int32, seconds float64; the
        sums, means and ratios read from them are the same floats as from float copies: whole-number sums far
        below 2**53, and an int32 divided by a count is converted to float64 first)."""
        return {c: np.asarray(v) for c, v in self.log.columns.items()}

    def _batch(self, col: dict[str, np.ndarray]) -> dict:
        if len(self.log) == 0:
            return {"mean_seqs": None, "max_seqs": None, "mean_tokens": None}
        seqs = col["decode_seqs"] + col["prefill_seqs"]
        tokens = col["decode_seqs"] + col["prefill_tokens"]
        return {"mean_seqs": float(seqs.mean()), "max_seqs": int(seqs.max()), "mean_tokens": float(tokens.mean())}

    def _replica_rows(self, col: dict[str, np.ndarray]) -> list[dict]:
        rows = []
        for info in self.replicas:
            # (one replica: every row is its own, so a whole-column view instead of a mask's copies)
            mine = slice(None) if len(self.replicas) == 1 else col["replica"] == info.index
            used, dur = col["kv_blocks_used"][mine], col["duration_s"][mine]
            busy = float(dur.sum())
            frac = used / info.kv_blocks if info.kv_blocks else None
            peak = None if frac is None or not len(frac) else float(frac.max())
            # time-weighted over the replica's iterations (idle gaps between them do not count)
            mean = None if frac is None or busy <= 0 else float(np.multiply(frac, dur, out=frac).sum() / busy)
            rows.append({"replica": info.index, "role": info.role, "gpus": info.gpus, "kv_blocks": info.kv_blocks,
                         "iterations": len(used), "kv_peak_fraction": peak, "kv_mean_fraction": mean,
                         # pp virtual engines each log their iterations: the replica is busy 1/pp of each
                         "busy_fraction": _fraction(busy / info.engines, self.end_s)})
        return rows

    # ---------------------------------------------------------------- faces

    def summary(self) -> dict:
        """JSON-able numbers, SI units (suffixes say which), None where nothing was measured. Worked out once
        (a run's records are final; the text, the tables and the report all read it); a fresh outer dict each call."""
        if self._summary is None:
            with collections_paused():   # (a list and an array per statistic over a million live records)
                self._summary = self._summarize()
        return dict(self._summary)

    def _summarize(self) -> dict:
        col = self._columns()
        replicas = self._replica_rows(col)
        throughput = self._throughput()
        preempted = [r.preemptions for r in self.records]

        def worst(key):
            values = [row[key] for row in replicas if row[key] is not None]
            return max(values) if values else None

        return {
            "requests": self._counts(),
            "latency": self.latency(),
            "throughput": throughput,
            "overload": self.overload_verdict(),
            "run_length": self.run_length_verdict(),
            "slo": self._slo(),
            "preemptions": {"total": sum(preempted), "requests_preempted": len(preempted) - preempted.count(0)},
            "prefix_cache": self._prefix_cache(),
            "batch": self._batch(col),
            "kv_memory": {"peak_fraction": worst("kv_peak_fraction"), "mean_fraction": worst("kv_mean_fraction"),
                          "of": "each replica's KV blocks; mean weighted by iteration duration; max over replicas"},
            "replicas": replicas,
            "iterations": len(self.log),
            "end_s": self.end_s,
            "setup": self.setup,
            "lookup_stats": self.lookup_stats,
        }

    def records_frame(self):
        """One row per request (pandas DataFrame)."""
        import pandas as pd

        rows = []
        for r in self.records:
            q, itl = r.request, r.inter_token_s
            rows.append({"id": q.id, "arrival_s": q.arrival_s, "prompt": q.prompt, "output": q.output,
                         "prefix_id": q.prefix_id, "status": r.status, "reason": r.reason, "replica": r.replica,
                         "queue_s": r.queue_s, "ttft_s": r.ttft_s, "tpot_s": r.tpot_s, "e2e_s": r.e2e_s,
                         "tokens": len(r.emitted), "preemptions": r.preemptions,
                         "cached_tokens": r.cached_tokens, "max_itl_s": max(itl) if itl else None})
        return pd.DataFrame(rows, columns=RECORD_COLUMNS)

    def series_frame(self):
        """One row per iteration per replica (pandas DataFrame): the log's columns, end_s and tokens."""
        import pandas as pd

        columns = self.log.columns
        df = pd.DataFrame({c: columns[c] for c in ITERATION_COLUMNS})
        df["end_s"] = df["start_s"] + df["duration_s"]
        df["tokens"] = df["decode_seqs"] + df["prefill_tokens"]
        return df

    def write_csv(self, directory: str) -> list[str]:
        """requests.csv and iterations.csv in `directory` (created when missing); returns their paths."""
        if os.path.exists(directory) and not os.path.isdir(directory):
            raise WhatifError(f"--csv-dir: {directory!r} is a file; give a directory (created when missing)")
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise WhatifError(f"--csv-dir: cannot create {directory!r}: {e.strerror}") from None
        paths = [os.path.join(directory, "requests.csv"), os.path.join(directory, "iterations.csv")]
        self.records_frame().to_csv(paths[0], index=False)
        self.series_frame().to_csv(paths[1], index=False)
        return paths

    def text(self) -> str:
        """A compact human-readable report, the answer first and the setup it ran last; every number carries
        its unit."""
        s = self.summary()
        verdict = verdict_line(s["overload"])
        short = short_line(s["run_length"], s["requests"]["arrived"], s["overload"]["overloaded"])
        lines = [line for line in (verdict, short) if line] + [counts_line(s["requests"]), ""]
        served = s["latency"]["served_ttft_s"]["p50"] is not None
        lines += [latency_table(s["latency"], s["overload"]["overloaded"]), ""]
        lines += throughput_lines(s["throughput"])
        if self.slo.given:
            lines.append(slo_line(s["slo"], s["throughput"]["window_s"]))
        lines += [memory_line(s), batch_line(s["batch"], s["iterations"]), cache_line(s), ""]
        lines += setup_lines(self.setup) + [ITL_NOTE] + ([SERVED_NOTE] if served else [])
        lines += [UNBOUNDED_NOTE] if verdict else []
        return "\n".join(lines)


RECORD_COLUMNS = ("id", "arrival_s", "prompt", "output", "prefix_id", "status", "reason", "replica", "queue_s",
                  "ttft_s", "tpot_s", "e2e_s", "tokens", "preemptions", "cached_tokens", "max_itl_s")
