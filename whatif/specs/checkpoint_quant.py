"""A checkpoint's own quantization, read offline from its config.json (`quantization_config`) and the ModelOpt
`hf_quant_config.json` beside it, as the precision a model loaded from that checkpoint runs by default.

Formats read: quant_method fp8 (weight_block_size [128, 128] -> fp8-block, else per-tensor fp8), mxfp4, awq, gptq,
compressed-tensors (config_groups: INT4/INT8 weight-only, FP8, NVFP4; ignore; kv_cache_scheme) and ModelOpt
(quant_algo FP8 / NVFP4 / W4A16_AWQ, exclude_modules, kv_cache_quant_algo). An ignore list is mapped onto the module
classes of specs/quantization.MODULE_CLASSES: a class is left 16-bit when the list names its weights in most of its
layers (any spelling: exact names, dotted prefixes, globs, `re:` regexes). The router, embeddings and LM head stay
16-bit regardless. A checkpoint's FP8 KV cache (kv_cache_quant_algo FP8) is the default KV dtype: vLLM
(utils/torch_utils.resolve_kv_cache_dtype_string), SGLang (ModelRunner.configure_kv_cache_dtype) and TensorRT-LLM
(KvCacheConfig dtype 'auto') all resolve `--kv-cache-dtype auto` to it.
"""
from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..errors import WhatifError
from .engines import load_engine
from .profiles import MODEL_DIR, absolute
from .quantization import MODULE_CLASSES, UNQUANTIZED, module_table

# Spellings of a layer's weights, per module class, as checkpoints name them ({p}: the layers' prefix, {i}: a layer).
# Only weights that carry their class: Gated DeltaNet's in_proj_ba (2 x value heads rows, 64 of Qwen3-Next's 12,352
# input-projection rows) is not one; Qwen3-Next-80B-A3B-Instruct-FP8 keeps it bf16 beside an FP8 in_proj_qkvz
# (checkpoint_quant/Qwen--Qwen3-Next-80B-A3B-Instruct-FP8.json), which would otherwise read as 16-bit attention.
_NAMES = {
    "attention": ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.qkv_proj",
                  "self_attn.q_a_proj", "self_attn.q_b_proj", "self_attn.kv_a_proj_with_mqa", "self_attn.kv_b_proj",
                  "linear_attn.in_proj_qkvz", "linear_attn.in_proj_qkv", "mixer.in_proj"],
    "attention_out": ["self_attn.o_proj", "linear_attn.out_proj", "mixer.out_proj"],
    "dense_mlp": ["mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "mlp.gate_up_proj"],
    "experts": ["mlp.experts.0.gate_proj", "mlp.experts.0.up_proj", "mlp.experts.0.down_proj",
                "mlp.experts.gate_up_proj", "mlp.experts.down_proj", "block_sparse_moe.experts.0.w1",
                "block_sparse_moe.experts.0.w2", "block_sparse_moe.experts.0.w3"],
    "shared_experts": ["mlp.shared_experts.gate_proj", "mlp.shared_experts.up_proj", "mlp.shared_experts.down_proj",
                       "mlp.shared_expert.gate_proj", "mlp.shared_expert.up_proj", "mlp.shared_expert.down_proj"],
}
# Published checkpoints' quantization sections (their config.json's or hf_quant_config.json's, with the id and the
# file's address), for ids that resolve to a shipped profile: `--model deepseek-ai/DeepSeek-R1` runs its FP8 blocks.
SHIPPED_DIR = MODEL_DIR / "checkpoint_quant"
_PREFIXES = ("model.layers", "language_model.model.layers", "model.language_model.layers", "backbone.layers")


@dataclass(frozen=True)
class CheckpointQuant:
    """What a checkpoint stores: the linear layers' scheme, per-class exceptions, its KV dtype, where it was read."""

    quantization: str                       # the scheme of every quantized linear layer
    modules: tuple = ()                     # ((class, 'none'), ...): classes its ignore list leaves 16-bit
    kv: str = ""                            # the KV dtype it declares ('' : none)
    group_size: int = 0                     # int formats: weights per scale
    source: str = ""                        # 'config.json quantization_config (fp8, weight_block_size [128, 128])'
    partial: tuple = ()                     # (class, layers, of layers, state) where some layers differ
    method: str = ""                        # its quant_method where the engines' --quantization names it so

    def precision_fields(self, model) -> dict:
        """The precision: section this checkpoint implies for `model` (routed experts alone quantized reads as
        --quantize-experts-only: 16-bit weights with the experts' scheme)."""
        kept = dict(self.modules)
        present = [c for c in MODULE_CLASSES if _has_class(model, c)]
        note = self.source + "".join(f"; {c.replace('_', ' ')}: {n} of {t} layers {state}, not modelled"
                                     for c, n, t, state in self.partial)
        if model.moe is not None and all(kept.get(c) == UNQUANTIZED for c in present if c != "experts") \
                and kept.get("experts") != UNQUANTIZED:
            out = {"expert_quantization": self.quantization, "source": note}
        else:
            out = {"quantization": self.quantization, "source": note,
                   **({"modules": {c: n for c, n in self.modules if c in present}} if self.modules else {})}
        if self.group_size:
            out["weight_group_size"] = self.group_size
        return out


def _has_class(model, cls: str) -> bool:
    moe_layers = model.num_moe_layers
    return {"dense_mlp": moe_layers < model.num_layers, "experts": moe_layers > 0,
            "shared_experts": moe_layers > 0 and model.moe.shared_experts > 0}.get(cls, True)


def _ignore_regex(entries) -> re.Pattern | None:
    """One pattern for an ignore list: an exact name or its dotted prefix, a glob (also as a prefix), `re:` regex."""
    parts = []
    for e in entries:
        if not isinstance(e, str) or not e:
            continue
        if e.startswith("re:"):
            parts.append(f"(?:{e[3:]})")
        elif any(ch in e for ch in "*?["):
            parts.append(fnmatch.translate(e))
            parts.append(fnmatch.translate(e + ".*"))
        else:
            parts.append(re.escape(e) + r"(?:\..*)?\Z")
    try:
        return re.compile("|".join(parts)) if parts else None
    except re.error as exc:
        raise WhatifError(f"quantization_config ignore: a pattern is not a valid regex ({exc})") from None


def _layer_classes(model):
    """(class, [layers]) for each module class the model has."""
    moe = [i for i in range(model.num_layers) if model.is_moe_layer(i)]
    dense = [i for i in range(model.num_layers) if not model.is_moe_layer(i)]
    every = list(range(model.num_layers))
    return [("attention", every), ("attention_out", every), ("dense_mlp", dense), ("experts", moe),
            ("shared_experts", moe if model.moe is not None and model.moe.shared_experts else [])]


def ignored_classes(entries, model) -> tuple[tuple, tuple]:
    """(((class, 'none'), ...) for classes ignored in most of their layers, ((class, n, of, state), ...) for the
    layers that differ from what their class is taken to be)."""
    pattern = _ignore_regex(entries)
    if pattern is None:
        return (), ()
    whole, partial = [], []
    for cls, layers in _layer_classes(model):
        hit = sum(any(pattern.match(f"{p}.{i}.{n}") for p in _PREFIXES for n in _NAMES[cls]) for i in layers)
        if layers and hit * 2 > len(layers):
            whole.append((cls, UNQUANTIZED))
            if hit < len(layers):
                partial.append((cls, len(layers) - hit, len(layers), "quantized"))
        elif hit:
            partial.append((cls, hit, len(layers), "16-bit"))
    return tuple(whole), tuple(partial)


def _fp8(cfg: dict, where: str) -> tuple[str, str]:
    block = cfg.get("weight_block_size")
    if block is None:
        return "fp8", f"{where} (fp8, per-tensor scales)"
    if list(block) != [128, 128]:
        raise WhatifError(f"{where}.weight_block_size: {block!r}; whatif prices fp8 block scales of [128, 128] "
                          "(fp8-block) only")
    return "fp8-block", f"{where} (fp8, weight_block_size [128, 128])"


_MODELOPT = {"FP8": "fp8", "NVFP4": "nvfp4", "FP8_BLOCK": "fp8-block", "W4A16_AWQ": "awq", "FP8_PB_WO": "fp8-block"}


def _modelopt(q: dict, where: str) -> tuple[str, list, str, int, str]:
    algo = q.get("quant_algo")
    if algo not in _MODELOPT:
        raise WhatifError(f"{where}.quant_algo: {algo!r} has no whatif scheme; valid: {', '.join(_MODELOPT)}")
    kv = {"FP8": "fp8", "NVFP4": "fp4"}.get(str(q.get("kv_cache_quant_algo") or "").upper(), "") or _kv_scheme(q)
    ignore = q.get("exclude_modules") or q.get("ignore") or []   # newer ModelOpt exports spell it `ignore`
    return _MODELOPT[algo], ignore, kv, 0, f"{where} (ModelOpt {algo})"


# AMD Quark's quantization_config (quant_method "quark"): global_quant_config.weight / .input_tensors, each a spec
# with `dtype` ("fp4": OCP MXFP4, group_size 32, scale_format "e8m0"; "fp8_e4m3"), `exclude` the ignore list (the
# layout Quark's exporter writes, QConfig.to_dict; amd/*-MXFP4 releases). (weight dtype, input dtype) -> scheme.
_QUARK = {("fp4", "fp4"): "mxfp4-w4a4", ("fp4", ""): "mxfp4", ("fp8_e4m3", "fp8_e4m3"): "fp8"}


def _quark(cfg: dict, where: str) -> tuple[str, list, str, int, str]:
    g = cfg.get("global_quant_config") or {}
    w, a = (g.get("weight") if isinstance(g, dict) else None), (g.get("input_tensors") if isinstance(g, dict) else None)
    if cfg.get("layer_quant_config") or cfg.get("layer_type_quant_config") or not isinstance(w, dict):
        raise WhatifError(f"{where}: a Quark config with per-layer specs or a staged weight spec is not read; valid: "
                          "one global_quant_config weight spec (give --quantization / --expert-quantization instead)")
    key = (str(w.get("dtype") or ""), str((a or {}).get("dtype") or "") if isinstance(a, dict) else "")
    if key not in _QUARK or (key[0] == "fp4" and w.get("group_size", 32) != 32):
        raise WhatifError(f"{where}.global_quant_config: weights {key[0] or 'none'} with inputs {key[1] or 'none'} "
                          f"(group {w.get('group_size')}): no whatif scheme; valid: fp4 / fp4 (group 32, mxfp4-w4a4), "
                          "fp4 weight-only (mxfp4), fp8_e4m3 / fp8_e4m3 (fp8)")
    name = _QUARK[key]
    return name, cfg.get("exclude") or [], "", 0, f"{where} (Quark {key[0]} weights, {key[1] or '16-bit'} inputs)"


def _kv_scheme(cfg: dict) -> str:
    """A compressed-tensors style kv_cache_scheme: 8-bit float -> fp8."""
    kv = cfg.get("kv_cache_scheme") or {}
    return "fp8" if isinstance(kv, dict) and kv.get("type") == "float" and kv.get("num_bits") == 8 else ""


def _compressed(cfg: dict, where: str) -> tuple[str, list, str, int, str]:
    groups = cfg.get("config_groups") or {}
    if not isinstance(groups, dict) or not groups:
        raise WhatifError(f"{where}.config_groups: missing; a compressed-tensors config names its schemes there")
    g = next(iter(groups.values()))
    w, a = g.get("weights") or {}, g.get("input_activations")
    bits, kind, size = w.get("num_bits"), w.get("type"), w.get("group_size") or 0
    name, extra = None, 0
    if kind == "int" and not a and bits == 4:
        name, extra = ("w4a16", 0) if size == 32 else ("gptq", int(size or 128))
    elif kind == "int" and not a and bits == 8:
        name, extra = "w8a16", int(size or 128)
    elif kind == "float" and bits == 4 and a and a.get("num_bits") == 4:
        name = "nvfp4"
    elif kind == "float" and bits == 8:
        name = "fp8-block" if w.get("strategy") == "block" and w.get("block_structure") == [128, 128] else "fp8"
    if name is None:
        raise WhatifError(f"{where}.config_groups: weights {kind} {bits}-bit with activations "
                          f"{(a or {}).get('type', 'none')} {(a or {}).get('num_bits', '')}: no whatif scheme; valid: "
                          "int4 / int8 weight-only, fp8, nvfp4")
    kv = ""   # a kv_cache_scheme here only carries scales: the engines' --kv-cache-dtype auto stays 16-bit
    label = f"{where} (compressed-tensors {kind}{bits} weights" + (f", group {size}" if size else "") + ")"
    return name, cfg.get("ignore") or [], kv, extra, label


def _read_json(path: Path) -> dict:
    from .safe_yaml import read_text
    try:
        data = json.loads(read_text(path, "checkpoint config"))
    except ValueError as exc:
        raise WhatifError(f"{path}: not valid JSON ({exc})") from None
    return data if isinstance(data, dict) else {}


def quant_file_beside(config: Path) -> Path:
    """The ModelOpt hf_quant_config.json next to a config.json (`X_config.json` -> `X_hf_quant_config.json`)."""
    return config.with_name(config.name[: -len("config.json")] + "hf_quant_config.json")


@cache
def checkpoint_quant(config: str, model) -> CheckpointQuant | None:
    """The quantization a checkpoint's config.json (and a hf_quant_config.json beside it) declares, or None. A
    shipped record (SHIPPED_DIR: {id, source, quantization_config or hf_quant_config}) reads the same way."""
    path = Path(config)
    data = _read_json(path)
    shipped = path.parent == SHIPPED_DIR
    beside = quant_file_beside(path) if path.name.endswith("config.json") else None
    hf_quant = data.get("hf_quant_config") if shipped else \
        _read_json(beside) if beside is not None and beside.is_file() else None
    flag = ""     # ModelOpt, compressed-tensors: the engines' flag is their method's name, never a whatif scheme's
    if hf_quant is not None:
        where = f"{data['id']} hf_quant_config.json" if shipped else beside.name
        q = hf_quant.get("quantization")
        if not isinstance(q, dict):
            raise WhatifError(f"{where}: no 'quantization' mapping (a ModelOpt hf_quant_config.json has one)")
        name, ignore, kv, group, label = _modelopt(q, where)
    else:
        cfg = data.get("quantization_config") or (data.get("text_config") or {}).get("quantization_config")
        if not cfg:
            return None
        if not isinstance(cfg, dict):
            raise WhatifError(f"{path.name}.quantization_config: expected a mapping")
        where = f"{data['id']} config.json quantization_config" if shipped else f"{path.name} quantization_config"
        method = cfg.get("quant_method")
        kv, group = "", 0
        if "quant_algo" in cfg:   # ModelOpt's fields inside config.json
            name, ignore, kv, group, label = _modelopt(cfg, where)
        elif method == "fp8":
            (name, label), ignore = _fp8(cfg, where), cfg.get("modules_to_not_convert") or []
            flag = "fp8"
        elif method == "mxfp4":
            name, ignore, label = "mxfp4", cfg.get("modules_to_not_convert") or [], f"{where} (mxfp4)"
        elif method in ("awq", "gptq"):
            bits = cfg.get("bits") or cfg.get("w_bit") or 4
            group = int(cfg.get("group_size") or cfg.get("q_group_size") or 128)
            name = method if bits == 4 else "w8a16"
            ignore, label = cfg.get("modules_to_not_convert") or [], f"{where} ({method}, {bits}-bit, group {group})"
        elif method == "compressed-tensors":
            name, ignore, kv, group, label = _compressed(cfg, where)
        elif method == "quark":
            name, ignore, kv, group, label = _quark(cfg, where)
        else:
            raise WhatifError(f"{where}.quant_method: {method!r} has no whatif scheme; valid: fp8, mxfp4, awq, gptq, "
                              "compressed-tensors, quark, modelopt (or give --quantization)")
    whole, partial = ignored_classes(ignore, model)
    return CheckpointQuant(name, whole, kv, group, label, partial, flag)


def checkpoint_config(name: str) -> Path | None:
    """The config.json a --model value names when it is a checkpoint's (a path, a folder, an id in the hub cache);
    None for a shipped profile or a YAML file. An id that resolves to a shipped profile reads the shipped copy of
    its quantization, else the hub cache's config.json (an alias such as deepseek-ai/DeepSeek-V3.1 has no copy)."""
    from .checks import is_file
    from .hf_ids import cached_config, is_hf_id, resolve_hf_id
    from .profiles import looks_like_path
    if not looks_like_path(name):
        return None
    folder = Path(name) / "config.json"
    if is_file(folder, "--model"):
        return absolute(folder)
    if is_file(name, "--model"):
        return absolute(name) if name.endswith(".json") else None
    if is_hf_id(name):
        kind, found = resolve_hf_id(name)
        return absolute(found) if kind == "config" else shipped_record(name) or cached_config(name)[0]
    return None


def shipped_record(hf_id: str) -> Path | None:
    """The shipped copy of a published checkpoint's quantization (an id that resolves to a shipped profile)."""
    index = {p.stem.lower(): p for p in SHIPPED_DIR.glob("*.json")}
    return index.get(hf_id.replace("/", "--").lower())


WEIGHT_KEYS = ("weight", "activation", "quantization", "quantize_experts_only")   # each replaces all the weights
# engines whose --kv-cache-dtype auto follows the checkpoint (a release profile: its base engine's, unless its
# memory.kv_dtype_from_checkpoint says otherwise)
KV_ENGINES = ("vllm", "sglang", "trtllm")


def kv_follows_checkpoint(engine: str | None) -> bool:
    """Whether `--engine engine` stores the KV cache in the checkpoint's declared KV dtype: its profile's own
    memory.kv_dtype_from_checkpoint, else its base engine's (KV_ENGINES); no engine named: the default's."""
    if engine is None:
        return True
    spec = load_engine(engine)
    return spec.kv_from_checkpoint if spec.kv_from_checkpoint is not None else spec.base_engine in KV_ENGINES


def checkpoint_precision(model_name: str, prec: dict, weights: bool = True, kv: bool = True,
                         engine: str | None = None) -> dict:
    """`prec` (a precision: section) with the checkpoint's quantization where nothing given says otherwise: its
    weights unless a weight key or flag is given (--expert-quantization and a module table go over them), its KV
    dtype unless one is (and the engine follows it)."""
    path = checkpoint_config(model_name)
    if path is None:
        return prec
    from .models import load_model
    found = checkpoint_quant(str(path), load_model(model_name))
    if found is None:
        return prec
    out = dict(prec)
    if own_scheme_named(prec, found):   # the engines load the checkpoint as it is (its ignore list included)
        out.pop("quantization")
        prec = dict(out)
    if weights and not any(k in prec for k in WEIGHT_KEYS):   # the experts' scheme or a module table goes over it
        out.update(found.precision_fields(load_model(model_name)))
        out.update({k: prec[k] for k in ("weight_group_size", "expert_quantization") if k in prec})
        if "modules" in prec:
            out["modules"] = {**dict(out.get("modules") or {}), **dict(module_table(prec["modules"]))}
    if kv and found.kv and "kv" not in prec and kv_follows_checkpoint(engine):
        out["kv"] = found.kv
        out["source"] = out.get("source") or found.source
    return out


def alias_note(model_name: str) -> str:
    """What an id that resolves to a shipped profile by alias (hf_ids.ALIASES) lacks when there is no shipped copy of
    its quantization and no config.json in the hub cache ('' otherwise): the alias may name a quantized release
    (deepseek-ai/DeepSeek-V3.1, say, if its config.json declares FP8 blocks) that whatif cannot read offline."""
    from .hf_ids import is_hf_id, profile_id, resolve_hf_id
    if not is_hf_id(model_name):
        return ""
    kind, name = resolve_hf_id(model_name)
    if kind != "profile" or (profile_id(name) or "").lower() == model_name.lower() or checkpoint_config(model_name):
        return ""   # (checkpoint_config: the shipped copy of its quantization, else the hub cache's config.json)
    return f"the {name} profile; {model_name}'s quantization_config is neither shipped nor in the hub cache"


def alias_assumption(model_name: str, prec: dict) -> dict:
    """`prec` with a source saying its 16-bit weights are assumed, where alias_note says so and nothing sets them."""
    note = "" if any(k in prec for k in (*WEIGHT_KEYS, "source", "modules", "expert_quantization")) \
        else alias_note(model_name)
    return {**prec, "source": f"{note}: 16-bit assumed, --quantization sets it"} if note else prec


def own_scheme_named(prec: dict, found: CheckpointQuant) -> bool:
    """`--quantization` names the checkpoint's own scheme and no other weight key is given: `vllm serve
    openai/gpt-oss-120b --quantization mxfp4` loads the checkpoint as stored, its modules_to_not_convert (the
    attention, 16-bit) included, so whatif runs the checkpoint's precision rather than the scheme on every layer."""
    return names_scheme(prec.get("quantization"), found) and not any(
        k in prec for k in WEIGHT_KEYS if k != "quantization")


def names_own_scheme(model_name: str, quantization: str | None) -> bool:
    """`quantization` names the scheme of the checkpoint `model_name` resolves to (False for a profile name or an
    unquantized checkpoint): the engines then load it as stored."""
    path = checkpoint_config(model_name) if quantization else None
    if path is None:
        return False
    from .models import load_model
    found = checkpoint_quant(str(path), load_model(model_name))
    return found is not None and names_scheme(quantization, found)


def names_scheme(quantization: str | None, found: CheckpointQuant) -> bool:
    """`quantization` names the checkpoint's scheme, whatif's name or its quant_method as the engines' flag spells it:
    `--quantization fp8` on DeepSeek-R1 (quant_method fp8, weight_block_size [128, 128]) loads its 128x128 blocks,
    not per-tensor scales (Fp8Config.get_name 'fp8', from_config reads weight_block_size from the checkpoint:
    vllm-project/vllm@1436674 vllm/model_executor/layers/quantization/fp8.py, sgl-project/sglang@00563d3
    python/sglang/srt/layers/quantization/fp8.py)."""
    return bool(quantization) and quantization in (found.quantization, found.method)
