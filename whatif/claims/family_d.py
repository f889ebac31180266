"""Claims of catalogue family D (see ../shared/techniques.md)."""
from .claim import Claim

CLAIMS: list[Claim] = []
