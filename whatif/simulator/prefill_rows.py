"""The batch rows an SGLang disaggregated TP prefill server holds until a request's KV send is done.

In PD prefill mode SGLang's scheduler takes no more requests into a batch than its req-to-token pool has free rows
(managers/scheduler.py get_new_batch_prefill: "prealloc queue and transfer queue can also take memory"). The pool
has --max-running-requests rows (model_runner_kv_cache_mixin.py init_memory: max_num_reqs = the server argument), a
request takes one when its batch is formed, and disaggregation/prefill.py process_disagg_prefill_inflight_queue gives
it back (release_kv_cache -> cache_finished_req -> req_to_token_pool.free) only once its KV send polls
KVPoll.Success. So a TP prefill server at --max-running-requests B has at most B prompts running or sending, and at
B = 1 (aiconfigurator's generator rule for a prefill worker) it runs a prompt, sends it, and only then starts the
next: the send is serial with the prefill where whatif otherwise overlaps it with the next step. Under DP attention
each rank's pool has the whole group's rows (B x dp; the scheduler's own limit is B), more than the rank's 2 B
metadata slots (prefill_send_slots.py), which bind first, so only TP pools are held here. Engine-profile key
`disaggregation.prefill_rows_held_to_send` (SGLang); search prices it alike (configs.py _held_to_send)."""
from __future__ import annotations


def holds_rows(setup, role: str, group) -> bool:
    """Whether a replica of `role` (a TP pool: no attention-DP `group`) keeps a row per request until its KV is sent."""
    spec = setup.engine_spec
    return role == "prefill" and group is None and spec is not None and spec.prefill_rows_held_to_send


def batch_limit(max_batch: int, running: int, sending: int) -> int:
    """The batch limit a prefill server forms its next step under: its rows less those held by sends in flight, never
    below the requests already running (a chunked prompt keeps its row); 0: no row free and nothing to run."""
    return max(max_batch - sending, running)
