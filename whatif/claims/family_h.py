"""Claims of catalogue family H (see ../shared/techniques.md)."""
from .claim import Claim

CLAIMS: list[Claim] = []
