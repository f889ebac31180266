"""Parameters of a model's layers per module class (specs/quantization.MODULE_CLASSES), for precisions that differ
by module: routed experts, shared experts and dense MLPs counted from their shapes, the attention's output
projection from its heads, and everything else a layer holds (its input projections, the router, any other
weights an architecture adds) counted as `attention`, so the classes always sum to the layer's linear weights."""
from __future__ import annotations

from .models import ModelSpec


def attention_out_params(model: ModelSpec) -> int:
    """The output projection: heads x value width -> hidden (MLA: v_head_dim per head)."""
    v = model.mla.v_head_dim if model.mla is not None else model.head_dim
    return model.num_heads * v * model.hidden_size + model.hidden_size * model.o_bias


def layer_module_params(model: ModelSpec, layers) -> dict[str, int]:
    """{module class: parameters} summed over `layers` (norms excluded)."""
    out = dict.fromkeys(("attention", "attention_out", "dense_mlp", "experts", "shared_experts"), 0)
    for i in layers:
        total = model.layer_params(i) - model.norm_params() * model.layer_norms(i)
        ffn = model.layers[i].ffn
        if ffn == "moe":
            m = model.moe
            mlp = {"experts": m.num_experts * model.dense_mlp_params(m.expert_intermediate_size),
                   "shared_experts": m.shared_experts * model.dense_mlp_params(m.shared_size)}
        else:
            mlp = {"dense_mlp": model.dense_mlp_params()} if ffn == "dense" else {}
        mixer = model.layers[i].mixer
        o = min(attention_out_params(model.attention_view(mixer)), total - sum(mlp.values())) if mixer != "none" else 0
        for cls, n in mlp.items():
            out[cls] += n
        out["attention_out"] += o
        out["attention"] += total - o - sum(mlp.values())
    return out
