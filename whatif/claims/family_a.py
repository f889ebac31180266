"""Claims of catalogue family A (see ../shared/techniques.md)."""
from .claim import Claim

CLAIMS: list[Claim] = []
