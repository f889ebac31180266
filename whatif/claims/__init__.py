"""Paper claims as reproducible scenarios: the setup, the paper's number, and whatif's prediction.

Each family module lists `CLAIMS`; `benchmarks/reproduce.py` evaluates them all into
docs/reproduction.md, and tests assert direction and bands for the ones the model should get right.
"""
from .claim import METRICS, Claim, Outcome, all_claims, evaluate

__all__ = ["METRICS", "Claim", "Outcome", "all_claims", "evaluate"]
