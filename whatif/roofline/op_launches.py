"""Host launches of an op whatif prices as one kernel but the engine's eager prefill runs as several.

An eager pass (a prefill: SGLang runs no prefill CUDA graphs) costs the host one launch per kernel whatif counts
(kernels.eager_launch_s). Some ops of whatif's graph are one fitted kernel whose engine runs a chain of kernels,
each launched from Python: SGLang's Gated DeltaNet prefill is whatif's one `gated_deltanet` op, timed whole by its
fit, where chunk_gated_delta_rule (layers/attention/fla/chunk.py) launches 8 Triton kernels (l2norm of q and of k,
chunk_local_cumsum, chunk_scaled_dot_kkt_fwd, solve_tril, recompute_w_u_fwd, chunk_gated_delta_rule_fwd_h,
chunk_fwd_o) after the layer's fused_gdn_gating kernel. `kernels.prefill_op_launches` gives those counts per op
role ({"linear_attention": 9}); the op then carries that many of the host's launches in an eager prefill pass, its
GPU time unchanged (the fit's). Absent (the default), or a role not listed: one launch each.
"""
from __future__ import annotations

from .ops import OpClass, graph_role


def op_launch_factors(setup, times) -> dict[int, float]:
    """{id(op): host launches each} for the priced ops `times` of an eager prefill pass whose role the engine runs
    as several kernels (kernels.prefill_op_launches); {} elsewhere (one launch each)."""
    spec = setup.engine_spec
    if spec is None or not spec.prefill_op_launches:
        return {}
    launches = dict(spec.prefill_op_launches)
    out = {}
    for t in times:
        role = graph_role(t.op)
        n = launches.get(role.value) if role is not None else None
        if n is not None and n > 1 and t.op.op_class != OpClass.TRANSFER:
            out[id(t.op)] = n
    return out
