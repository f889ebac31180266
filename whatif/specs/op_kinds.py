"""The vocabulary ops are named in: op classes (what the efficiency model prices) and op roles (what an
op is in the model's graph, so techniques find ops by meaning rather than by the names graph.py emits).
A spec: engine profiles name op roles (kernel_options.py), so it sits below roofline."""
from __future__ import annotations

from enum import Enum


class _StrEnum(str, Enum):
    """A str-valued enum that prints as its value (YAML keys, CSV cells and f-strings read the same)."""

    __str__ = str.__str__
    __format__ = str.__format__


class OpClass(_StrEnum):
    """Kernel kinds the efficiency model distinguishes (one parameter set each)."""

    GEMM = "gemm"
    ATTENTION_PREFILL = "attention_prefill"
    ATTENTION_DECODE = "attention_decode"
    NORM = "norm"
    ELEMENTWISE = "elementwise"
    ACTIVATION = "activation"
    EMBEDDING = "embedding"
    ROPE = "rope"
    COMM = "comm"
    SAMPLING = "sampling"
    ROUTER = "router"
    TRANSFER = "transfer"


ATTENTION_CLASSES = frozenset({OpClass.ATTENTION_PREFILL, OpClass.ATTENTION_DECODE})
# Classes priced at the tensor-core peak of the op's dtype; the rest run on the CUDA cores.
TENSOR_CORE_CLASSES = frozenset({OpClass.GEMM}) | ATTENTION_CLASSES


class OpRole(_StrEnum):
    """What an op is in the forward pass graph (graph.py, attention.py, moe.py set it)."""

    # before the layers
    EMBEDDING = "embedding"
    EMBEDDING_ALLREDUCE = "embedding_allreduce"
    POSITION_EMBEDDING = "position_embedding"
    PP_RECV = "pp_recv"
    # attention half of a layer
    INPUT_NORM = "input_norm"
    QKV_PROJ = "qkv_proj"            # fused Q, K, V projection
    Q_PROJ = "q_proj"                # MLA: q_proj, or its low-rank q_a_proj and q_b_proj
    KV_A_PROJ = "kv_a_proj"          # MLA: hidden state -> cached latent
    KV_B_PROJ = "kv_b_proj"          # MLA prefill: latent -> per-head K and V
    Q_ABSORB = "q_absorb"            # MLA decode: queries into the latent space
    V_ABSORB = "v_absorb"            # MLA decode: outputs out of it
    ROPE = "rope"
    KV_WRITE = "kv_write"            # new tokens' K/V appended to the cache
    ATTENTION = "attention"          # the attention kernel over the cached context
    MLA_ATTENTION = "mla_attention"  # MLA: the same over the latent cache (decode) or expanded K/V (prefill)
    SHARED_PREFIX_ATTENTION = "shared_prefix_attention"   # prefix sharing: all queries against the shared prefix
    SUFFIX_ATTENTION = "suffix_attention"                 # prefix sharing: each sequence against its own suffix
    O_PROJ = "o_proj"
    O_BIAS = "o_bias"                # o_proj's bias added by a kernel of its own (kernels.row_linear_bias_add)
    ATTN_GATE = "attn_gate"          # gated attention output (Qwen3-Next): sigmoid(gate) * attention output
    QK_NORM = "qk_norm"              # RMSNorm over the whole q and k projections (MiniMax-M2)
    QK_NORM_ALLREDUCE = "qk_norm_allreduce"   # its sums of squares summed over the attention TP ranks
    QK_HEAD_NORM = "qk_head_norm"    # RMSNorm over each head of q and k (Qwen3's q_norm / k_norm): one kernel
    SPARSE_INDEXER = "sparse_indexer"    # DSA: the lightning indexer's scores over every cached token
    INDEXER_TOPK = "indexer_topk"    # DSA: the top-k tokens picked from those scores
    LINEAR_ATTENTION = "linear_attention"  # Gated DeltaNet's recurrence (a state, no KV cache)
    SSM_SCAN = "ssm_scan"            # Mamba-2's SSD scan (a state, no KV cache)
    SHORT_CONV = "short_conv"        # the depthwise causal convolution before a recurrent scan
    MIXER_GATE = "mixer_gate"        # a recurrent mixer's gated output norm
    MIXER_SPLIT = "mixer_split"      # Gated DeltaNet: its projections' outputs split into q, k, v, z, b, a (own kernel)
    ATTN_ALLREDUCE = "attn_allreduce"
    ATTN_RESIDUAL = "attn_residual"
    POST_ATTN_NORM = "post_attn_norm"
    # feed-forward half of a layer
    MLP_UP = "mlp_up"                # dense MLP: gate and up (gated) or up
    MLP_ACT = "mlp_act"
    MLP_DOWN = "mlp_down"
    MLP_DOWN_BIAS = "mlp_down_bias"  # the down projection's bias, likewise
    ROUTER = "router"                # MoE router GEMM
    ROUTER_TOPK = "router_topk"
    MOE_DISPATCH = "moe_dispatch"
    EXPERT_UP = "expert_up"
    EXPERT_ACT = "expert_act"
    EXPERT_DOWN = "expert_down"
    MOE_COMBINE = "moe_combine"
    SHARED_EXPERT_UP = "shared_expert_up"
    SHARED_EXPERT_ACT = "shared_expert_act"
    SHARED_EXPERT_DOWN = "shared_expert_down"
    SHARED_EXPERT_GATE = "shared_expert_gate"   # Qwen MoE: sigmoid(gate(x)) scaling the shared expert, added to routed
    SHARED_EXPERT_ADD = "shared_expert_add"     # the shared expert's output added to the routed experts' (own kernel)
    MLP_ALLREDUCE = "mlp_allreduce"
    MLP_RESIDUAL = "mlp_residual"
    POST_MIXER_NORM = "post_mixer_norm"  # sandwich norms (Gemma 2/3): after the attention half
    POST_FFN_NORM = "post_ffn_norm"      # ... and after the feed-forward half
    # after the layers
    FINAL_NORM = "final_norm"
    LM_HEAD = "lm_head"
    LOGITS_GATHER = "logits_gather"
    SAMPLING = "sampling"
    PP_SEND = "pp_send"


# The attention kernel of a layer as graph.py builds it (standard or latent).
LAYER_ATTENTION_ROLES = frozenset({OpRole.ATTENTION, OpRole.MLA_ATTENTION})
# GEMMs no weight format or placement changes: the LM head (embedding-sized, 16-bit), the MoE router
# (activation-sized) and Qwen's shared-expert gate (hidden x 1, left unquantized by every engine and checkpoint).
NON_LAYER_GEMM_ROLES = frozenset({OpRole.LM_HEAD, OpRole.ROUTER, OpRole.SHARED_EXPERT_GATE})
# Ops of a pass that run once, not once per layer: before the first layer and after the last.
EMBEDDING_ROLES = frozenset({OpRole.EMBEDDING, OpRole.EMBEDDING_ALLREDUCE, OpRole.POSITION_EMBEDDING,
                             OpRole.PP_RECV, OpRole.PP_SEND})
LOGIT_ROLES = frozenset({OpRole.FINAL_NORM, OpRole.LM_HEAD, OpRole.LOGITS_GATHER, OpRole.SAMPLING})
NON_LAYER_ROLES = EMBEDDING_ROLES | LOGIT_ROLES
# A layer's feed-forward half (dense MLP or MoE), without the norm, residual and all-reduce around it.
FFN_ROLES = frozenset({OpRole.MLP_UP, OpRole.MLP_ACT, OpRole.MLP_DOWN, OpRole.ROUTER, OpRole.ROUTER_TOPK,
                       OpRole.MOE_DISPATCH, OpRole.EXPERT_UP, OpRole.EXPERT_ACT, OpRole.EXPERT_DOWN,
                       OpRole.MOE_COMBINE, OpRole.SHARED_EXPERT_UP, OpRole.SHARED_EXPERT_ACT,
                       OpRole.SHARED_EXPERT_DOWN, OpRole.SHARED_EXPERT_GATE, OpRole.SHARED_EXPERT_ADD})
