"""Claims of catalogue family E (see ../shared/techniques.md)."""
from .claim import Claim

CLAIMS: list[Claim] = []
