"""Claims of catalogue family F (see ../shared/techniques.md)."""
from .claim import Claim

CLAIMS: list[Claim] = []
