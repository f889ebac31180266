"""The Pareto frontier of throughput per GPU against per-user throughput, and the best configuration."""
from __future__ import annotations

from .configs import OK, Config


def frontier(configs: list[Config]) -> list[Config]:
    """Feasible configurations no other beats on both tokens/s per GPU and tokens/s per user (ties on both:
    the one serving the most tokens/s, then the shortest TTFT, then the fewest GPUs, then the first), by falling
    per-user throughput."""
    feasible = [c for c in configs if c.feasible]
    order = sorted(range(len(feasible)), key=lambda i: (-feasible[i].tok_s_per_user, -feasible[i].tok_s_per_gpu,
                                                        -feasible[i].tok_s, feasible[i].ttft_s, feasible[i].gpus, i))
    out: list[Config] = []
    best_per_gpu = -1.0
    for i in order:
        c = feasible[i]
        if c.tok_s_per_gpu > best_per_gpu:   # strictly better per GPU than every faster-per-user one
            out.append(c)
            best_per_gpu = c.tok_s_per_gpu
    return out


def rank_key(c: Config, objective: str = "tok_s_per_gpu") -> tuple:
    """Best first: most tokens/s per GPU, then most tokens/s in all (or the other way round with objective
    'tok_s'), then fastest per user, then shortest TTFT (a smaller prefill chunk at no gain), then fewest GPUs."""
    first = (-c.tok_s_per_gpu, -c.tok_s) if objective == "tok_s_per_gpu" else (-c.tok_s, -c.tok_s_per_gpu)
    return (*first, -c.tok_s_per_user, c.ttft_s, c.gpus)


def ranked(configs: list[Config], objective: str = "tok_s_per_gpu") -> list[Config]:
    """Configurations that meet the SLOs, best first (stable: the enumeration order breaks exact ties)."""
    return sorted((c for c in configs if c.status == OK), key=lambda c: rank_key(c, objective))
