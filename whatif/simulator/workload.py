"""Workloads: arrival processes, prompt/output length distributions, shared prefixes, multi-turn
sessions and trace files, turned into a seeded list of requests.

Long because every workload kind feeds one seeded generator: splitting it would scatter the draw order
that makes runs reproducible."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from ..errors import WhatifError, positive_int
from ..specs.checks import choice, integer, number
from .length_profiles import LENGTH_PROFILES, LengthDist
from .request import Request, requests_from_columns

ARRIVALS = ("poisson", "gamma")
LENGTHS = ("fixed", "sharegpt", "openchat-sharegpt4", "long-context", "sharegpt-multiturn")
DEFAULT_REQUESTS = 1000
MAX_REQUESTS = 10_000_000          # a guard against typos (--rate 1e9); far more than any simulation runs



@dataclass(frozen=True)
class WorkloadSpec:
    """The generated traffic: arrivals (process, rate, burstiness), request count and lengths, sessions and
    shared prefixes. (A docstring spares dataclass() an inspect.signature call at every cold start.)"""

    arrival: str = "poisson"       # poisson, or gamma (bursty: inter-arrival CV = burstiness)
    rate: float = 1.0              # requests (sessions, with turns > 1) per second
    burstiness: float = 1.0        # gamma inter-arrival coefficient of variation (1 = Poisson)
    requests: int | None = None    # how many requests (default DEFAULT_REQUESTS unless duration is given)
    duration_s: float | None = None  # or: every arrival in [0, duration)
    lengths: str = "fixed"         # fixed (prompt/output), or a built-in distribution
    prompt: int = 512              # tokens, for lengths=fixed
    output: int = 128
    range_ratio: float = 1.0       # lengths=fixed: each prompt and output drawn uniform in [floor(ratio x L), L]
                                   # tokens, as benchmark_serving.py's random dataset with --random-range-ratio
                                   # (InferenceX's utils/bench_serving sample_uniform); 1: exactly L
    length_cv: float = 0.0         # lengths=fixed: each prompt and output drawn normal(L, cv x L), rounded, at least
                                   # 1 token (DeepSpeed-FastGen's benchmark: 'a normal distribution was applied to
                                   # prompt and generation lengths ... and a 30% variance'); 0: exactly L
    prompt_max: int | None = None  # lengths=fixed: a drawn prompt longer than this is cut to it (DeepSpeed-FastGen's
                                   # client: min(int(normal(L, 0.3 L)), max_length), MAX_PROMPT_LENGTH 4000)
    prefix_groups: int = 0         # > 0: each request opens with one of this many shared prefixes
    prefix_tokens: int = 0         # tokens of each shared prefix (added to the prompt)
    turns: int = 1                 # > 1: multi-turn sessions, each turn's prompt carries the history
    think_s: float = 10.0          # mean seconds between a session's turns (exponential)
    trace: str | None = None       # CSV/JSONL file of requests (replaces the generated ones)
    trace_rate: float | None = None  # the rate (req/s) the trace's arrivals were sent at: arrivals scaled by
                                   # trace_rate / rate, so a sweep over `rate` resends the same requests with the
                                   # same gaps scaled (DistServe's benchmark reseeds its sampling each rate)
    seed: int = 0
    concurrency: int = 0           # > 0: a closed loop of this many clients (closed_loop.py); rate unused
    through_server: bool = True    # the closed loop's clients cross the engine's HTTP front end (False: an
                                   # in-process benchmark such as trtllm-bench, no front end)

    def __post_init__(self):
        choice(self.arrival, ARRIVALS, "--arrival")
        number(self.rate, "--rate", 0.0, low_open=True)
        number(self.burstiness, "--burstiness", 0.0, low_open=True)
        if self.arrival == "poisson" and self.burstiness != 1:
            raise WhatifError(f"--burstiness: {self.burstiness!r} needs --arrival gamma (Poisson's CV is 1)")
        if self.requests is not None:
            positive_int(self.requests, "--requests")
            if self.requests > MAX_REQUESTS:
                raise WhatifError(f"--requests: {self.requests} is more than the {MAX_REQUESTS:,} allowed")
        if self.duration_s is not None:
            number(self.duration_s, "--duration", 0.0, low_open=True)
            if self.rate * self.duration_s > MAX_REQUESTS:
                raise WhatifError(f"--duration: {self.duration_s:g} s at --rate {self.rate:g} is about "
                                  f"{self.rate * self.duration_s:.3g} arrivals, more than the {MAX_REQUESTS:,} "
                                  "allowed")
        if self.requests is not None and self.duration_s is not None:
            raise WhatifError("give --requests or --duration, not both")
        choice(self.lengths, LENGTHS, "--lengths")
        positive_int(self.prompt, "--prompt")
        positive_int(self.output, "--output")
        number(self.range_ratio, "range_ratio", 0.0, 1.0, low_open=True)
        if self.range_ratio < 1 and self.lengths != "fixed":
            raise WhatifError(f"range_ratio: {self.range_ratio:g} draws lengths around --prompt/--output; it needs "
                              f"--lengths fixed, not {self.lengths!r}")
        number(self.length_cv, "length_cv", 0.0, 1.0)
        if self.length_cv > 0 and (self.lengths != "fixed" or self.range_ratio < 1):
            raise WhatifError(f"length_cv: {self.length_cv:g} draws lengths normally around --prompt/--output; "
                              "it needs --lengths fixed and no range_ratio")
        if self.prompt_max is not None:
            positive_int(self.prompt_max, "prompt_max")
            if self.lengths != "fixed":
                raise WhatifError(f"prompt_max: {self.prompt_max} cuts drawn --prompt lengths; it needs --lengths "
                                  f"fixed, not {self.lengths!r}")
        integer(self.prefix_groups, "--prefix-groups", low=0)
        integer(self.prefix_tokens, "--prefix-tokens", low=0)
        if self.prefix_groups > 0 and self.prefix_tokens == 0:
            raise WhatifError(f"--prefix-groups: {self.prefix_groups} needs --prefix-tokens > 0")
        if self.prefix_tokens > 0 and self.prefix_groups == 0:
            raise WhatifError(f"--prefix-tokens: {self.prefix_tokens} needs --prefix-groups > 0")
        positive_int(self.turns, "--turns")
        number(self.think_s, "--think-time", 0.0, low_open=False)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise WhatifError(f"--seed: {self.seed!r} must be a non-negative integer")
        integer(self.concurrency, "--concurrency", low=0)
        if not isinstance(self.through_server, bool):
            raise WhatifError(f"through_server: {self.through_server!r} must be true or false")
        if self.trace is not None:
            from .trace_files import check_trace_path   # (a trace's reader only when a run has one: csv, json)
            check_trace_path(self.trace)
            if self.prefix_groups or self.turns > 1:
                raise WhatifError("--trace: a trace gives every request itself; drop --prefix-groups and --turns")
        if self.trace_rate is not None:
            number(self.trace_rate, "trace_rate", 0.0, low_open=True)
            if self.trace is None:
                raise WhatifError(f"trace_rate: {self.trace_rate!r} scales a trace's arrivals; it needs a trace")

    @property
    def gamma_shape(self) -> float:
        """The gaps' gamma shape k (vllm bench serve's --burstiness): 1 / CV^2; 1 for Poisson."""
        return 1.0 if self.arrival == "poisson" else 1.0 / self.burstiness ** 2


def cv_of_gamma_shape(shape: float) -> float:
    """The gaps' coefficient of variation (WorkloadSpec.burstiness) of a gamma shape k: 1 / sqrt(k)."""
    return 1.0 / math.sqrt(shape)



# ---------------------------------------------------------------- generation

def generate(spec: WorkloadSpec, max_tokens: int | None = None) -> list[Request]:
    """The requests of `spec`, sorted by arrival, ids 0..n-1. Same spec and seed, same requests.

    `max_tokens` (the model's context window) clips nothing: requests longer than it are kept, and the
    simulator rejects them with a reason rather than the workload hiding them. Only the built-in length
    distributions' own clip ranges apply.

    Multi-turn sessions (turns > 1) are open loop: turn j+1 arrives a think time after turn j *arrived*, with
    turn j's sampled output length in its prompt, whether or not the simulation has finished turn j.
    `requests` / `duration_s` count turns: the first `requests` turns to arrive (sessions started in arrival
    order, as many as needed), or every turn arriving before `duration_s`; `rate` is sessions per second.

    With `trace` set, the trace's requests replace the generated ones (arrival process, rate, lengths unused;
    with `trace_rate`, its arrivals times trace_rate / rate); `requests` keeps its first N, `duration_s` those
    arriving before it; neither given keeps all of it.
    """
    if max_tokens is not None:
        positive_int(max_tokens, "max_tokens")
    if spec.trace is not None:
        from .trace_files import read_trace
        return _limited(_rescaled(read_trace(spec.trace), spec), spec)
    arrivals_rng, lengths_rng, groups_rng, think_rng = (
        np.random.default_rng(s) for s in np.random.SeedSequence(spec.seed).spawn(4))
    if spec.turns > 1:
        columns = _sessions(spec, arrivals_rng, lengths_rng, think_rng)
    else:
        columns = _single_turns(spec, arrivals_rng, lengths_rng, groups_rng)
    return _requests(*columns)


def _rescaled(requests: list[Request], spec: WorkloadSpec) -> list[Request]:
    """A trace's requests with their arrivals scaled to `rate` when the trace states the rate it was sent at."""
    if spec.trace_rate is None:
        return requests
    f = spec.trace_rate / spec.rate
    return requests_from_columns([r.arrival_s * f for r in requests], [r.prompt for r in requests],
                                 [r.output for r in requests], [r.prefix_id for r in requests],
                                 [r.prefix_tokens for r in requests], [r.shared_tokens for r in requests])


def _limited(requests: list[Request], spec: WorkloadSpec) -> list[Request]:
    if spec.requests is not None:
        return requests[:spec.requests]
    if spec.duration_s is not None:
        return [r for r in requests if r.arrival_s < spec.duration_s]
    return requests


def _gaps(rng: np.random.Generator, spec: WorkloadSpec, n: int) -> np.ndarray:
    """Inter-arrival times, seconds: exponential (Poisson), or gamma with CV `burstiness` and the same mean."""
    if spec.arrival == "poisson":
        return rng.exponential(1.0 / spec.rate, n)
    shape = spec.gamma_shape
    return rng.gamma(shape, 1.0 / (spec.rate * shape), n)


def _arrivals(rng: np.random.Generator, spec: WorkloadSpec, count: int | None) -> np.ndarray:
    """`count` arrival times, or (count None) every arrival before spec.duration_s; the first is one gap in."""
    if count is not None:
        return np.cumsum(_gaps(rng, spec, count))
    duration = spec.duration_s
    expected = spec.rate * duration
    batch = int(expected + 6 * math.sqrt(expected) * max(1.0, spec.burstiness)) + 16   # rarely needs a second
    chunks, last = [], 0.0
    while True:
        times = last + np.cumsum(_gaps(rng, spec, batch))
        chunks.append(times)
        last = float(times[-1])
        if last >= duration:
            break
    times = np.concatenate(chunks)
    return times[times < duration]


def _sample(rng: np.random.Generator, dist: LengthDist, n: int) -> np.ndarray:
    tokens = np.rint(rng.lognormal(math.log(dist.median), dist.sigma, n))
    return np.clip(tokens, dist.low, dist.high).astype(np.int64)


def _fixed_lengths(rng: np.random.Generator, spec: WorkloadSpec, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Prompt and output tokens of n requests around --prompt / --output (lengths=fixed), before prompt_max."""
    if spec.range_ratio < 1:
        return tuple(rng.integers(max(1, int(length * spec.range_ratio)), length + 1, n, dtype=np.int64)
                     for length in (spec.prompt, spec.output))
    if spec.length_cv > 0:   # a normal spread around each length, as DeepSpeed-FastGen's benchmark draws them
        return tuple(np.maximum(1, np.rint(rng.normal(length, spec.length_cv * length, n))).astype(np.int64)
                     for length in (spec.prompt, spec.output))
    return np.full(n, spec.prompt, dtype=np.int64), np.full(n, spec.output, dtype=np.int64)


def _lengths(rng: np.random.Generator, spec: WorkloadSpec, n: int) -> tuple[np.ndarray, np.ndarray]:
    """New prompt and output tokens of n requests (or turns), before any prefix or history."""
    if spec.lengths == "fixed":
        prompt, output = _fixed_lengths(rng, spec, n)
        return (prompt if spec.prompt_max is None else np.minimum(prompt, spec.prompt_max)), output
    profile = LENGTH_PROFILES[spec.lengths]
    prompt, output = _sample(rng, profile.prompt, n), _sample(rng, profile.output, n)
    if profile.pair_below is None:
        return prompt, output
    while (over := prompt + output >= profile.pair_below).any():   # the dataset drops such pairs: draw them again
        redrawn = int(over.sum())
        prompt[over], output[over] = _sample(rng, profile.prompt, redrawn), _sample(rng, profile.output, redrawn)
    return prompt, output


def _count(spec: WorkloadSpec) -> int | None:
    """How many requests (turns) to generate; None: as many as arrive before spec.duration_s."""
    return None if spec.duration_s is not None else spec.requests or DEFAULT_REQUESTS


def _single_turns(spec, arrivals_rng, lengths_rng, groups_rng):
    arrival = _arrivals(arrivals_rng, spec, _count(spec))
    n = len(arrival)
    prompt, output = _lengths(lengths_rng, spec, n)
    if spec.prefix_groups == 0:
        zeros = np.zeros(n, dtype=np.int64)
        return arrival, prompt, output, None, zeros, zeros
    groups = groups_rng.integers(0, spec.prefix_groups, n)
    prefix = np.full(n, spec.prefix_tokens, dtype=np.int64)
    return arrival, prompt + prefix, output, [f"g{g}" for g in groups.tolist()], prefix, prefix


def _sessions(spec, arrivals_rng, lengths_rng, think_rng):
    """Sessions x turns arrays, flattened; turn j+1's prompt = turn j's prompt + output + new tokens."""
    turns, count = spec.turns, _count(spec)
    starts = _arrivals(arrivals_rng, spec, None if count is None else -(-count // turns))   # ceil: enough turns
    sessions = len(starts)
    new_prompt, output = (a.reshape(sessions, turns) for a in _lengths(lengths_rng, spec, sessions * turns))
    # The group prefix opens each session's first turn. A request has one prefix id and sessions keep theirs,
    # so which group it was does not show: no group is drawn.
    new_prompt[:, 0] += spec.prefix_tokens
    think = think_rng.exponential(1.0, (sessions, turns - 1)) * spec.think_s
    arrival = np.concatenate([starts[:, None], starts[:, None] + np.cumsum(think, axis=1)], axis=1)
    prompt = np.cumsum(new_prompt, axis=1) + np.cumsum(output, axis=1) - output
    history = np.zeros_like(prompt)
    history[:, 1:] = prompt[:, :-1] + output[:, :-1]
    shared = prompt + output
    ids = np.repeat(np.arange(sessions), turns)
    arrival, prompt, output, history, shared = (a.ravel() for a in (arrival, prompt, output, history, shared))
    order = np.argsort(arrival, kind="stable")   # ties keep session-then-turn order
    order = order[arrival[order] < spec.duration_s] if count is None else order[:count]
    prefix_ids = [f"s{s}" for s in ids[order].tolist()]
    return arrival[order], prompt[order], output[order], prefix_ids, history[order], shared[order]


def _requests(arrival, prompt, output, prefix_ids, prefix_tokens, shared_tokens) -> list[Request]:
    """Request objects from columns already in arrival order; ids 0..n-1."""
    if prefix_ids is None:
        prefix_ids = [None] * len(arrival)
    return requests_from_columns(arrival.tolist(), prompt.tolist(), output.tolist(), prefix_ids,
                                 prefix_tokens.tolist(), shared_tokens.tolist())



def describe(spec: WorkloadSpec) -> str:
    """One line for people, e.g. '1000 requests, Poisson 5 req/s, ShareGPT-like lengths (prompt median 145 /
    mean 225, output median 119 / mean 194 tokens), seed 0'."""
    if spec.duration_s is not None:
        count = f"requests arriving in {spec.duration_s:g} s"
    else:
        count = f"{spec.requests or DEFAULT_REQUESTS} requests"
    if spec.trace is not None:
        limit = "" if spec.requests is None and spec.duration_s is None else f" ({count})"
        return f"requests from trace {os.fspath(spec.trace)}{limit}"
    unit = "sessions/s" if spec.turns > 1 else "req/s"
    process = "Poisson" if spec.arrival == "poisson" else f"gamma (CV {spec.burstiness:g})"
    load = (f"closed loop of {spec.concurrency} clients (each sends its next request when its last is answered)"
            if spec.concurrency else f"{process} {spec.rate:g} {unit}")
    parts = [count, load]
    if spec.lengths == "fixed" and spec.range_ratio < 1:
        parts.append(f"lengths uniform in [{spec.range_ratio:g} x, 1 x] (prompt {spec.prompt}, output {spec.output} "
                     "tokens)")
    elif spec.lengths == "fixed" and spec.length_cv > 0:
        parts.append(f"lengths normal around prompt {spec.prompt} and output {spec.output} tokens "
                     f"(CV {spec.length_cv:g})")
    elif spec.lengths == "fixed":
        parts.append(f"fixed lengths (prompt {spec.prompt}, output {spec.output} tokens)")
    else:
        profile = LENGTH_PROFILES[spec.lengths]
        p, o = profile.prompt, profile.output
        p_mean, o_mean = profile.means()
        limit = f", pairs under {profile.pair_below}" if profile.pair_below else ""
        parts.append(f"{profile.label} lengths (prompt median {p.median:.0f} / mean {p_mean:.0f}, "
                     f"output median {o.median:.0f} / mean {o_mean:.0f} tokens{limit})")
    if spec.prompt_max is not None:
        parts.append(f"prompts cut to at most {spec.prompt_max} tokens")
    if spec.prefix_groups:
        parts.append(f"{spec.prefix_groups} shared prefixes of {spec.prefix_tokens} tokens")
    if spec.turns > 1:
        parts.append(f"{spec.turns}-turn sessions, think time {spec.think_s:g} s mean")
    parts.append(f"seed {spec.seed}")
    return ", ".join(parts)
