"""The sections a model spec may add below the ModelSpec: MoE, MLA, the DeepSeek Sparse Attention indexer, linear
attention (Gated DeltaNet), Mamba-2 and a vision encoder (a layer's kinds: model_layers.py). Apart from
model_layers.py so that a dense model's cold start creates none of these classes (issue 42)."""
from __future__ import annotations

from dataclasses import dataclass

INDEXER_SCALE_BYTES = 4   # DSA's cached indexer key: fp8 values + one fp32 scale per token (vLLM, FlashMLA)


@dataclass(frozen=True)
class MoESpec:
    """A mixture-of-experts block: routed and shared experts, top-k, which layers have it."""

    num_experts: int                   # routed experts per MoE layer
    experts_per_token: int             # top-k
    expert_intermediate_size: int
    shared_experts: int = 0            # always-active experts (DeepSeek)
    first_dense_layers: int = 0        # leading layers with a dense MLP instead (DeepSeek: 3)
    moe_layer_frequency: int = 1       # every n-th layer (after the dense ones) is MoE
    moe_layer_offset: int = 0          # ... counting from this one (llama4 Maverick: step 2, offset 1)
    shared_expert_intermediate_size: int = 0   # 0: the routed experts' size (Nemotron-3: twice it)
    router_bias: bool = False          # gpt-oss's router has a bias per expert
    fp32_router: bool = False          # the gate GEMM runs in fp32 (MiniMax-M2 in vLLM: roofline/moe.py)
    shared_expert_gate: bool = False   # sigmoid(x W_g) scales the shared expert's output (Qwen2-MoE, Qwen3-Next, 3.5)

    @property
    def shared_size(self) -> int:
        return self.shared_expert_intermediate_size or self.expert_intermediate_size


@dataclass(frozen=True)
class MLASpec:
    """Multi-head latent attention (DeepSeek-V2/V3): KV compressed to a latent plus a RoPE key."""

    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int = 0               # 0: queries are projected directly (no low-rank Q)


def owns_indexer(layer: int, topk_freq: int, skip_topk_offset: int) -> bool:
    """IndexShare's rule (vLLM deepseek_v2.py `_skip_topk`): layer i builds its own indexer iff
    max(i - skip_topk_offset + 1, 0) % topk_freq == 0."""
    return max(layer - skip_topk_offset + 1, 0) % topk_freq == 0


@dataclass(frozen=True)
class IndexerSpec:
    """DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5): per query, `heads` fp8 dot products
    of `head_dim` against every cached indexer key pick the `top_k` tokens MLA then attends."""

    heads: int
    head_dim: int
    top_k: int
    # IndexShare (GLM-5.2): layer i runs its own indexer iff max(i - skip_topk_offset + 1, 0) % topk_freq == 0; the
    # others build none and attend the last one's top-k (vLLM deepseek_v2.py DeepseekV2MLAAttention, `_skip_topk`,
    # its defaults 1 and 2: every layer its own)
    topk_freq: int = 1
    skip_topk_offset: int = 2

    def owns(self, layer: int) -> bool:
        """Whether `layer` runs (and caches keys for) its own indexer, else reuses the last one's top-k."""
        return owns_indexer(layer, self.topk_freq, self.skip_topk_offset)

    def params(self, hidden: int, q_lora_rank: int) -> int:
        q_in = q_lora_rank or hidden
        # wq_b (q latent -> heads x dim), wk (hidden -> dim), its LayerNorm (weight + bias), weights_proj
        return q_in * self.heads * self.head_dim + hidden * self.head_dim + 2 * self.head_dim + hidden * self.heads

    @property
    def key_bytes(self) -> int:
        """Bytes of one token's cached indexer key in one layer (fp8 + its scale)."""
        return self.head_dim + INDEXER_SCALE_BYTES


@dataclass(frozen=True)
class LinearAttentionSpec:
    """Gated DeltaNet (Qwen3-Next, Qwen3.5): per value head a key_head_dim x value_head_dim recurrent state.
    Kimi Delta Attention (Kimi-Linear, gate "channel") is the same delta rule and state with a per-channel decay:
    transformers models/kimi_linear/modular_kimi_linear.py KimiLinearDeltaAttention ("essentially the same as a gated
    delta net (GDN) but decay is per-channel"): its forget gate f and output gate g are low-rank (f_a / g_a [rank,
    hidden], f_b / g_b [heads x dk, rank]), dt_bias is per channel, beta a scalar per head."""

    key_heads: int
    value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int = 4
    state_dtype: str = ""              # "" : the KV cache's dtype
    gate: str = "head"                 # decay gate: "head" (GDN, one scalar a head) or "channel" (KDA, one a key dim)
    gate_rank: int = 0                 # KDA: rank of the low-rank f and g projections (0: GDN's full-rank z)

    @property
    def conv_channels(self) -> int:
        return 2 * self.key_heads * self.key_head_dim + self.value_heads * self.value_head_dim

    @property
    def state_elements(self) -> int:
        return self.value_heads * self.key_head_dim * self.value_head_dim

    @property
    def gate_elements(self) -> int:
        """Decay-gate values a token: one a value head (GDN's alpha), or one a key channel (KDA's f)."""
        return self.key_heads * self.key_head_dim if self.gate == "channel" else self.value_heads

    def params(self, hidden: int) -> int:
        v = self.value_heads * self.value_head_dim
        conv = self.conv_channels * self.conv_kernel
        if self.gate == "channel":   # KDA: q, k, v, beta; f_a, g_a (rank) then f_b, g_b; A_log, dt_bias per channel
            r = self.gate_rank
            proj = hidden * (self.conv_channels + self.value_heads + 2 * r) + r * (self.gate_elements + v)
            return proj + conv + self.value_heads + self.gate_elements + self.value_head_dim + v * hidden
        proj = hidden * (self.conv_channels + v + 2 * self.value_heads)   # q, k, v, output gate z, beta, alpha
        return proj + conv + 2 * self.value_heads + self.value_head_dim + v * hidden


@dataclass(frozen=True)
class MambaSpec:
    """Mamba-2 (Nemotron-H): per head a head_dim x state_size state; B and C shared over n_groups."""

    heads: int
    head_dim: int
    state_size: int
    n_groups: int = 1
    conv_kernel: int = 4
    chunk_size: int = 128              # SSD's chunk in the prefill scan
    proj_bias: bool = False
    conv_bias: bool = True
    state_dtype: str = ""

    @property
    def inner(self) -> int:
        return self.heads * self.head_dim

    @property
    def conv_channels(self) -> int:
        return self.inner + 2 * self.n_groups * self.state_size

    @property
    def state_elements(self) -> int:
        return self.heads * self.head_dim * self.state_size

    def params(self, hidden: int) -> int:
        in_proj = hidden * (self.inner + self.conv_channels + self.heads)   # z, x+B+C, dt
        conv = self.conv_channels * (self.conv_kernel + self.conv_bias)
        return (in_proj + in_proj // hidden * self.proj_bias + conv + 3 * self.heads   # dt_bias, A_log, D
                + self.inner + self.inner * hidden + hidden * self.proj_bias)        # gated norm, out_proj


@dataclass(frozen=True)
class EncoderSpec:
    """A modality encoder beside the decoder (a vision tower): counted in weights; priced per image only by the
    vision_encoder technique, with the tower's own shape where the profile gives it (tower_layers > 0), else
    LLaVA-1.5's CLIP ViT-L/14-336 (techniques/visual_tokens.py)."""

    kind: str
    params: int
    source_fields: str = ""            # how `params` was counted
    tower_layers: int = 0              # ViT blocks (0: the tower's shape not given)
    tower_width: int = 0               # hidden size
    tower_ffn: int = 0                 # MLP intermediate size (two matrices, no gate)
    tower_heads: int = 0               # attention heads (bidirectional within an image)
    patch_size: int = 0                # pixels a side of one patch
    merge: int = 1                     # patches the projector merges into one language-model token (2x2: 4)
