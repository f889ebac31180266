"""Claims of catalogue family K (see ../shared/techniques.md)."""
from .claim import Claim

CLAIMS: list[Claim] = []
