"""A request (what the workload says) and its record (what happened to it in the simulation)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .token_times import TokenTimes

QUEUED, RUNNING, FINISHED, REJECTED = "queued", "running", "finished", "rejected"
STATUSES = (FINISHED, QUEUED, RUNNING, REJECTED)


@dataclass(frozen=True, slots=True)   # (one per request: slots, no instance dict; _Unfrozen shares its layout)
class Request:
    """One request of a workload: its arrival, prompt and output lengths, and its prefix-sharing keys."""
    id: int
    arrival_s: float
    prompt: int                  # prompt tokens
    output: int                  # tokens to generate (the first comes out of prefill)
    prefix_id: str | None = None
    prefix_tokens: int = 0       # leading prompt tokens that earlier requests of prefix_id may have cached
    shared_tokens: int = 0       # leading tokens of this request (prompt + output) later ones of prefix_id reuse
    sent_s: float | None = None  # when a closed-loop client sent it (arrival_s: when it reached the engine, after
                                 # the server's front end); None: sent at arrival_s


    def sent(self, sent_s: float, arrival_s: float) -> Request:
        """This request as a closed-loop client sends it: sent at `sent_s`, reaching the engine at `arrival_s`
        (dataclasses.replace's result, built without its per-field calls: one is made per request)."""
        out = _Unfrozen(self.id, arrival_s, self.prompt, self.output, self.prefix_id, self.prefix_tokens,
                        self.shared_tokens, sent_s)
        out.__class__ = Request
        return out


_FIELDS = ("id", "arrival_s", "prompt", "output", "prefix_id", "prefix_tokens", "shared_tokens", "sent_s")


class _Unfrozen:
    """A Request's slots without the frozen __setattr__: a request is built as one (plain slot stores, ~10 ns each,
    where object.__setattr__ on the frozen class costs ~120 ns a field) and then becomes a Request by a __class__
    assignment, which CPython allows between classes of the same slots (the same layout)."""
    __slots__ = _FIELDS

    def __init__(self, id, arrival_s, prompt, output, prefix_id, prefix_tokens, shared_tokens, sent_s):
        self.id = id
        self.arrival_s = arrival_s
        self.prompt = prompt
        self.output = output
        self.prefix_id = prefix_id
        self.prefix_tokens = prefix_tokens
        self.shared_tokens = shared_tokens
        self.sent_s = sent_s


def requests_from_columns(arrival: list, prompt: list, output: list, prefix_ids: list, prefix_tokens: list,
                          shared_tokens: list) -> list[Request]:
    """Request(i, arrival[i], prompt[i], ...) for each i (a workload makes up to millions): each built unfrozen and
    made a Request (_Unfrozen: 50,000 in ~18 ms against ~48 ms through object.__setattr__ field by field)."""
    unfrozen, out = _Unfrozen, []
    append = out.append
    for i, (a, p, o, pid, pt, st) in enumerate(zip(arrival, prompt, output, prefix_ids, prefix_tokens, shared_tokens)):
        r = unfrozen(i, a, p, o, pid, pt, st, None)
        r.__class__ = Request
        append(r)
    return out


@dataclass(eq=False, slots=True)   # (one per request: a million of them in a long run)
class Record:
    """What happened to one request. Times are simulated seconds; None where it never got there."""

    request: Request
    status: str = QUEUED
    reason: str = ""             # why it was rejected
    replica: int = -1            # the replica that decoded it (the decode pool's, when disaggregated)
    first_scheduled_s: float | None = None
    first_token_s: float | None = None
    finish_s: float | None = None
    emitted: TokenTimes = field(default_factory=TokenTimes)   # when its output tokens came out
    preemptions: int = 0
    cached_tokens: int = 0       # prompt tokens served from the prefix cache (first admission)

    def __init__(self, request: Request, status: str = QUEUED, reason: str = "", replica: int = -1,
                 first_scheduled_s: float | None = None, first_token_s: float | None = None,
                 finish_s: float | None = None, emitted: TokenTimes | None = None, preemptions: int = 0,
                 cached_tokens: int = 0):
        """The fields above, in order (written out, which dataclass keeps: its generated __init__ reads a global
        sentinel for `emitted`'s default factory; one record a request, 40 -> 37 bytecodes, sim_bytecodes.py)."""
        self.request = request
        self.status = status
        self.reason = reason
        self.replica = replica
        self.first_scheduled_s = first_scheduled_s
        self.first_token_s = first_token_s
        self.finish_s = finish_s
        self.emitted = TokenTimes() if emitted is None else emitted
        self.preemptions = preemptions
        self.cached_tokens = cached_tokens

    @property
    def ttft_s(self) -> float | None:
        return None if self.first_token_s is None else self.first_token_s - self.request.arrival_s

    @property
    def e2e_s(self) -> float | None:
        return None if self.finish_s is None else self.finish_s - self.request.arrival_s

    def served_ttft_s(self, frontend) -> float | None:
        """TTFT as a client of the server measures it: from its send (the front end's queue and work included,
        when the closed loop ran them) to the first token; else the engine's TTFT plus `frontend`'s time."""
        if self.first_token_s is None:
            return None
        if self.request.sent_s is not None:
            return self.first_token_s - self.request.sent_s
        return self.ttft_s + (frontend.seconds(self.request.prompt) if frontend is not None else 0.0)

    @property
    def queue_s(self) -> float | None:
        return None if self.first_scheduled_s is None else self.first_scheduled_s - self.request.arrival_s

    @property
    def token_times(self) -> list[float]:
        """When each output token came out (tokens of one chunk share its time)."""
        return self.emitted.tolist()

    @property
    def tpot_s(self) -> float | None:
        """Mean time per output token after the first (None for one-token or unfinished requests)."""
        n = self.emitted.count
        if self.finish_s is None or n < 2:
            return None
        return (self.emitted.last - self.emitted.first) / (n - 1)

    @property
    def inter_token_s(self) -> list[float]:
        """Seconds between consecutive chunks of tokens (one token each, unless a speculative round
        emitted several at once)."""
        return self.emitted.chunk_gaps().tolist()
