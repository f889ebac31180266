"""DeepEP all-to-all (wide expert parallelism): dispatch sends each token's hidden state to the GPUs
holding its top-k experts, combine returns the weighted expert outputs. Measured in one 8-GPU node.

- normal (prefill; SGLang's DeepEP "normal" mode): a token goes once to each distinct remote rank among
  its experts' ranks, expected ranks = R (1 - C(E - E/R, k) / C(E, k)) for uniform routing, times
  (R - 1)/R remote; bf16 hidden states both ways. The kernel runs on `sms` SMs, so its copy rate is
  bounded both by the link (NVLink per direction) and by those SMs' share of the GPU's HBM bandwidth:
      t_c = bytes / (hbm x sms / SMs),  t_m = bytes / link        (the fit's two terms)
- low_latency (decode; LL mode): every (token, expert) pair is its own message over the link, dispatch in
  fp8 with one fp32 scale per 128 elements, combine in bf16; a fixed cost per message.
Parameters: data/modern_fit.yaml, families deepep_<mode>_<dispatch|combine> (fitted_roofline.py).
"""
from __future__ import annotations

import math

from .fitted_roofline import family_params, fitted_seconds
from .params import ceilings

EP_RANKS = 8   # the measured tables' node (node_num 1: one 8-GPU NVLink domain)
LL_SMS_SHARE = 1.0   # LL kernels spread over every SM


def expected_ranks(topk: int, experts: int, ranks: int = EP_RANKS) -> float:
    """Expected distinct ranks a token's top-k experts (uniformly routed) live on."""
    per = experts // ranks
    if experts - per < topk:
        return float(min(ranks, topk))
    miss = math.exp(math.lgamma(experts - per + 1) - math.lgamma(experts - per - topk + 1)
                    - math.lgamma(experts + 1) + math.lgamma(experts - topk + 1))
    return ranks * (1.0 - miss)


def deepep_work(mode: str, phase: str, tokens, hidden, topk, experts, sms, c, link_bw, ranks=EP_RANKS):
    """([(SM-bound s, link-bound s)], messages) of one DeepEP call at efficiency 1; topk, experts scalars."""
    remote = (ranks - 1) / ranks
    if mode == "normal":
        moved = tokens * expected_ranks(int(topk), int(experts), ranks) * remote * hidden * 2.0
        return [(moved / (c.hbm_bw * sms / c.sms), moved / link_bw, 0.0 * moved)], tokens * 0.0
    per_elt = (1.0 + 4.0 / 128) if phase == "dispatch" else 2.0
    moved = tokens * topk * remote * hidden * per_elt
    return [(moved / (c.hbm_bw * LL_SMS_SHARE), moved / link_bw, 0.0 * moved)], tokens * topk


def _seconds(mode, phase, tokens, hidden, topk, experts, gpu, link_bw, sms, engine):
    c = ceilings(gpu)
    parts, items = deepep_work(mode, phase, tokens, hidden, topk, experts, sms or c.sms, c, link_bw)
    return float(fitted_seconds(parts, items, c.sms, family_params(f"deepep_{mode}_{phase}", engine, c.arch)))


def deepep_dispatch_seconds(tokens: int, hidden: int, topk: int, experts: int, gpu, link_bw: float,
                            low_latency: bool = False, sms: int | None = 24, engine: str = "sglang") -> float:
    """Seconds of one DeepEP dispatch from one GPU of an 8-GPU NVLink node: `tokens` this GPU routes,
    `hidden` elements each, `topk` of `experts` experts; link_bw: the GPU's NVLink bandwidth per
    direction (B/s); low_latency: the decode (LL) kernel, else the normal one running on `sms` SMs
    (SGLang's default 24; None: all). gpu: a GPU profile or Ceilings."""
    return _seconds("ll" if low_latency else "normal", "dispatch", tokens, hidden, topk, experts, gpu, link_bw,
                    sms, engine)


def deepep_combine_seconds(tokens: int, hidden: int, topk: int, experts: int, gpu, link_bw: float,
                           low_latency: bool = False, sms: int | None = 24, engine: str = "sglang") -> float:
    """Seconds of one DeepEP combine (the return trip of deepep_dispatch_seconds; same inputs)."""
    return _seconds("ll" if low_latency else "normal", "combine", tokens, hidden, topk, experts, gpu, link_bw,
                    sms, engine)
