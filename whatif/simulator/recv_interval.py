"""SGLang's `--scheduler-recv-interval` (managers/scheduler_recv_skipper.py, SchedulerRecvSkipper; default 1: off).

The scheduler's event loop calls recv_requests at the top of every iteration; with an interval K > 1 it first adds
the weight of the last batch's forward mode to a counter (DECODE 1, TARGET_VERIFY 1, no batch 1, any other mode,
i.e. a step with a prefill, 1000) and reads the tokenizer's ZMQ socket only when the counter reaches K, resetting
it to 0. So while a server only decodes, a request that arrives waits for the next poll: up to K decode steps,
about K / 2 on average under arrivals that do not follow the step phase; a step with a prefill, or an idle engine
(whose loop spins at once), polls at the next iteration. Requests that arrive at an idle engine go straight in."""
from __future__ import annotations

PREFILL_WEIGHT = 1000   # _DEFAULT_WEIGHT: any forward mode but DECODE / TARGET_VERIFY / None


class RecvSkipper:
    """The counter of one scheduler loop: `polls(...)` at the top of each iteration answers whether it reads the
    requests that arrived since its last poll."""

    def __init__(self, interval: int):
        self.interval = interval
        self.counter = 0
        self.last_weight = interval   # the first iteration polls

    def stepped(self, had_prefill: bool) -> None:
        """The iteration that just ended: a decode-only one counts 1, one with a prefill PREFILL_WEIGHT."""
        self.last_weight = PREFILL_WEIGHT if had_prefill else 1

    def polls(self) -> bool:
        self.counter += self.last_weight
        self.last_weight = 0   # (counted once)
        if self.counter >= self.interval:
            self.counter = 0
            return True
        return False
