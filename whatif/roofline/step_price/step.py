"""StepPricer: wall seconds of one serving step of a PassSetup's batch, the figure forward_pass.engine_step
gives. Where a pass splits (parts.splittable) a memoized pricer answers from parts, equal to the whole pass up
to float summation order (tests/test_sim_pass_parts.py); otherwise, or unmemoized, the whole pass is priced."""
from __future__ import annotations

from ..config import ForwardBatch
from ..forward_pass import PassTime, engine_step, piecewise_step
from ..pass_setup import PassSetup


class StepPricer:
    """'Seconds of this step' for batches of one PassSetup; `memoized`: from parts where the pass splits
    (a caller meeting many shapes: the simulator), else every step priced whole (bit for bit engine_step)."""

    def __init__(self, setup: PassSetup, memoized: bool = True, remember: bool = False):
        self.setup = setup
        self.parts = None
        # `remember`: whole steps kept by shape (a search prices the same passes at many batches and chunks)
        self.steps: dict[tuple, tuple[PassTime, float]] | None = {} if remember else None
        self.op_times: dict | None = {} if remember else None   # ... and their ops by value (op_memo.py)
        if memoized:   # (parts need numpy: only a memoizing caller, the simulator, imports them)
            from .parts import PassParts, splittable
            self.parts = PassParts(setup) if splittable(setup) else None
        spec = setup.engine_spec   # (fixed per setup: piecewise_step asks it first)
        # the parts answer every step without asking the batch's shape (no piecewise-graph decode steps)
        self.plain_parts = self.parts if spec is None or not spec.piecewise_decode else None

    def seconds(self, batch: ForwardBatch, cuda_graphs: bool, passes: int = 1) -> float:
        """Wall seconds of a serving step of `batch`: decode in CUDA graphs (with `cuda_graphs`), a prefill
        eagerly, the engine's CPU work once for `passes` passes back to back (multi-step scheduling)."""
        # (a piecewise-graph decode step is priced whole: the parts know the full-graph and eager passes only)
        if self.parts is not None and not piecewise_step(self.setup, batch, cuda_graphs):
            return self.parts.step_s(batch.groups, batch.logits, cuda_graphs, passes)
        return self.step(batch, cuda_graphs, passes)[1]

    def group_seconds(self, groups: tuple, logits: int, cuda_graphs: bool, passes: int = 1) -> float:
        """seconds(ForwardBatch(groups, logits), cuda_graphs, passes), the batch built only where the parts do not
        answer (the simulator prices a new shape at most prompt steps: the batch cost a fifth of the price)."""
        if self.plain_parts is not None:
            return self.plain_parts.step_s(groups, logits, cuda_graphs, passes)
        return self.seconds(ForwardBatch(groups, logits), cuda_graphs, passes)

    def step(self, batch: ForwardBatch, cuda_graphs: bool, passes: int = 1) -> tuple[PassTime, float]:
        """The step's pass op by op (what an estimate shows) and its wall seconds, priced whole."""
        if self.steps is None:
            return engine_step(self.setup, batch, cuda_graphs, passes)
        key = (batch, cuda_graphs, passes)
        got = self.steps.get(key)
        if got is None:
            got = self.steps[key] = engine_step(self.setup, batch, cuda_graphs, passes, self.op_times)
        return got


def step_seconds(setup: PassSetup, batch: ForwardBatch, cuda_graphs: bool, passes: int = 1) -> float:
    """One step's seconds priced whole, without a memo (a caller asking once per setup)."""
    return StepPricer(setup, memoized=False).seconds(batch, cuda_graphs, passes)
