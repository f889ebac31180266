"""How many micro-batches a pipeline-parallel replica decodes a batch in (Session 75 J, issue 37).

Every engine keeps up to pp micro-batches in flight and fills each with requests not already in flight. vLLM V1
(engine spec scheduler.pp_batch_queue) forms a micro-batch when its batch queue has room and once more at once after
queuing one, else blocks on the oldest (vllm/v1/engine/core.py step_with_batch_queue); a request that arrives or whose
KV lands meanwhile joins the next batch formed. So a batch whose prompts all fit one token budget is formed as ONE
micro-batch, and only the prompts left over by a full budget start another: ceil(batch x prompt / budget) of them, up
to pp. A disaggregated decode pool takes no prompts: one micro-batch. SGLang and TensorRT-LLM give each of the pp slots
its turn, so the batch splits across all pp (evenly at best: the simulator shows a closed loop's swing)."""
from __future__ import annotations


def decode_microbatches(pp: int, batch: int, prompt: int, budget: int, batch_queue: bool, decode_pool: bool = False
                        ) -> int:
    """Micro-batches a batch of `batch` sequences decodes in on `pp` stages; `prompt` tokens a request prefilled
    within `budget` tokens a step; `batch_queue`: vLLM V1's rule; `decode_pool`: a disaggregated decode replica."""
    even = max(1, min(pp, batch))
    if not batch_queue or even == 1:
        return even
    if decode_pool:
        return 1
    return max(1, min(even, -(-batch * prompt // max(budget, 1))))
