"""whatif: predict LLM inference speed and memory from specs, before renting the GPUs."""

__version__ = "0.1.0"
