"""The request slots an SGLang disaggregated attention-DP prefill rank holds until the overlap loop polls a KV send.

SGLang's PD prefill server gives each rank `--max-running-requests / dp_size` running requests (B) and a metadata
buffer of twice that (scheduler.py init_disaggregation: `buffer_size = self.max_running_requests * 2`, "*2 for the
headroom"). A request takes a metadata slot when it is bootstrapped (disaggregation/prefill.py
PrefillBootstrapQueue.pop_bootstrapped, which stops when none is free) and gives it back only when
process_disagg_prefill_inflight_queue polls its KV send done (release_req_to_metadata_buffer after KVPoll.Success).
The overlap loop (event_loop_overlap_disagg_prefill) forms batch j, launches it, and only then processes batch j-1's
result (which sends j-1's KV) and polls the sends: so while batch j is formed, the requests of batches j-1 (on the
GPU) and j-2 (sent, not yet polled) still hold their slots, and batch j takes at most 2B - n(j-1) - n(j-2) new
requests on that rank. With the recipes' B = 1 (srt-slurm b200-fp8 8k1k: 8 requests over 8 ranks) a rank runs a
prompt in at most two steps of three while the other ranks' prompts keep the group stepping. A rank whose last two
batches took all its slots joins the step idle; when no rank can take a prompt the loop spins once (no GPU step)
and the oldest batch's slots come back. (The normal loop polls right after the send, so there only one batch holds
slots when the next forms and 2B never binds: this models the overlap loop, SGLang's default.)"""
from __future__ import annotations

from collections import deque

HELD_STEPS = 2   # the batches whose prompts still hold slots when the next forms: j-1 (on the GPU), j-2 (unpolled)


def send_slots_per_rank(setup, role: str, max_batch: int) -> int:
    """Metadata slots of one rank of an attention-DP `role` pool whose ranks run `max_batch` requests each (0: the
    engine holds none, or the pool is not an attention-DP prefill pool): what RankGroup and the search read."""
    spec = setup.engine_spec
    per_request = spec.prefill_send_slots if spec is not None and role == "prefill" else 0
    return per_request * max_batch if per_request and setup.parallel.attention_dp > 1 else 0


def steady_prompts_per_step(slots: int, prompts_per_step: float) -> float:
    """A saturated rank's mean new prompts a step under `slots` (0: none held): each step's prompts and those of the
    HELD_STEPS before it share the slots (SendSlots.caps), so at most slots / (HELD_STEPS + 1) a step."""
    return prompts_per_step if not slots else min(prompts_per_step, slots / (HELD_STEPS + 1))


class SendSlots:
    """Each rank's prompts of its last HELD_STEPS steps (the slots they hold) against `slots` (2B) per rank."""

    def __init__(self, ranks: int, slots: int):
        self.slots = slots
        self.recent = [deque((0,) * HELD_STEPS, maxlen=HELD_STEPS) for _ in range(ranks)]

    def caps(self) -> list[int]:
        """New prompts each rank may take into the step formed now (its slots less those still held)."""
        return [max(0, self.slots - sum(r)) for r in self.recent]

    def record(self, prompts: list[int]) -> None:
        """Each rank's prompts of the step just formed (they hold a slot each for it and the next step)."""
        for r, n in zip(self.recent, prompts):
            r.append(n)

    def held(self) -> bool:
        return any(sum(r) for r in self.recent)

    def release(self) -> None:
        """Every slot back (an idle loop polls its sends done)."""
        for r in self.recent:
            r.extend((0,) * HELD_STEPS)
