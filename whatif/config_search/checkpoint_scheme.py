"""The search's `checkpoint` precision: a checkpoint (a Hugging Face id or a config.json) priced as it is stored,
its quantization_config / hf_quant_config.json per module class (specs/checkpoint_quant.py), as `vllm serve ID`
loads it with no --quantization flag. It is the default where the checkpoint is quantized and no --weight-dtypes
or --quantizations is given: a bf16 default would price DeepSeek-R1's FP8 release at twice its weight bytes."""
from __future__ import annotations

CHECKPOINT = "checkpoint"
DEFAULT_DTYPES = ("bf16",)   # weight and KV dtypes a search tries where none is given and no checkpoint declares one


def checkpoint_fields(model: str) -> dict:
    """The precision: fields the checkpoint's quantization sets ({} for a profile name or an unquantized one)."""
    from ..specs.checkpoint_quant import checkpoint_precision
    from ..specs.profiles import looks_like_path
    if not isinstance(model, str) or not looks_like_path(model):
        return {}
    return checkpoint_precision(model, {}, weights=True, kv=False)


def default_quantizations(model: str, weight_dtypes, quantizations) -> tuple[str, ...] | None:
    """`quantizations` as given, else ('checkpoint',) where none of the precision flags is given and the
    checkpoint is quantized (None: leave the space's default)."""
    if quantizations or weight_dtypes:
        return tuple(quantizations) if quantizations else None
    return (CHECKPOINT,) if checkpoint_fields(model) else None


def declared_kv(model: str) -> tuple[str, str] | None:
    """(KV dtype, source) a checkpoint declares (ModelOpt kv_cache_quant_algo, compressed-tensors kv_cache_scheme),
    or None (a profile name, or a checkpoint that declares none)."""
    from ..specs.checkpoint_quant import checkpoint_precision
    if not looks_like_id(model):
        return None
    found = checkpoint_precision(model, {}, weights=False, kv=True)
    return (found["kv"], found.get("source", "its config.json")) if "kv" in found else None


def default_kv_dtypes(model: str, engine: str, kv_dtypes):
    """`kv_dtypes` as given, else the one KV dtype `estimate` prices (inputs.build_from_values: checkpoint_precision):
    the checkpoint's declared one where `engine`'s --kv-cache-dtype auto stores it (checkpoint_quant.
    kv_follows_checkpoint: vLLM V1 resolve_kv_cache_dtype_string, SGLang configure_kv_cache_dtype, TensorRT-LLM
    KvCacheConfig dtype 'auto'), else bf16."""
    from ..specs.checkpoint_quant import kv_follows_checkpoint
    if kv_dtypes is not None:   # (as given: the space checks it, an empty list included)
        return kv_dtypes
    declared = declared_kv(model)
    return (declared[0],) if declared and kv_follows_checkpoint(engine) else DEFAULT_DTYPES


def kv_note(model: str, engine: str, kv_dtypes) -> str:
    """The search header's line on the KV cache of a checkpoint that declares its KV dtype ('' for one that does
    not): which dtype runs, and why (the default follows the engine, as `estimate` does; --kv-dtypes overrides)."""
    declared = declared_kv(model)
    if declared is None:
        return ""
    from ..specs.checkpoint_quant import kv_follows_checkpoint
    kv, source = declared
    if not kv_follows_checkpoint(engine):
        return (f"KV {'/'.join(kv_dtypes)}: the checkpoint declares {kv} (from {source}), which {engine}'s "
                "--kv-cache-dtype auto does not read (its profile's memory.kv_dtype_from_checkpoint)")
    if tuple(kv_dtypes) == (kv,):
        return (f"KV {kv}: the checkpoint's (from {source}), as {engine}'s --kv-cache-dtype auto stores it; "
                "--kv-dtypes bf16 prices 16-bit")
    return (f"KV {'/'.join(kv_dtypes)} (--kv-dtypes): the checkpoint declares {kv} (from {source}), which {engine}'s "
            "--kv-cache-dtype auto would store")


def setup_precision(model: str, quantization: str, weight: str, kv: str):
    """The Precision a search setup runs: the checkpoint's, a named scheme's, or plain dtypes."""
    from ..roofline.config import Precision
    from ..specs.checkpoint_quant import names_own_scheme
    # a scheme the checkpoint stores (`--quantization fp8` on DeepSeek-R1's FP8 blocks) loads it as stored
    if quantization == CHECKPOINT or (looks_like_id(model) and names_own_scheme(model, quantization)):
        from ..inputs import _precision
        return Precision(**_precision({**checkpoint_fields(model), "kv": kv}, None, None, None, None))
    return Precision.of_scheme(quantization, kv=kv) if quantization else Precision(weight=weight, kv=kv)


def looks_like_id(model) -> bool:
    from ..specs.profiles import looks_like_path
    return isinstance(model, str) and looks_like_path(model)


def checkpoint_note(model: str, label: str = CHECKPOINT) -> str:
    """The search header's line saying what `qcheckpoint` (or a scheme naming the checkpoint's own) runs, and from
    which file."""
    f = checkpoint_fields(model)
    what = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in f.items() if k != "source") or "its dtypes"
    return f"q{label}: the checkpoint as stored ({what}; from {f.get('source', 'its config.json')})"


def own_scheme_labels(model: str, quantizations) -> list[str]:
    """The --quantizations that name the checkpoint's own scheme under another name (fp8 for FP8 blocks)."""
    from ..specs.checkpoint_quant import names_own_scheme
    if not looks_like_id(model):
        return []
    own = checkpoint_fields(model).get("quantization")
    return [q for q in quantizations if q not in (CHECKPOINT, own) and names_own_scheme(model, q)]
