"""Price per hour of what a scenario runs on, and cost per million generated tokens."""
from __future__ import annotations

from dataclasses import dataclass

from ..specs.hardware import System


@dataclass(frozen=True)
class Price:
    """USD per hour of the GPUs used, with where the figure came from."""

    usd_per_hour: float
    provenance: str    # where the figure came from (profile field, user flag, technique parameter)


def scenario_price(system: System, gpus: int, override: float | None = None, extra: float = 0.0,
                   extra_source: str = "") -> Price | None:
    """The hourly price of the `gpus` GPUs used (a system's price is split per GPU), plus `extra`
    (devices a technique adds). None when no price is known."""
    if override is not None:
        base, source = override, "user (--price-per-hour)"
    elif system.price_per_hour is not None:
        q = system.price_per_hour
        base, source = q.value * gpus / system.gpu_count, f"{system.name} profile ({q.provenance}: {q.source})"
    elif system.gpu.price_per_hour is not None:
        q = system.gpu.price_per_hour
        base, source = q.value * gpus, f"{system.gpu.name} profile ({q.provenance}: {q.source})"
    else:
        return None
    if extra:
        return Price(base + extra, f"{source} + {extra:g} USD/h for {extra_source}")
    return Price(base, source)


def cost_per_million_tokens(price: Price | None, tokens_per_s: float) -> float | None:
    """USD per million generated tokens at `tokens_per_s`, None without a price or throughput."""
    if price is None or tokens_per_s <= 0:
        return None
    return price.usd_per_hour / 3600.0 / tokens_per_s * 1e6
