"""What an estimate serves (batch, prompt, output, prefill chunk, shared prefix): its own module so that what reads a
scenario (the simulator, the search) does not import the whole estimate (its step pricer, cost and result classes)."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import WhatifError, positive_int
from .memory import DEFAULT_PREFILL_CHUNK


@dataclass(frozen=True)
class Workload:
    """What is served: sequences per batch, prompt and output tokens, prefill chunk."""

    batch: int = 1
    prompt: int = 512
    output: int = 128
    prefill_chunk: int = DEFAULT_PREFILL_CHUNK
    shared_prefix: int = 0     # leading prompt tokens every sequence of the batch shares (a system prompt)

    def __post_init__(self):
        for name in ("batch", "prompt", "output", "prefill_chunk"):
            positive_int(getattr(self, name), "--" + name.replace("_", "-"))
        sp = self.shared_prefix
        if isinstance(sp, bool) or not isinstance(sp, int) or not 0 <= sp <= self.prompt:
            raise WhatifError(f"--shared-prefix: {sp!r} must be an integer from 0 to --prompt ({self.prompt})")
