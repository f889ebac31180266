"""The format a published checkpoint is stored in, against what a profile name prices: `vllm serve
openai/gpt-oss-120b` loads MXFP4 experts where the profile name gpt-oss-120b prices 16-bit weights, so estimate,
simulate and --serve-command say so (specs level: a simulation imports it without the query commands)."""
from __future__ import annotations

from .hf_ids import is_hf_id, profile_id
from .profiles import MODEL_DIR, profile_index


def model_id(model: str) -> str:
    """What the engines take as the model: a Hugging Face id (a shipped profile's source), or a local folder."""
    if is_hf_id(model):
        return model
    if model in profile_index(MODEL_DIR) or model.lower() in {n.lower() for n in profile_index(MODEL_DIR)}:
        name = next(n for n in profile_index(MODEL_DIR) if n.lower() == model.lower())
        return profile_id(name) or name
    return model[: -len("/config.json")] if model.endswith("/config.json") else model


def stored_format_note(model: str, launched: str, scheme: str, weight: str) -> tuple[str, ...]:
    """A '#' line where a profile name was priced in another format than the published checkpoint the command
    launches stores (the engine loads that: `vllm serve openai/gpt-oss-120b` runs its MXFP4 experts, while the
    profile name gpt-oss-120b prices 16-bit weights); only for 16-bit or online-fp8 pricing (another scheme already
    has its 'MODEL must be' note). An id given as --model prices the stored format itself: no line."""
    from .checkpoint_quant import checkpoint_quant, shipped_record
    from .models import load_model
    priced = scheme or ("16-bit" if weight in ("bf16", "fp16", "fp32") else "")
    record = shipped_record(launched) if priced in ("16-bit", "fp8") and not is_hf_id(model) else None
    found = checkpoint_quant(str(record), load_model(model)) if record is not None else None
    if found is None or found.quantization == priced:
        return ()
    return (f"# priced {priced} weights (the profile {model}); {launched} is stored {found.quantization} "
            f"({found.source}) and the engine loads that: --model {launched} prices what this launches",)
