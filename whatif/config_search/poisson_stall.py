"""The prefill in an aggregated replica's cycle under Poisson arrivals (the search's point under a TTFT target).

The steady state's cycle e2e(B) prefills its B prompts in full passes of the token budget, every attention-DP rank's
at once (the estimate's batch prefill: per_rank / per_pass passes, one lockstep step each), as a closed loop sends them
(closed_loop_ttft.py). Poisson arrivals do not: a rank's pass holds the k prompts waiting at its start
(queueing.pass_size at the rank's rate; ~1 well below the budget's capacity), and the ranks' passes do not coincide,
while every pass is a step all ranks take together (the MoE layers synchronize them). So a cycle runs B / k passes
of s(k), one rank prefilling while the others decode. Seen in the simulator (DeepSeek-V3 NVFP4, dgx-b200, TP4 EP4 4
attention-DP ranks, batch 16 a rank, 4,000 / 1,000 tokens): at Poisson 1.8 req/s a prefill step held 1.04 prompts
(129 ms) and prefill steps took 24% of the time; a closed loop of 64 held 7.1 (286 ms), 10%; TPOT 29.1 ms against
25.6 ms (docs/accuracy.md, Session 72 H).
A step that mixes a pass with the running decodes (vLLM's chunked prefill, TensorRT-LLM) still gives each of them its
token, so a pass costs the cycle s(k) less one decode step; a prefill-first engine (SGLang's default) stalls them for
the whole pass. Prefill passes are priced apart from decode steps otherwise, as in configs.py."""
from __future__ import annotations

from .queueing import pass_size


def poisson_prefill_s(batch: int, ranks: int, rate: float, lone_s: float, full_s: float, per_pass: int,
                      step_s: float, prefill_first: bool) -> float:
    """Seconds a cycle of `batch` requests spends beyond its decode steps on their prompts' prefill passes, at Poisson
    `rate` (requests/s) over `ranks` attention-DP ranks stepping together: batch / k passes of s(k) each
    (queueing.pass_size at rate / ranks, between a lone prompt's `lone_s` and a full pass's `full_s` of `per_pass`),
    less the decode step (`step_s`) a mixed step carries along."""
    k, s = pass_size(rate / ranks, lone_s, full_s, per_pass)
    stall = s if prefill_first else max(s - step_s, 0.0)
    return batch / k * stall
