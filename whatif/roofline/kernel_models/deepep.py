"""DeepEP all-to-all (wide expert parallelism): dispatch sends each token's hidden state to the GPUs
holding its top-k experts, combine returns the weighted expert outputs. Measured in one 8-GPU node.

- normal (prefill; SGLang's DeepEP "normal" mode): a token goes once to each distinct remote rank among
  its experts' ranks, expected ranks = R (1 - C(E - E/R, k) / C(E, k)) for uniform routing, times
  (R - 1)/R remote; dispatch in fp8 with one fp32 scale per 128 elements (SGLang quantizes before its DeepEP
  dispatch; the tables agree: SM-bound dispatch takes 0.57x the combine's time, and bf16 would need 575 GB/s
  over H100's 450 GB/s NVLink at 24 SMs), combine in bf16. The kernel runs on `sms` SMs, so its copy rate is
  bounded both by the link (NVLink per direction) and by those SMs' own copy rate, SM_COPY_BYTES a clock each:
      t_c = bytes / (sms x clock x SM_COPY_BYTES),  t_m = bytes / link        (the fit's two terms)
  (An SM's rate, not its share of HBM: on 4-20 SMs H100 and B200 take the same time, 17.3 and 17.0 ms for
  32k tokens on 4 SMs, where the HBM share said B200 2.4x faster and left the link term at the cap.)
- low_latency (decode; LL mode): every (token, expert) pair is its own message over the link, dispatch in
  fp8 with one fp32 scale per 128 elements, combine in bf16 (t_m: the remote bytes over the link). The LL
  kernels run one warp group per expert, so they launch only ceil(E / ceil(E / SMs)) SMs (DeepEP
  internode_ll.cu: 8 SMs for 8 experts); each active SM walks its tokens and then its experts' receive
  counters one after the other, so a fixed cost per (token + expert) on an active SM (items). No compute
  term: the fitted form's compute efficiency is unused (fitted as 1). Before this, t_c was the same bytes
  over HBM, collinear with t_m: one of the two efficiencies drifted to the cap of 1 (the tell) and tokens
  on a few active SMs (1.9-2.6 us each, the 8- and 16-expert rows) had no term.
Parameters: data/modern_fit.yaml, families deepep_<mode>_<dispatch|combine> (fitted_roofline.py).
"""
from __future__ import annotations

import math

from .fitted_roofline import family_params, fitted_seconds
from .params import ceilings

EP_RANKS = 8   # the measured tables' node (node_num 1: one 8-GPU NVLink domain)
SM_COPY_BYTES = 128.0   # assumed ceiling of an SM's copy: one 128-byte line a clock through its load/store path


def expected_ranks(topk: int, experts: int, ranks: int = EP_RANKS) -> float:
    """Expected distinct ranks a token's top-k experts (uniformly routed) live on."""
    per = experts // ranks
    if experts - per < topk:
        return float(min(ranks, topk))
    miss = math.exp(math.lgamma(experts - per + 1) - math.lgamma(experts - per - topk + 1)
                    - math.lgamma(experts + 1) + math.lgamma(experts - topk + 1))
    return ranks * (1.0 - miss)


def ll_active_sms(experts: int, sms):
    """SMs a low-latency kernel launches: one warp group per expert, ceil(E / SMs) groups an SM (DeepEP)."""
    import numpy as np
    groups = np.ceil(experts / np.asarray(sms))
    return np.ceil(experts / groups)


def deepep_work(mode: str, phase: str, tokens, hidden, topk, experts, sms, c, link_bw, ranks=EP_RANKS):
    """([(SM-bound s, link-bound s)], messages) of one DeepEP call at efficiency 1; topk, experts scalars."""
    remote = (ranks - 1) / ranks
    per_elt = (1.0 + 4.0 / 128) if phase == "dispatch" else 2.0
    if mode == "normal":
        moved = tokens * expected_ranks(int(topk), int(experts), ranks) * remote * hidden * per_elt
        return [(moved / (sms * c.clock * SM_COPY_BYTES), moved / link_bw, 0.0 * moved)], tokens * c.sms / sms
    moved = tokens * topk * remote * hidden * per_elt
    active = ll_active_sms(int(experts), c.sms)
    return [(0.0 * moved, moved / link_bw, 0.0 * moved)], (tokens + experts) * c.sms / active


def _seconds(mode, phase, tokens, hidden, topk, experts, gpu, link_bw, sms, engine, ranks=EP_RANKS):
    c = ceilings(gpu)
    parts, items = deepep_work(mode, phase, tokens, hidden, topk, experts, sms or c.sms, c, link_bw, ranks)
    return float(fitted_seconds(parts, items, c.sms, family_params(f"deepep_{mode}_{phase}", engine, c.arch)))


def deepep_dispatch_seconds(tokens: int, hidden: int, topk: int, experts: int, gpu, link_bw: float,
                            low_latency: bool = False, sms: int | None = 24, engine: str = "sglang",
                            ranks: int = EP_RANKS) -> float:
    """Seconds of one DeepEP dispatch from one GPU of an 8-GPU NVLink node: `tokens` this GPU routes,
    `hidden` elements each, `topk` of `experts` experts; link_bw: the GPU's NVLink bandwidth per
    direction (B/s); low_latency: the decode (LL) kernel, else the normal one running on `sms` SMs
    (SGLang's default 24; None: all); ranks: the EP group (the tables measured 8). gpu: a GPU profile or
    Ceilings."""
    return _seconds("ll" if low_latency else "normal", "dispatch", tokens, hidden, topk, experts, gpu, link_bw,
                    sms, engine, ranks)


def deepep_combine_seconds(tokens: int, hidden: int, topk: int, experts: int, gpu, link_bw: float,
                           low_latency: bool = False, sms: int | None = 24, engine: str = "sglang",
                           ranks: int = EP_RANKS) -> float:
    """Seconds of one DeepEP combine (the return trip of deepep_dispatch_seconds; same inputs)."""
    return _seconds("ll" if low_latency else "normal", "combine", tokens, hidden, topk, experts, gpu, link_bw,
                    sms, engine, ranks)
