"""A prefill kernel built per new token count (the simulator's `prefill_recompile_s`, simulator/prefill_recompile.py:
SGLang's FLA L2-norm before PR #31558, FlashInfer 0.6.1's cuDNN NVFP4 plans) in the search's steady state.

What the search assumes, with the simulator as the reference: the simulator charges a server (a replica, or each
attention-DP rank) the compile the first time a prefill step runs a token count, never again. The search's workload
has fixed lengths, so its servers run a finite set of prefill token counts: a disaggregated prefill server at one
prompt a rank runs ceil(prompt / its chunk) - 1 full chunks and one remainder (1-2 counts); an aggregated replica runs
whole prompts and chunk splits, a multiple of the prompt or the budget's cut (the simulator, llama-3.1-8b on one H100,
1,000 / 100 tokens: 1 count at 1 client, 4 at 8, 4-16 at 32, all reached within the first ~10 prefill steps; Poisson
arrivals at 5-20 requests/s, 300 vs 1,200 requests: 2-5 counts, at most 8, almost all in the first quarter of the
run). After that warm-up no new count runs, so the steady state the search prices (every server at full load for
ever) pays nothing: the search's TTFT, TPOT and rates are the warmed server's, and its ranking with them. The warm-up
(~counts x compile_s a server, and the queue behind it) is a finite run's: the re-check (recheck.py) simulates the
launch with the setting, so it is paid there, as a server's first requests pay it. Near saturation the queue a
warm-up builds drains only at the spare capacity, slower than a re-check's few hundred requests, so the re-check can
rank such launches below the search (docs/accuracy.md, session 70 V)."""
from __future__ import annotations


def warmup_note(compile_s: float) -> str:
    """The search header's line on the setting ('' when off): what the steady state assumes and who pays it."""
    if compile_s <= 0:
        return ""
    return (f"prefill recompile {compile_s * 1e3:.4g} ms a new prefill token count (set): not in the steady state "
            "(fixed lengths reach a finite set of counts, each built once in warm-up); the re-check simulates it")
