"""SGLang's admission of an `ignore_eos` request when the radix cache is off (PrefillAdder.add_one_req_ignore_eos).

managers/schedule_policy.py (sgl-project/sglang; the same rule in every 0.4-0.5.x revision read, e.g. the 0.5.9 copy
40349/sglang-v.0.5.9 at 00041e5): `add_one_req` hands a request whose sampling params set ignore_eos to
`add_one_req_ignore_eos` when `getattr(self.tree_cache, "disable", True)` (`--disable-radix-cache`: a ChunkCache).
That path reserves, instead of new_token_ratio x min(remaining, 4096), each request's whole remaining output at
ratio 1.0 (`tokens_left = max_new_tokens * 1.0 - len(output_ids)`) and admits only if the pool holds every request
to its end, finishing in order of tokens left: with the requests (running, admitted this step, and the new one)
sorted by tokens_left, for the i-th of them, `bs = len - i`, it needs `cur_rem_tokens + tokens_freed - tokens_left *
bs > IGNORE_EOS_RESERVE_TOKENS * bs` (IGNORE_EOS_RESERVE_TOKENS = 1), `tokens_freed` summing the earlier ones'
`len(origin_input_ids) + len(output_ids)`, and `cur_rem_tokens` the free + evictable tokens less the new prompt's
extend tokens. It first refuses a prompt longer than the free tokens (`extend_input_len > min(cur_rem_tokens,
rem_total_tokens)`; the rem_total_tokens side, the running requests' new_token_ratio reservation, is not repeated
here: the test to the end holds their whole outputs). A refusal returns NO_TOKEN, which sets
`running_batch.batch_is_full` (scheduler.py _get_new_batch_prefill_raw), so no prefill is tried again until a
running request leaves the batch (update_running_batch: `batch_is_full = False` when the batch shrinks): the
simulator's admission is re-tried at every step, which a leaving request is the first to change. The benchmark
client InferenceX runs sends ignore_eos (benchmarks/benchmark_lib.sh run_benchmark_serving: kimbochen/bench_serving
`--ignore-eos`)."""
from __future__ import annotations

RESERVE_TOKENS = 1   # schedule_policy.py IGNORE_EOS_RESERVE_TOKENS


def fits_to_the_end(free_tokens: int, prompt_left: int, requests: list[tuple[int, int]]) -> bool:
    """Whether the pool holds every request to its end, the new one included (its prompt's `prompt_left` tokens
    about to be allocated): `requests` are (output tokens left, tokens held now: prompt + output so far), the new
    request's among them. Requests with no output left are left out, as SGLang's add_req_state skips them."""
    if prompt_left > free_tokens:
        return False
    cur = free_tokens - prompt_left
    states = sorted((left, held) for left, held in requests if left > 0)
    freed, n = 0, len(states)
    for i, (left, held) in enumerate(states):
        bs = n - i
        if cur + freed - left * bs <= RESERVE_TOKENS * bs:
            return False
        freed += held
    return True
