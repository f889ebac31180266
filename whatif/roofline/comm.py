"""Collectives over the GPU interconnect: ring all-reduce, all-gather / reduce-scatter, all-to-all, point-to-point.

Bandwidth is the link's per-direction figure; `efficiency` is the fraction of it NCCL reaches.
"""
from __future__ import annotations

from .op_shapes import DeepEPShape
from .ops import CommShape, Op, OpClass, OpRole


def comm_op(name: str, collective: str, message_bytes: float, gpus: int, count: int,
            role: OpRole | None = None, first_rank: int = 0, stride: int = 1) -> Op:
    """`first_rank`, `stride`: the group's global ranks (CommShape); the default is a group of consecutive
    ranks from 0, which stays inside one node whenever it fits in one."""
    return Op(name, OpClass.COMM, 0.0, {"link": message_bytes}, "bytes",
              CommShape(collective, message_bytes, gpus, first_rank, stride),
              count, f"{collective} of {message_bytes:g} B over {gpus} GPUs", role)


def deepep_op(name: str, phase: str, decode: bool, tokens: float, hidden: int, topk: int, experts: int,
              message_bytes: float, gpus: int, count: int, role: OpRole) -> Op:
    """A DeepEP dispatch / combine (timed by kernel_models/deepep.py): SGLang's --deepep-mode auto runs the
    low-latency kernels for a decode batch, the normal ones for any batch with a prefill (DeepEPMode.resolve)."""
    mode = "ll" if decode else "normal"
    shape = DeepEPShape("all_to_all", message_bytes, gpus, mode=mode, phase=phase, tokens=tokens, hidden=hidden,
                        topk=topk, experts=experts)
    return Op(name, OpClass.COMM, 0.0, {"link": message_bytes}, "bytes", shape, count,
              f"DeepEP {mode} {phase} of {tokens:g} tokens x top-{topk} over {gpus} GPUs", role)


def collective_time(collective: str, message_bytes: float, gpus: int, bandwidth: float,
                    latency: float, efficiency: float = 1.0) -> float:
    """Seconds for one collective; ring algorithms: 2(n-1) steps for all-reduce."""
    if gpus <= 1 or message_bytes <= 0:
        return 0.0
    bw = bandwidth * efficiency
    if collective == "all_reduce":
        return 2 * (gpus - 1) / gpus * message_bytes / bw + 2 * (gpus - 1) * latency
    if collective in ("all_to_all", "all_gather", "reduce_scatter"):  # message = all bytes; (n-1)/n cross the link
        return (gpus - 1) / gpus * message_bytes / bw + (gpus - 1) * latency
    if collective == "send_recv":
        return message_bytes / bw + latency
    raise ValueError(f"unknown collective {collective}")
