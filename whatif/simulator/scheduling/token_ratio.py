"""SGLang's KV admission by `new_token_ratio` (scheduler capacity `ratio`): a waiting request joins only while
its prompt left and its output estimate fit the free (and evictable) KV beside the running requests' remaining
outputs scaled by a ratio that starts at 0.7, decays each decode step to 0.098, and is raised again when a
decode runs out of KV and retracts requests.

Source (sgl-project/sglang python/sglang/srt): managers/schedule_policy.py PrefillAdder (rem_total_tokens =
available + evictable - sum over running of min(max_new_tokens - len(output_ids), CLIP_MAX_NEW_TOKENS) x
new_token_ratio; add_one_req refuses when extend_input_len + min(max_new_tokens, CLIP) >= rem_total_tokens;
CLIP_MAX_NEW_TOKENS = SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION, 4096); managers/scheduler.py init_schedule_policy
(init = SGLANG_INIT_NEW_TOKEN_RATIO 0.7 x schedule_conservativeness 1.0, min = init x
SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.14, decay (init - min) / SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS 600 per decode
batch in update_running_batch, reset to init when the scheduler is idle); managers/schedule_batch.py
retract_decode (ratio = min(1, (decoded + SGLANG_RETRACT_DECODE_STEPS 20 x requests) / (max_new_tokens + 1))
over the requests left running)."""
from __future__ import annotations

CLIP_MAX_NEW_TOKENS = 4096    # SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION default
INIT_RATIO = 0.7              # SGLANG_INIT_NEW_TOKEN_RATIO default x schedule_conservativeness 1.0
MIN_RATIO = INIT_RATIO * 0.14   # x SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR default
DECAY_PER_STEP = (INIT_RATIO - MIN_RATIO) / 600   # SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS default
RETRACT_DECODE_STEPS = 20     # SGLANG_RETRACT_DECODE_STEPS default


def output_estimate(remaining: int) -> int:
    """The output tokens SGLang counts for a request with `remaining` still to generate (clipped)."""
    return min(max(remaining, 0), CLIP_MAX_NEW_TOKENS)


def decayed(ratio: float, steps: int) -> float:
    """The ratio after `steps` decode steps from `ratio` (linear decay, floored at the minimum)."""
    return max(ratio - steps * DECAY_PER_STEP, MIN_RATIO)


def after_retract(decoded: int, max_new: int, requests: int) -> float:
    """The ratio retract_decode sets from the requests left running: their decoded tokens plus a margin of
    RETRACT_DECODE_STEPS each, over their whole outputs."""
    return min(1.0, (decoded + RETRACT_DECODE_STEPS * requests) / (max_new + 1))


def admits(need: int, free_tokens: int, reserved: float) -> bool:
    """Whether a request needing `need` tokens (prompt left + output estimate) fits the free tokens beside
    what the running ones reserve (SGLang refuses at equality)."""
    return need < free_tokens - reserved


class TokenRatio:
    """One engine's new_token_ratio, kept as a base value and the decode step it was set at (so that a run of
    decode steps decays it without a call per step)."""

    __slots__ = ("base", "since")

    def __init__(self):
        self.base = INIT_RATIO
        self.since = 0

    def at(self, step: int) -> float:
        return decayed(self.base, step - self.since)

    def set(self, ratio: float, step: int) -> None:
        self.base, self.since = ratio, step
