"""The host calls of one DeepSeek-V3/R1 MoE layer in TensorRT-LLM's eager context step, read at source, against
the launches whatif charges: a diagnostic, nothing mapped (docs/accuracy.md, "Session 68 H").

    python benchmarks/trtllm_layer_calls.py [--max-clients 8] [--isl 1024]

TensorRT-LLM's PyTorch flow runs a context step eagerly (cuda_graph_config covers generation-only batches), so each
op its Python layers call costs the host one call (trtllm.yaml kernels.eager_launch_s: 21.5 us on the B200 hosts).
SOURCED lists what a DeepSeek MoE decoder layer calls from Python in a fresh context step of the rows' layout (TP,
no attention DP, the TRTLLM-Gen fused MoE: serving_reference.trtllm_moe_kernels), per GEMM format of its attention
and shared expert ("fp8": DeepSeek's block-scaled fp8; "bf16": the NVFP4 checkpoint's unquantized attention, as
whatif's model has it), with the kernels a call launches from C++ inside it. Sources (NVIDIA/TensorRT-LLM, the
stored revisions of the 1.1-1.2 era): modeling_deepseekv3.py (DeepseekV3Attention's one fused kv_a_proj_with_mqa
of q_lora + kv_lora + rope outputs; Deepseekv3MoE.forward: gate -> experts, shared_experts, shared + routed, the
all-reduce), modules/attention.py (MLA.forward_impl: the fused-a GEMM, q_a / kv_a RMSNorms run one after the other
outside graph capture (multi_stream_utils), q_b_proj, torch.concat of the latent cache; forward_context_default:
kv_b_proj, empty_like + one compiled copy of k_nope, one attention op applying RoPE and writing the cache inside),
modules/fused_moe/fused_moe_trtllm_gen.py (fp8_quantize_1x128 / fp4_quantize of the input, then one
*_block_scale_moe_runner call that routes, permutes, runs both GEMMs and finalizes), the decoder layer's two
AllReduce calls with the residual add and RMSNorm fused (or run after NCCL inside the same op above the custom
workspace: allreduceOp.cpp fallbackRunSubsequentOps). Quantized Linear: a quantize and a GEMM call, as whatif's
group-quant + GEMM pair. Views, splits and slices launch nothing and are left out.
The table prints, per row group of light_load_floor.py's slice (TensorRT-LLM, DeepSeek, <= N clients, one prompt
length): whatif's calls a MoE layer (its eager launch queue, eager_call_cost.host_calls), the sourced ones, the pass
change the difference makes at the engine's per-call cost, and the per-call cost the measured gap would need.
"""
from __future__ import annotations

import argparse
import statistics

import eager_call_cost as ecc
from step_ops import prefill_pass

from whatif.roofline import forward_pass
from whatif.roofline.ops import OpClass, graph_role, is_overlapped

# part -> (Python calls with fp8 attention/shared GEMMs, with bf16 ones, C++ kernels launched inside those calls: an
# estimate, not counted kernel by kernel at source)
SOURCED = {
    "MLA module": (13, 9, 3),     # fused-a (2|1), 2 norms, q_b (2|1), concat, kv_b (2|1), copy, attention op, o (2|1)
    "all-reduces + norms": (2, 2, 6),   # two AllReduce calls, residual add + RMSNorm fused or run inside
    "routed MoE": (3, 3, 6),      # router GEMM, input quantize, the runner (routing, permute, 2 GEMMs, act, finalize)
    "shared expert + add": (6, 4, 0),   # GatedMLP: gate_up (2|1), silu_and_mul, down (2|1); shared + routed add
}
# whatif's graph roles per part (the decoder layer's norms and all-reduces grouped as the engine fuses them).
ROLE_PARTS = {
    "MLA module": {"q_proj", "kv_a_proj", "kv_write", "kv_b_proj", "mla_attention", "o_proj"},
    "all-reduces + norms": {"input_norm", "attn_allreduce", "attn_residual", "post_attn_norm", "mlp_allreduce",
                            "mlp_residual"},
    "routed MoE": {"router", "expert_up", "expert_down"},
    "shared expert + add": {"shared_expert_up", "shared_expert_act", "shared_expert_down", "shared_expert_add"},
}


def sourced_calls(attention_fp8: bool) -> dict[str, int]:
    """{part: Python calls a MoE layer} at source for the layer's attention/shared GEMM format."""
    return {part: fp8 if attention_fp8 else bf16 for part, (fp8, bf16, _) in SOURCED.items()}


def whatif_calls(times, factors, moe_layers: int) -> dict[str, float]:
    """{part: host calls a MoE layer} whatif's eager queue charges, from the ops present in every MoE layer."""
    out = dict.fromkeys(ROLE_PARTS, 0.0)
    for t in times:
        if is_overlapped(t.op) or t.op.op_class == OpClass.TRANSFER or t.op.count < moe_layers:
            continue
        role = graph_role(t.op)
        part = next((p for p, roles in ROLE_PARTS.items() if role is not None and role.value in roles), None)
        if part is not None:
            out[part] += (factors or {}).get(id(t.op), 1.0)
    return out


def row_calls(row: dict) -> dict:
    """The row's main prefill pass: whatif's calls a MoE layer by part, the pass (ms), its calls and per-call cost."""
    queues: list = []
    with ecc.recorded_queues(queues):
        p = prefill_pass(row)
    times, launch_s, gap_s, factors, gaps = queues[0]
    moe_layers = max((t.op.count for t in times if graph_role(t.op) is not None
                      and graph_role(t.op).value == "router"), default=0)
    attention_fp8 = any(graph_role(t.op) is not None and graph_role(t.op).value == "q_proj"
                        and t.op.dtype in ("fp8", "fp4") for t in times)
    return {"whatif": whatif_calls(times, factors, moe_layers), "sourced": sourced_calls(attention_fp8),
            "moe_layers": moe_layers, "fp8": attention_fp8, "launch_us": launch_s * 1e6,
            "pass_ms": forward_pass.launch_queue_time(times, launch_s, gap_s, factors, gaps) * 1e3,
            "gpu_ms": p.gpu_s * 1e3, "calls": ecc.host_calls(times, factors)}


def group_rows(max_clients: int, isl: int) -> dict[tuple, list[dict]]:
    """TensorRT-LLM DeepSeek rows of the light-load slice, by (model, release, precision, TP, EP)."""
    out: dict[tuple, list[dict]] = {}
    for r in ecc.slice_rows(max_clients, isl):
        if r["engine"] == "trtllm" and "DeepSeek" in r["model"]:
            key = (r["model"].split("/")[-1], r["version"], r["gemm_quant"], r["tp"], r["ep"])
            out.setdefault(key, []).append(r)
    return out


def summary(rows: list[dict]) -> dict:
    """One group's figures: whatif vs sourced calls a MoE layer, the pass change at the engine's cost, the need."""
    import serving_reference as sr
    refs = {r["id"]: r for r in sr.load()}
    c = row_calls(refs[rows[0]["id"]])
    whatif_layer, sourced_layer = sum(c["whatif"].values()), sum(c["sourced"].values())
    extra_calls = (sourced_layer - whatif_layer) * c["moe_layers"]
    gap = statistics.median(r["gap"] for r in rows)
    sourced_pass_calls = c["calls"] + extra_calls
    return {**c, "rows": len(rows), "gap_ms": gap, "whatif_layer": whatif_layer, "sourced_layer": sourced_layer,
            "host_change_ms": extra_calls * c["launch_us"] * 1e-3,
            "cxx_ms": sum(s[2] for s in SOURCED.values()) * c["moe_layers"] * 4e-3,
            "need_us": (c["pass_ms"] + gap) / sourced_pass_calls * 1e3}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-clients", type=int, default=8, help="the slice's largest N (default 8)")
    ap.add_argument("--isl", type=int, default=1024, help="one prompt length (default 1024)")
    a = ap.parse_args(argv)
    print(f"{'group':52s} {'rows':>4s} {'gap':>6s} {'gpu':>6s} {'pass':>6s} {'whatif':>6s} {'source':>6s} "
          f"{'host+':>6s} {'c++':>5s} {'need':>6s}")
    print(f"{'':52s} {'':>4s} {'ms':>6s} {'ms':>6s} {'ms':>6s} {'/layer':>6s} {'/layer':>6s} {'ms':>6s} "
          f"{'ms':>5s} {'us':>6s}")
    for key, rows in sorted(group_rows(a.max_clients, a.isl).items()):
        s = summary(rows)
        name = " ".join(str(k) for k in key)
        print(f"{name:52s} {s['rows']:4d} {s['gap_ms']:6.0f} {s['gpu_ms']:6.1f} {s['pass_ms']:6.1f} "
              f"{s['whatif_layer']:6.1f} {s['sourced_layer']:6d} {s['host_change_ms']:+6.1f} {s['cxx_ms']:5.1f} "
              f"{s['need_us']:6.0f}")
        print("   by part (whatif / source): " + ", ".join(
            f"{p} {s['whatif'][p]:.0f}/{s['sourced'][p]}" for p in ROLE_PARTS))
    print("host+: the sourced calls' change to whatif's eager host time a pass at the engine's per-call cost;"
          " c++: the calls' inner launches at the GPU profile's 4 us (not charged by whatif);"
          " need: per-call host cost that puts the pass + median gap on the sourced calls, all serial on the host")


if __name__ == "__main__":
    main()
