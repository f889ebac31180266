"""Family E: a multimodal front end. A vision encoder turns each image into visual tokens that enter
the language model's prompt (`vision_encoder`), and a share of those tokens can be pruned before the
language model's input (`visual_token_pruning`), so prefill computes and the cache keeps fewer positions.

The encoder is CLIP ViT-L/14 at 336 px, the one LLaVA-1.5 uses (huggingface.co/openai/clip-vit-large-patch14-336,
config.json vision_config; LLaVA-1.5's mm_vision_tower), with LLaVA-1.5's two-layer MLP projector
(mm_projector_type mlp2x_gelu) into the language model's width. The workload's prompt counts the image
tokens: prompt = images x image_tokens + text tokens. A model whose profile gives its own tower's shape (Kimi-K2.5:
MoonViT, a native-resolution ViT whose patch merger hands the language model one token per 2x2 patches) runs that
tower instead: image_tokens x merge patches an image, no class token, the merger's two linears.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import WhatifError
from ..attention import DECODE_MAX_QUERIES, attention_op
from ..context import PassContext, PrefillUnit
from ..mlp import weight_gemm
from ..module_fits import FITTED_ATTENTION
from ..ops import Op
from .base import Technique, param, register
from .kit import PromptPositions, stepping

# CLIP ViT-L/14-336 vision tower (openai/clip-vit-large-patch14-336 config.json, vision_config)
VIT_WIDTH = 1024            # hidden_size
VIT_LAYERS = 24             # num_hidden_layers (LLaVA reads layer -2, but the tower runs all 24)
VIT_FFN = 4096              # intermediate_size
VIT_HEADS = 16              # num_attention_heads
VIT_IMAGE = 336             # image_size, pixels
VIT_PATCH = 14              # patch_size, pixels
PATCHES = (VIT_IMAGE // VIT_PATCH) ** 2    # 576: the image tokens LLaVA-1.5 hands the language model


def prefill_positions(ctx: PassContext) -> float:
    """Prompt positions this pass computes (sequences still prefilling, not decoding ones beside them). A
    verify pass (speculative decoding's draft tree, a diffusion step) computes generated positions only, however
    many: it needs logits at every new token, which a prefill does not."""
    if ctx.batch.verify:
        return 0.0
    return sum(q * n for q, _, n in ctx.batch.groups if q > DECODE_MAX_QUERIES)



@dataclass(frozen=True)
class Tower:
    """A ViT's shape as vision_tower_ops prices it: blocks, width, MLP size, heads, the patches it encodes per
    language-model token (merge: a 2x2 patch merger's 4), a class token or not, the projector's input width."""

    layers: int
    width: int
    ffn: int
    heads: int
    patch: int
    merge: int = 1
    cls: int = 0
    fixed: int = 0          # a fixed-resolution tower's patches an image (CLIP at 336 px: 576); 0: native resolution

    def patches(self, image_tokens: float) -> float:
        """Patches the tower encodes for an image handed to the language model as `image_tokens` tokens."""
        return self.fixed or image_tokens * self.merge


CLIP = Tower(VIT_LAYERS, VIT_WIDTH, VIT_FFN, VIT_HEADS, VIT_PATCH, 1, 1, PATCHES)


def model_tower(model) -> Tower:
    """The model's own vision tower where its profile gives the shape (Kimi-K2.5's MoonViT: vision_config), else
    LLaVA-1.5's CLIP ViT-L/14-336 (the technique's paper setting)."""
    e = model.encoder
    if e is None or not e.tower_layers:
        return CLIP
    return Tower(e.tower_layers, e.tower_width, e.tower_ffn, e.tower_heads, e.patch_size, e.merge)


def vision_tower_ops(images: float, ctx: PassContext, attention_fit: bool = False, image_tokens: int = PATCHES,
                     tower: Tower = CLIP) -> list[Op]:
    """The ViT over `images` images of `image_tokens` language-model tokens each: patch embedding, the tower's
    bidirectional layers over each image's patches (+ CLS where it has one; CLIP: 576 + 1), and the projector
    into the language model's width at the language model's dtype: CLIP's two-layer MLP (1024 -> d -> d), or a
    patch merger's (merge x width -> merge x width -> d: the shapes hf_fields.vision_tower_params counts).
    attention_fit: the attention op is priced by the encoder attention kernel fit where its engine has one
    (module_fits.py)."""
    patches = tower.patches(image_tokens)
    per_image = patches + tower.cls
    tokens, d, f, hd = images * per_image, tower.width, tower.ffn, tower.width // tower.heads
    # every token attends to every token of its image: twice the causal pairs attention_op counts
    bidirectional = (per_image ** 2) / (per_image * (per_image + 1) / 2)
    llm, merged, out = ctx.model.hidden_size, tower.merge * d, images * patches / tower.merge
    projector = ([weight_gemm("vision_projector_in", out, llm, d, ctx.prec, 1),
                  weight_gemm("vision_projector_out", out, llm, llm, ctx.prec, 1)] if tower.merge == 1 else
                 [weight_gemm("vision_projector_in", out, merged, merged, ctx.prec, 1),
                  weight_gemm("vision_projector_out", out, llm, merged, ctx.prec, 1)])
    return [
        weight_gemm("vision_patch_embed", images * patches, d, 3 * tower.patch ** 2, ctx.prec, 1),
        weight_gemm("vision_qkv_out", tokens, 4 * d, d, ctx.prec, tower.layers),
        attention_op([(per_image, 0, images)], tower.heads, tower.heads, hd, hd, ctx.prec.act_bytes,
                     ctx.prec.act_bytes, 2 * d, tower.layers, ctx.prec.activation,
                     name=FITTED_ATTENTION if attention_fit else "vision_attention",
                     pair_fraction=lambda q, c: bidirectional),
        weight_gemm("vision_ffn", tokens, 2 * f, d, ctx.prec, tower.layers),
        *projector,
    ]


@register
@dataclass(frozen=True)
class VisionEncoder(Technique):
    """A multimodal front end (LLaVA-1.5): each of the request's `images` is cut into 14x14-pixel patches at
    336x336 px and encoded by CLIP ViT-L/14 (24 layers, width 1024, 16 heads, every patch attending to every
    patch), then projected by a two-layer MLP into `image_tokens` visual tokens of the language model's width,
    which are part of the prompt. Cost: the encoder and projector per request, charged to the prefill passes
    in proportion to the prompt positions they compute (so chunked prefill pays it once in all). Nothing else
    changes: the language model prefills and caches every visual token."""

    name = "vision_encoder"
    family = "E"
    paper = "Improved Baselines with Visual Instruction Tuning (LLaVA-1.5)"
    slots = ("vision front end",)
    images: int = param(1, "images per request (LLaVA-1.5 benchmarks: one)", "images")
    image_tokens: int = param(PATCHES, "visual tokens per image: (336/14)^2 patches of CLIP ViT-L/14-336", "tokens")
    prompt: int = param(0, "prompt tokens, image tokens included; 0: the workload's prompt", "tokens")
    attention_fit: bool = param(False, "price the tower's attention by the encoder attention kernel fit (vLLM, "
                                       "TRT-LLM; measured vision-attention tables) instead of the prefill model")

    def check_params(self) -> None:
        self.require(self.images >= 1, "images", "an integer >= 1")
        self.require(self.image_tokens >= 1, "image_tokens", "an integer >= 1")
        self.require(self.prompt >= 0, "prompt", "an integer >= 0")

    def check(self, model, shared_prefix: int) -> None:
        if self.prompt and self.prompt < self.visual_tokens():
            raise WhatifError(f"--technique {self.name}: the prompt ({self.prompt} tokens) must hold the "
                              f"{self.images} x {self.image_tokens} image tokens; valid: a workload prompt >= "
                              f"{self.visual_tokens()}")

    def for_workload(self, workload):
        # a prompt other than the workload's would spread the request's images over positions it never
        # prefills (prompt=10^8 under a 2,048-token workload priced ~0 of the tower): refuse it
        if self.prompt and workload.prompt and self.prompt != workload.prompt:
            raise WhatifError(f"--technique {self.name}:prompt={self.prompt}: differs from the workload's prompt "
                              f"({workload.prompt} tokens); valid: omit it, or {workload.prompt}")
        return self if self.prompt else replace(self, prompt=workload.prompt)

    def visual_tokens(self) -> int:
        return self.images * self.image_tokens

    def positions(self, tokens: float) -> float:
        """Language-model positions for `tokens` prompt tokens (all of them: nothing is pruned)."""
        return tokens

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if stepping(ctx) or not self.prompt:
            return []
        # this pass's share of each request's images: its prompt positions over the request's positions
        images = prefill_positions(ctx) * self.images / self.positions(self.prompt)
        return vision_tower_ops(images, ctx, self.attention_fit, self.image_tokens, model_tower(ctx.model)) \
            if images else []


@register
@dataclass(frozen=True)
class VisualTokenPruning(PromptPositions, VisionEncoder):
    """Visual-token pruning at the language model's input (Generic Token Compression in MLLMs from an
    Explainability Perspective), on top of the vision front end (its encoder and projector run on every
    patch): a lightweight conv net maps the first LLM layer's attention map to each visual token's
    importance, and only the `keep` share of the visual tokens enters the language model, so prefill
    computes and the cache keeps prompt - (1 - keep) x images x image_tokens positions. Cost beside the
    encoder: the first layer's Q/K projections and attention over the whole unpruned prompt (the attention
    map the selector reads; charged as a full attention layer, an upper bound), unless `selector` is off
    (a selector that needs no LLM pass, e.g. a fixed pooling). Not charged: the conv net itself (small)."""

    name = "visual_token_pruning"
    paper = "Generic Token Compression in Multimodal Large Language Models from an Explainability Perspective"
    evicts = True            # positions differ per request, so a shared prefix could not be stored once
    budget_param = "keep"
    keep: float = param(0.5, "share of the visual tokens kept for the language model (the paper's headline "
                             "setting: 50% pruned)")
    selector: bool = param(True, "charge the first LLM layer's attention map over the unpruned prompt")

    def check_params(self) -> None:
        super().check_params()
        self.require(0 < self.keep <= 1, "keep", "a share above 0, up to 1")

    def positions(self, tokens: float) -> float:
        # the image tokens lead the prompt (LLaVA's <image> then the instruction), so a prefix of
        # `tokens` holds min(tokens, visual) of them
        return tokens - (1 - self.keep) * min(tokens, self.visual_tokens())

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        return [(max(1, round(self.positions(cached + new) - self.positions(cached))),
                 round(self.stored_tokens(cached)), n) for new, cached, n in units]

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        ops = super().extra_ops(ctx)
        if not ops or not self.selector:
            return ops
        # the selector's attention map: layer 1 over the request's whole prompt, its share in this pass
        requests = prefill_positions(ctx) / self.positions(self.prompt)
        m = ctx.model
        heads, kv = max(1, m.num_heads // ctx.par.tp), max(1, m.num_kv_heads // ctx.par.tp)
        qk = (heads + kv) * m.head_dim
        return ops + [
            weight_gemm("selector_qk_proj", requests * self.prompt, qk, m.hidden_size, ctx.prec, 1),
            attention_op([(self.prompt, 0, requests)], heads, kv, m.head_dim, m.head_dim, ctx.prec.act_bytes,
                         ctx.prec.act_bytes, 2 * kv * m.head_dim, 1, ctx.prec.activation, name="selector_attention"),
        ]

