"""The stages of a pipeline-parallel replica, shared by its pp virtual engines: each stage runs one micro-batch
at a time.

vLLM keeps pp micro-batches in flight, one scheduler per virtual engine (Replica), and each stage (its GPUs)
runs them one after another, so a micro-batch whose stage is busy waits for it: a decode micro-batch queued
behind another's whole-prompt prefill waits that prefill out at every stage. These are the pipeline bubbles of
mixed prefill and decode micro-batches (Sarathi, Agrawal et al. 2023, arXiv 2308.16369: micro-batches
of unequal time stall the pipeline; uniform chunked-prefill micro-batches remove them). An iteration's price (every
stage in sequence, IterationTimes) is split evenly over the stages (balanced stages, as it is priced); a
micro-batch takes each stage in turn, in the order the iterations start. With equal micro-batches the replica
still completes pp of them per iteration time, as before."""
from __future__ import annotations


class PipelineStages:
    def __init__(self, pp: int):
        self.free = [0.0] * pp      # when each stage finishes the micro-batches already given to it

    def wall_time(self, start: float, priced_s: float) -> float:
        """How long an iteration priced `priced_s` (all stages) takes from `start`, waiting for busy stages."""
        per_stage = priced_s / len(self.free)
        t = start
        for stage, free in enumerate(self.free):
            t = (free if free > t else t) + per_stage
            self.free[stage] = t
        return t - start
