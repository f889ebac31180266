"""The tiers a memory plan overfills, in words: every one of them, so a plan over in HBM and in host DRAM names
both (an error naming only the first sends the user to fix it and meet the next; session 75 D's walk)."""
from __future__ import annotations

from ..specs import units


def tiers_over(over: list[tuple[str, float, float]]) -> str:
    """'hbm needs 91.2 GB per GPU, usable 77 GB (over by 14.2 GB); host ...' for MemoryPlan.overflow()'s
    (tier, bytes needed, bytes usable) rows."""
    return "; ".join(f"{tier} needs {units.nbytes(need)} per GPU, usable {units.nbytes(usable)} (over by "
                     f"{units.nbytes(need - usable)})" for tier, need, usable in over)
