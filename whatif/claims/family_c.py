"""Claims of catalogue family C (see ../shared/techniques.md)."""
from .claim import Claim

CLAIMS: list[Claim] = []
