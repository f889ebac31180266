"""Claims of catalogue family G (see ../shared/techniques.md)."""
from .claim import Claim

CLAIMS: list[Claim] = []
