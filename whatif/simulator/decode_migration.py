"""DistServe's decode stage moving each prefilled request's KV itself, between its steps (engine-profile key
`disaggregation.decode_migration_gate`; 0, every other engine: the KV moves beside the decode steps, Replica._transfer).

Read at source (LLMServe/DistServe @8024143): `DecodingStageLLMEngine._step` (distserve/single_stage_engine.py) ends
with `await self.scheduler.post_process()`; `DecodingStageFCFSScheduler.post_process` (distserve/
decoding_stage_scheduler.py) takes the requests the context stage finished, first come first, and for each one
`await`s `engine_migrate_block_callback` (`_migrate_blocks`: allocate its blocks here, copy them, free them there)
before the next; the next `_step` forms its batch only after. It stops at the first request for which
`should_accept` fails: the prompts migrated and not yet in a batch (its waiting_queue) must hold fewer than
`waiting_block_prop_threshold` x the GPU blocks, and the request's prompt blocks must fit the free ones
(`get_num_avail_gpu_blocks`). The threshold is 0.05 in every launch (distserve/api_server/distserve_api_server.py
`DecodingStageSchedConfig(..., waiting_block_prop_threshold=0.05)`). So a decode step never runs while KV moves, and
a request whose prompt does not fit stays on the prefill side (its blocks held there) until decodes finish."""
from __future__ import annotations


def gate_open(scheduler, prompt_tokens: int, gate: float) -> bool:
    """`should_accept`: the migrated prompts not yet in a batch (here: arrived since the last step was formed)
    under `gate` x the pool's blocks, and this prompt's blocks within the free ones (no watermark)."""
    bm = scheduler.bm
    size = bm.block_size
    waiting = sum(-(-s.req.prompt // size) for s in scheduler.kv_arrived)
    return waiting < gate * bm.num_blocks and -(-prompt_tokens // size) <= bm.free + len(bm.evictable)


def migrate(replica, scheduler):
    """The decode loop's post_process: move the waiting requests' KV one at a time while the gate is open (a
    generator on the replica's clock; the replica's other engines wait for it: Replica.migrating)."""
    queue, bm = replica.unaccepted, scheduler.bm
    while queue:
        s = queue[0]
        need = scheduler._blocks_for(s.computed + 1)   # (as _admit_awaiting_kv: the prompt and its next token)
        if not (gate_open(scheduler, s.req.prompt, replica.migration_gate) and bm.can_allocate(need)):
            return
        queue.popleft()
        bm.allocate(need)
        s.blocks = need
        scheduler.kv_moving += 1
        yield replica.send_time(s)
        replica.landed(s, scheduler)
