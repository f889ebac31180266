"""Claims of catalogue family B (see ../shared/techniques.md)."""
from .claim import Claim

CLAIMS: list[Claim] = []
