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
  Plus a cost per GB moved in seconds, the same on every GPU (byte_steps: the tables show it on both GPUs at
  ~1,250 GB/s, whatever the SM count; booked as the link, it doubled on H100's link: left out 22.7 -> 18.5% dispatch).
  Plus two cross-rank barriers, unfitted (barrier_seconds): the timed call is a cached dispatch / combine whose
  cached_notify kernel barriers all ranks before and after cleaning the buffers (DeepEP intranode.cu), each a chain
  of NVLink flag writes at the link's measured latency (signal_seconds, as low-latency mode's): B200's 1-token calls
  are 5.7 / 5.9 us slower than H100's (dispatch / combine), two barriers 6.2 us, where a floor in seconds said 0
  (left out 18.5 -> 11.4% dispatch, 16.1 -> 11.9% combine).
- low_latency (decode; LL mode): every (token, expert) pair is its own message over the link, dispatch in
  fp8 with one fp32 scale per 128 elements, combine in bf16 (t_m: the remote bytes over the link). The LL
  kernels run one warp group per expert, so they launch only ceil(E / ceil(E / SMs)) SMs (DeepEP
  internode_ll.cu: 8 SMs for 8 experts); each active SM walks its tokens and then its experts' receive
  counters one after the other, so a fixed cost per (token + expert) on an active SM (items). In dispatch
  each token's send ends with atomic_add_release_global after the warp's NVLink stores (internode_ll.cu), a
  wait on the link's write acknowledgements, so its items count in the link's latency (signal_s below; item_s
  is then latencies per item): B200's per-token cost is 1.2-1.3x H100's, where seconds gave 1x, SM clocks 1.06x
  (leave-one-GPU-out 15.8 -> 9.0%); combine's tokens end in a TMA store wait, no release (seconds). Its other
  term (t_c) is a signalling latency, not compute: the send phase ends by writing each peer's receive
  counters and the receive phase polls them (DeepEP internode_ll.cu), a chain of cross-GPU flag writes
  like NCCL's LL protocol, so its unit is the link's measured small-message latency (NCCL LL base_s,
  data/collective_fit.yaml: fitted on that link's nccl-tests rows, not on DeepEP's) and compute_eff is
  1 / the chain's length in those units. The tables' floor is 1.6-1.7x H100's on B200 (dispatch of 1
  token: 15-28 us against 9-17); no datasheet figure carries it (both link profiles say 2 us), nccl-tests
  on the same two fabrics do (LL base 9.5 us against 6.4: 1.49x).
Parameters: data/modern_fit.yaml, families deepep_<mode>_<dispatch|combine> (fitted_roofline.py).
"""
from __future__ import annotations

import math
from functools import cache

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


@cache
def signal_seconds(link_name: str, link_type: str, link_bw: float) -> float:
    """A link's measured small-message latency: NCCL's LL protocol base (collective_fit.yaml); a link without a
    fit of its own takes the nearest fitted generation of its type and bandwidth."""
    from .collectives import collective_params
    return collective_params(link_name, described=(link_type, link_bw))[0].protocols["LL"].base_s


def normal_moved(phase: str, tokens, hidden, topk, experts, ranks=EP_RANKS):
    """Bytes a normal-mode dispatch / combine sends to other ranks: each token once per distinct remote rank."""
    per_elt = (1.0 + 4.0 / 128) if phase == "dispatch" else 2.0
    return tokens * expected_ranks(int(topk), int(experts), ranks) * (ranks - 1) / ranks * hidden * per_elt


def byte_steps(mode: str, phase: str, tokens, hidden, topk, experts, ranks=EP_RANKS):
    """Normal mode's GB moved, counted as steps of a cost in seconds per GB the same on every GPU (the fit's step_s):
    the tables' per-byte time apart from the SM term, solved from their 4- and 24-SM rows at >= 16k tokens, is
    1,231 GB/s on B200 and 1,254 GB/s on H100, neither link (900, 450 GB/s); its source is not identified.
    Low-latency mode: none."""
    return normal_moved(phase, tokens, hidden, topk, experts, ranks) / 1e9 if mode == "normal" else 0.0


NORMAL_BARRIERS = 2   # cross-rank barriers a normal-mode call waits on (DeepEP intranode.cu: cached_notify_*)


def barrier_seconds(mode: str, signal_s: float) -> float:
    """Normal mode's cross-rank barriers, unfitted: DeepEP's cached_notify_dispatch and cached_notify_combine
    (intranode.cu) each barrier all ranks before and after cleaning the buffers, each barrier a chain of flag
    writes over NVLink that the peers poll: the link's signal latency (signal_seconds) a barrier. Low-latency
    mode: none (its signalling is its t_c)."""
    return NORMAL_BARRIERS * signal_s if mode == "normal" else 0.0


def deepep_work(mode: str, phase: str, tokens, hidden, topk, experts, sms, c, link_bw, ranks=EP_RANKS,
                signal_s=0.0):
    """([(SM-bound or signalling s, link-bound s, 0)], items) of one DeepEP call at efficiency 1; topk, experts
    scalars; signal_s: the link's signal_seconds (low-latency mode's t_c; normal mode does not read it)."""
    remote = (ranks - 1) / ranks
    per_elt = (1.0 + 4.0 / 128) if phase == "dispatch" else 2.0
    if mode == "normal":
        moved = normal_moved(phase, tokens, hidden, topk, experts, ranks)
        return [(moved / (sms * c.clock * SM_COPY_BYTES), moved / link_bw, 0.0 * moved)], tokens * c.sms / sms
    moved = tokens * topk * remote * hidden * per_elt
    active = ll_active_sms(int(experts), c.sms)
    items = (tokens + experts) * c.sms / active
    # dispatch: each token's send ends in a release after its NVLink stores, so an item waits on the link's acks
    return [(signal_s + 0.0 * moved, moved / link_bw, 0.0 * moved)], items * (signal_s if phase == "dispatch" else 1.0)


def _seconds(mode, phase, tokens, hidden, topk, experts, gpu, link_bw, sms, engine, ranks, link):
    c = ceilings(gpu)
    signal = signal_seconds(link, "nvlink", link_bw)
    parts, items = deepep_work(mode, phase, tokens, hidden, topk, experts, sms or c.sms, c, link_bw, ranks, signal)
    steps = byte_steps(mode, phase, tokens, hidden, topk, experts, ranks)
    p = family_params(f"deepep_{mode}_{phase}", engine, c.arch)
    return float(fitted_seconds(parts, items, c.sms, p, steps)) + barrier_seconds(mode, signal)


def deepep_dispatch_seconds(tokens: int, hidden: int, topk: int, experts: int, gpu, link_bw: float,
                            low_latency: bool = False, sms: int | None = 24, engine: str = "sglang",
                            ranks: int = EP_RANKS, link: str = "") -> float:
    """Seconds of one DeepEP dispatch from one GPU of an 8-GPU NVLink node: `tokens` this GPU routes,
    `hidden` elements each, `topk` of `experts` experts; link_bw: the GPU's NVLink bandwidth per
    direction (B/s); low_latency: the decode (LL) kernel, else the normal one running on `sms` SMs
    (SGLang's default 24; None: all); ranks: the EP group (the tables measured 8); link: the NVLink profile's
    name (its measured latency; unnamed: the fitted generation nearest link_bw). gpu: a GPU profile or Ceilings."""
    return _seconds("ll" if low_latency else "normal", "dispatch", tokens, hidden, topk, experts, gpu, link_bw,
                    sms, engine, ranks, link)


def deepep_combine_seconds(tokens: int, hidden: int, topk: int, experts: int, gpu, link_bw: float,
                           low_latency: bool = False, sms: int | None = 24, engine: str = "sglang",
                           ranks: int = EP_RANKS, link: str = "") -> float:
    """Seconds of one DeepEP combine (the return trip of deepep_dispatch_seconds; same inputs)."""
    return _seconds("ll" if low_latency else "normal", "combine", tokens, hidden, topk, experts, gpu, link_bw,
                    sms, engine, ranks, link)
