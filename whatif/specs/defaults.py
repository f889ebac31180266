"""The model and hardware a scenario uses when none is named (here, below the scenario, so that building the CLI's
parser, whose help states them, imports no roofline)."""

DEFAULT_MODEL = "llama-3-8b"
DEFAULT_HARDWARE = "h100-sxm"
