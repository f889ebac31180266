"""TensorRT-LLM's batch waiting (`batch_wait_timeout_iters`, `batch_wait_max_tokens_ratio`; defaults 0, 0: off).

TensorRT-LLM's PyExecutor (_torch/pyexecutor/py_executor.py `_schedule` and `_waiting_requests`; on when either
setting is above 0, `enable_batch_waiting`): without attention DP, when an iteration's scheduled batch has both
context requests and generation requests, it holds the context requests back and counts the iteration unless the
count has reached `timeout_iters` or the batch's tokens (the context requests' prompt tokens plus one per
generation request) reach `max_tokens_ratio` x max_num_tokens; then they go in and the count resets. An iteration
with nothing to generate takes its prompts at once ("no need to wait, to avoid dead waiting"). So under light
load a new prompt waits up to `timeout_iters` decode steps for company; clients in lockstep wait them all."""
from __future__ import annotations


class BatchWait:
    """The gate's counter; `holds` answers, per iteration, whether the waiting prompts stay out of it."""

    def __init__(self, timeout_iters: int, max_tokens_ratio: float, max_num_tokens: int):
        self.timeout_iters = timeout_iters
        self.threshold = max_tokens_ratio * max_num_tokens
        self.count = 0   # iterations held since the prompts last went in

    def holds(self, prompt_tokens: int, generating: int) -> bool:
        """Whether this iteration leaves its prompts out: `prompt_tokens` the prompt tokens it would schedule
        (0: none), `generating` its generation requests."""
        if not prompt_tokens or not generating:
            return False
        if self.count >= self.timeout_iters or prompt_tokens + generating >= self.threshold:
            self.count = 0
            return False
        self.count += 1
        return True


def schedulable_prompt_tokens(waiting, running: int, generating: int, max_batch: int, token_budget: int) -> int:
    """The prompt tokens an iteration would schedule from `waiting` (first come, first served, whole prompts, as
    TensorRT-LLM's micro-batch scheduler takes them without chunking): in order while a slot is free and the
    tokens, beside one per generating sequence, stay within the budget."""
    tokens, slots, room = 0, max_batch - running, token_budget - generating
    for s in waiting:
        n = s.total - s.computed
        if slots <= 0 or tokens + n > room:
            break
        tokens += n
        slots -= 1
    return tokens
