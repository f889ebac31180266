"""First tokens held until the engine has launched the next step (TensorRT-LLM's PyTorch and SGLang's overlap loops).

tensorrt_llm/_torch/pyexecutor/py_executor.py `_executor_loop_overlap` (1.0): each iteration launches the next step
(`_forward_step`) before `_process_previous_batch` -> `_handle_responses` sends the last step's tokens. So a prompt's
first token leaves once the step after its prefill is launched. Replaying a CUDA graph (a decode step) takes the CPU
next to nothing; an eager step (one with a prompt) takes it its kernels x the host time per kernel, begun once it had
launched the prefill step: the token waits max(0, launch(prefill step) + launch(next step) - the prefill step's
time), at most the next step's time. Only first tokens are held (TTFT): a decode token's hold moves every later
token alike and leaves TPOT as it is. SGLang's overlap loop is the same (managers/scheduler.py event_loop_overlap,
0.4-0.5.x: run_batch of the next batch, then pop_and_process -> process_batch_result streams the last one's tokens;
added after scoring, session 65)."""
from __future__ import annotations

from ..roofline.config import ForwardBatch
from ..roofline.forward_pass import time_pass


def eager_launch_s(setup, tokens: int) -> float:
    """Host seconds to launch an eager pass of one `tokens`-token prompt (its kernels x the per-kernel host time;
    the kernel count hardly depends on the length)."""
    return time_pass(setup, ForwardBatch(((tokens, 0, 1),), 0), False).launch_s


class FirstTokenHold:
    def __init__(self, launch_s: float):
        self.launch_s = launch_s
        self.held: list = []      # records whose first token the last step computed
        self.end = -1.0           # when that step ended
        self.duration = 0.0       # and how long it ran

    def next_step(self, now: float, eager: bool, duration: float) -> None:
        """A step of `duration` begins at `now` (eager: it carries a prompt): the last step's first tokens leave,
        late when this one starts right after it and its launch outlasts that step's GPU time."""
        if self.held and eager and now == self.end:
            delay = min(duration, max(0.0, 2 * self.launch_s - self.duration))
            for rec in self.held:
                if rec.first_token_s == self.end:
                    rec.first_token_s += delay
        self.held = []

    def ran(self, batch, end: float, duration: float) -> None:
        """A step ended at `end`: hold the first tokens its prompts produced."""
        if batch.prefill:
            self.held = [s.rec for s, _ in batch.prefill if s.rec.first_token_s == end]
            self.end, self.duration = end, duration
