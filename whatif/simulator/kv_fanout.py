"""How many copies of a request's KV one prefill GPU sends to a disaggregated decode pool.

A GQA/MHA cache is split by heads over the attention-TP ranks, so however the two pools are laid out a sending GPU
sends each byte it holds once. MLA's latent is not split: every attention-TP rank of the decode pool holds the
whole latent of its requests (roofline/context.py kv_width_per_gpu). A prefill rank whose attention-TP group is
smaller than the decode pool's (attention-DP prefill, TP decode) therefore sends its whole latent to each of the
decode's attention_tp / its attention_tp ranks, one after another through its own NIC: TensorRT-LLM's
MLACacheFormatter.formatOutput sends every block to each connection (needSendCache true when its TP-in-DP group is
not larger than the receiver's), SGLang's common/conn.py `_resolve_rank_mapping` sets required_dst_info_num =
attn_tp_size // prefill attn_tp_size and names it `kv_replica_factor` ("only MLA replicates its KV across decode
ranks"). The other way round (a larger prefill group) one of its ranks sends and the rest skip, one copy."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:   # (annotations only: config_search imports this without the roofline's layout module)
    from ..roofline.config import Parallelism


def fans_out_mla(spec, model) -> bool:
    """Whether a sending engine (its EngineSpec, or None) sends `model`'s MLA latent to each receiving attention-TP
    rank: its profile's disaggregation.mla_kv_fanout (default off) and an MLA model."""
    return spec is not None and spec.mla_kv_fanout and model.mla is not None


def mla_kv_copies(fans_out: bool, sender: Parallelism, receiver: Parallelism) -> int:
    """Copies of its KV a sending GPU sends: the receiver's attention-TP ranks per the sender's where it fans an
    MLA latent out (fans_out_mla), else 1."""
    if not fans_out:
        return 1
    return max(1, receiver.attention_tp // max(1, sender.attention_tp))


def kv_copies(sender, receiver) -> int:
    """mla_kv_copies for two pools' PassSetups (1 unless fans_out_mla: one copy a request, as before)."""
    if not fans_out_mla(sender.engine_spec, sender.model):
        return 1
    return mla_kv_copies(True, sender.parallel, receiver.parallel)
