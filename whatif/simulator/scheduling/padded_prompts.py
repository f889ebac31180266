"""vLLM 0.2.x's padded prompt batches: a prefill step's prompts run as one [prompts, longest] 2D tensor.

Source (vLLM v0.2.2-v0.2.7; vllm-project/vllm#1381 "Change scheduler & input tensor shape", merged 2023-10-17):
- the worker pads every prompt of the step to the longest (worker.py `_prepare_inputs`, later model_runner.py
  `_prepare_prompt`: `_pad_to_max(tokens, max_prompt_len)` / `_make_tensor_with_pad`), so every GEMM runs
  prompts x longest rows, and attention masks [longest] x prompts (layers/attention.py `set_attn_bias`:
  `BlockDiagonalCausalMask.from_seqlens([max_prompt_len] * num_prompts)`): each padded prompt attends causally
  over the longest's length;
- the scheduler counts the padded tokens (core/scheduler.py `_schedule`: `num_batched_tokens = len(new_seq_lens) *
  max(new_seq_lens)` against max_num_batched_tokens) and stops adding prompts once the padding
  (`num_batched_tokens - sum(new_seq_lens)`) would pass `max_paddings` (SchedulerConfig, --max-paddings default 256).
The padded rows' KV is not cached (slot -1) and only each prompt's last position reaches the sampler
(`selected_token_indices`), so the padding costs time, not KV blocks or logits."""
from __future__ import annotations


def padded_fits(lens_sum: int, longest: int, count: int, n: int, budget: int, max_paddings: int) -> bool:
    """Whether a prompt of `n` tokens joins a prefill step already holding `count` prompts (`lens_sum` tokens, the
    longest `longest`): the padded step (prompts x longest) within `budget` tokens and its padding within
    `max_paddings` tokens."""
    top = n if n > longest else longest
    padded = (count + 1) * top
    return padded <= budget and padded - lens_sum - n <= max_paddings


def padded_prefills(prefills: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A step's prefill chunks (tokens, cached tokens) as the padded batch runs them: each prompt at the longest's
    length (whole prompts: vLLM 0.2.x has no chunked prefill and no prefix cache, so none has cached tokens)."""
    top = max(q for q, _ in prefills)
    return [(top, c) for _, c in prefills]
