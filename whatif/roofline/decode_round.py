"""One decode round of a batch under a technique that changes how many tokens a pass yields.

Autoregressive decoding runs one target pass per token. Speculative decoding drafts, then verifies
in one wider target pass; multi-token heads and diffusion LLMs emit several tokens per pass. Each
such technique (a Decoder, techniques/decoding.py) describes one round: the target's pass (timed by
the same roofline as any other), the drafting and other per-round work, and the tokens each sequence
expects to gain. The effective time per output token is the round's time over those tokens.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..specs.models import ModelSpec
from .config import ForwardBatch, Parallelism
from .forward_pass import PassTime, time_pass
from .memory import DEFAULT_PREFILL_CHUNK
from .ops import Op
from .pass_setup import PassSetup, pass_setup
from .timing import time_op


@dataclass(frozen=True)
class Round:
    """One decode round: the tokens each sequence gains and what the round costs."""

    tokens: float               # tokens each sequence gains per round (expected)
    verify: PassTime            # the target model's pass of the round (what the op table shows)
    draft_s: float = 0.0        # drafting: drafter passes on the GPU, or lookups on the CPU
    overhead_s: float = 0.0     # other per-round work (KV realignment of a ragged batch, ...)
    overlap: bool = False       # drafting runs beside the verify pass (a drafter on its own GPU, PEARL)
    reach: tuple[float, ...] = ()   # P(a sequence's accepted drafts reach depth d), d = 1..; () = a fixed yield
    detail: dict = field(default_factory=dict)   # technique-specific figures (tree size, drafted tokens, ...)

    @property
    def time_s(self) -> float:
        return self.time_with_verify(self.verify.time_s)

    def time_with_verify(self, verify_s: float) -> float:
        """The round's time when its verify pass takes `verify_s` (fused with other work, in the simulator)."""
        work = max(self.draft_s, verify_s) if self.overlap else self.draft_s + verify_s
        return work + self.overhead_s

    @property
    def per_token_s(self) -> float:
        return self.time_s / self.tokens


@dataclass(frozen=True)
class RoundContext:
    """What a decoder needs to time one round: the target's setup and the batch at this point."""

    setup: PassSetup        # the target model as the techniques run it
    batch: int              # sequences decoding together (one pipeline micro-batch)
    context: int            # tokens each sequence holds before the round
    prompt: int
    output: int
    cuda_graphs: bool
    prefill_chunk: int = DEFAULT_PREFILL_CHUNK

    def target(self, fb: ForwardBatch) -> PassTime:
        return time_pass(self.setup, fb, self.cuda_graphs)

    def other_model(self, model: ModelSpec, tp: int, par: Parallelism | None = None) -> PassSetup:
        """A second model (a drafter) on the same system and efficiency, at the precisions the target runs
        at (quantized with it: the memory plan sizes a drafter's weights and KV so), without techniques;
        over `tp` GPUs, or laid out as `par` (a module of the target itself runs as the target does)."""
        s = self.setup
        return pass_setup(model, s.system, par or Parallelism(tp=tp), s.precision, s.efficiency, s.utilization)

    def ops_time(self, ops: list[Op]) -> float:
        """Kernels outside the model's passes (draft heads, KV realignment), in sequence with their gaps."""
        s = self.setup
        times = [time_op(op, s.system.gpu, s.efficiency, s.system.gpu_link, s.paths) for op in ops]
        kernels = sum(op.count for op in ops)
        launch = 0.0 if self.cuda_graphs or s.efficiency.source == "ideal" else s.system.gpu.launch_overhead.value
        return sum(t.total_s for t in times) + kernels * (s.efficiency.kernel_gap_s + launch)
