"""Seconds of one serving step: the one question the estimate, the config search and the simulator ask of
roofline (step.py), answered from memoized parts (parts.py: token-count ops in token_ops.py, attention from
group sums in attention.py) where a pass splits, else by pricing the whole pass (forward_pass.engine_step)."""
from .step import StepPricer, step_seconds

__all__ = ["StepPricer", "step_seconds"]
