"""TensorRT-LLM's attention-DP context balancing (`attention_dp_config: enable_balance`), one gate per group.

TensorRT-LLM's PyExecutor (_pyexecutor/py_executor.py `_balance_adp_requests`, called from `_schedule` when
enable_attention_dp and attention_dp_config.enable_balance) lets the ranks' new context requests into an
iteration only when every rank has one and a free slot (its generation requests < max_batch_size); then, if every
rank is also generating, only after `batching_wait_iters` such iterations. Otherwise it holds them and counts the
iteration; when the count reaches `timeout_iters`, or some rank has nothing to generate, the held ones go in.
The count runs on every iteration that fails the test, prompts waiting or not, so under a steady trickle of
arrivals (a closed loop at long outputs) a new prompt waits for the next timeout: about timeout_iters / 2
iterations on average. Defaults (tensorrt_llm/llmapi/llm_args.py AttentionDpConfig): off, 50, 10."""
from __future__ import annotations


class AdpBalance:
    """The gate's two counters; `admit` answers, per iteration, whether the ranks' new prompts may join it."""

    def __init__(self, timeout_iters: int, batching_wait_iters: int):
        self.timeout_iters, self.batching_wait_iters = timeout_iters, batching_wait_iters
        self.waiting_iters = 0    # iterations since prompts last went in without every rank having one
        self.batching_iters = 0   # iterations held to batch prompts while every rank had one

    def admit(self, has_prompt: list[bool], generating: list[int], max_batch: list[int]) -> bool:
        """Whether this iteration takes new prompts: `has_prompt` per rank (it would admit one), `generating` its
        decoding sequences, `max_batch` its limit (the same order)."""
        all_free = all(g < m for g, m in zip(generating, max_batch))
        all_generating = all(g > 0 for g in generating)
        if all_free and all(has_prompt):
            self.waiting_iters = 0
            if all_generating:
                if self.batching_iters < self.batching_wait_iters:
                    self.batching_iters += 1
                    return False
                self.batching_iters = 0
            return True
        self.waiting_iters += 1
        if self.waiting_iters >= self.timeout_iters or not all_generating:
            self.waiting_iters = 0
            return True
        return False
