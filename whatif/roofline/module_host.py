"""Host time of an engine's MLA / DSA attention module in an eager prefill, where it was measured whole.

An eager pass (a prefill: SGLang runs no prefill CUDA graphs) costs the host one launch per kernel whatif counts
(kernels.eager_launch_s). Its attention module does more on the host than the kernels whatif counts in it (RMSNorms
of the low-rank latents, RoPE, splits and concatenations, per-GEMM activation quantization, the backend's metadata
and Python): aiconfigurator timed SGLang's whole module of a prefill eagerly (collector/sglang/
collect_wideep_attn.py: CUDA events around one Python call of `self_attn`, synchronized after each), and at
<= 2,048 tokens a call it reads flat at 0.47-0.87 ms, the module's host time (benchmarks/eager_module_host.py).
`kernels.eager_module_launches` gives that time as launches of the host's eager launch, per module kind and GEMM
format ("mla:fp8_block", "dsa:bfloat16", ...; "dsa_sparse:..." the DSA module's indexer path, past the top-k,
measured flat at 1.0-1.6 ms up to 16k cached tokens, session 59); the module's kernels then each carry
launches / (its kernels in a layer) of the host's time, never less than one. Absent (the default), or a format
not measured: one launch each.
"""
from __future__ import annotations

from ..specs.kernel_options import MODULE_KEYS  # noqa: F401  (the keys a profile may give; re-exported)
from ..specs.op_kinds import OpRole
from .module_fits import DSA_MODULE_ROLES, MLA_MODULE_ROLES
from .ops import OpClass, graph_role

# The module's ops in a prefill pass: the decode module's and the latent's expansion (kv_b_proj).
ALL_MODULE_ROLES = DSA_MODULE_ROLES | {OpRole.KV_B_PROJ}
MODULE_ROLES = {"mla": MLA_MODULE_ROLES | {OpRole.KV_B_PROJ}, "dsa": ALL_MODULE_ROLES,
                "dsa_sparse": ALL_MODULE_ROLES}   # (the indexer path: the same module's ops)
# whatif's attention GEMM scheme -> the measured GEMM format; fp8 per-tensor issues the same quantize + GEMM
# pair per projection on SGLang's host as the block-scaled fp8 the tables ran (Fp8LinearMethod).
GEMM_FORMATS = {"fp8": "fp8_block", "fp8-block": "fp8_block", "": "bfloat16"}


def sparse_path(model, batch) -> bool:
    """Whether a DSA prefill pass takes SGLang's indexer (sparse) path: some sequence's keys (cached + new) exceed
    the top-k (nsa_backend set_nsa_prefill_impl: the dense MHA path while max_kv_len <= index_topk)."""
    if model.indexer is None or batch is None:
        return False
    return max((q + c for q, c, _ in batch.groups), default=0) > model.indexer.top_k


def module_key(setup, batch=None) -> str | None:
    """"mla:<format>" / "dsa:<format>" / "dsa_sparse:<format>" (a DSA pass on its indexer path, sparse_path) of
    the model's attention module and its GEMMs, or None (no MLA, or GEMMs of a format no table measured)."""
    model = setup.model
    if model.mla is None:
        return None
    attn = setup.precision.module("attention")
    scheme = attn.quantization or ""
    if scheme == "" and attn.weight != "bf16":
        return None
    fmt = GEMM_FORMATS.get(scheme)
    kind = "mla" if model.indexer is None else "dsa_sparse" if sparse_path(model, batch) else "dsa"
    return None if fmt is None else f"{kind}:{fmt}"


def _module_times(times, roles) -> list:
    return [t for t in times if graph_role(t.op) in roles and t.op.op_class != OpClass.TRANSFER]


def _per_layer(mod) -> float:
    """Kernels a layer of the module's ops `mod` (one MLA attention kernel a layer; the dense and MoE layers'
    ops are listed apart)."""
    layers = sum(t.op.count for t in mod if graph_role(t.op) == OpRole.MLA_ATTENTION)
    return sum(t.op.count for t in mod) / layers if layers else 0.0


def module_kernels_per_layer(times) -> float:
    """Kernels whatif counts in one layer's MLA / DSA attention module among the priced ops `times`."""
    return _per_layer(_module_times(times, ALL_MODULE_ROLES))


def launch_factors(setup, times, batch=None) -> dict[int, float]:
    """{id(op): host launches each} for the attention module's ops of an eager prefill pass where the engine
    measured the module whole (kernels.eager_module_launches); {} elsewhere (one launch each). batch: the pass's
    ForwardBatch, which picks a DSA module's path (None: the dense one)."""
    spec = setup.engine_spec
    if spec is None or not spec.eager_module_launches:
        return {}
    key = module_key(setup, batch)
    launches = dict(spec.eager_module_launches).get(key) if key else None
    if launches is None:
        return {}
    mod = _module_times(times, MODULE_ROLES[key.split(":")[0]])
    n = _per_layer(mod)
    return {id(t.op): launches / n for t in mod} if n and launches > n else {}
