"""Claims of catalogue family I (placeholder until written)."""
from .claim import Claim

CLAIMS: list[Claim] = []
