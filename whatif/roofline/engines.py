"""The serving engines whose measured kernels (the aiconfigurator corpus) the default efficiency's kernel
models were fitted on: the one list the CLI, the scenario, the fits and the corpus reader share."""
from __future__ import annotations

from ..errors import WhatifError

ENGINES = ("vllm", "sglang", "trtllm")
DEFAULT_ENGINE = "vllm"


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise WhatifError(f"--engine: '{engine}' is not valid; valid: {', '.join(ENGINES)}")
    return engine
