"""roofline/module_fits.py: a decode pass's MLA module priced by the module fit, its kernels scaled together."""
import pytest

from whatif.api import estimate
from whatif.roofline.kernel_models.mla_modules import MlaDims, mla_module_seconds
from whatif.roofline.module_fits import MLA_MODULE_ROLES
from whatif.roofline.ops import graph_role
from whatif.specs.hardware import load_component

DS = dict(model="deepseek-ai/DeepSeek-R1", hardware="dgx-b200", kernel_engine="trtllm", tp=8, batch=4, prompt=1024,
          output=1024, quantization="nvfp4", kv_dtype="fp8", with_max_batch=False)


def _module(ops) -> dict[int, float]:
    """One layer's module seconds per layer count (the dense and the MoE layers carry their own ops)."""
    out: dict[int, float] = {}
    for t in ops:
        if graph_role(t.op) in MLA_MODULE_ROLES:
            out[t.op.count] = out.get(t.op.count, 0.0) + t.time_s
    return out


def test_a_decode_pass_prices_its_mla_module_by_the_module_fit():
    e = estimate(**DS)
    ctx = DS["prompt"] + DS["output"] // 2    # the estimate's mid-generation decode step
    want = mla_module_seconds("decode", 4, 1, ctx, 128 // 8, MlaDims(7168, 1536, 512, 128, 64, 128),
                              load_component("b200", "gpu"), "trtllm", "nvfp4", "fp8")
    assert set(_module(e.decode.op_times)) == {3, 58}
    for seconds in _module(e.decode.op_times).values():
        assert seconds == pytest.approx(want, rel=1e-9)
    kernels = estimate(**DS, module_fits=False)
    assert all(abs(s / want - 1) > 0.05 for s in _module(kernels.decode.op_times).values())   # it did change
    rest = lambda est: [t.time_s for t in est.decode.op_times if graph_role(t.op) not in MLA_MODULE_ROLES]  # noqa
    assert rest(e) == rest(kernels)                           # nothing outside the module moves
    assert "module fit" in next(t.op.formula for t in e.decode.op_times if t.op.name == "q_a_proj")


def test_a_hopper_decode_pass_takes_the_fit_of_the_kernel_its_engine_runs_there():
    """vLLM on H200 (unmeasured; Hopper): FLASHMLA with an fp8 KV cache, FLASH_ATTN_MLA with bf16, each its fit."""
    kw = dict(DS, hardware="h200-sxm", kernel_engine="vllm", quantization="fp8-block")
    ctx, dims, h200 = DS["prompt"] + DS["output"] // 2, MlaDims(7168, 1536, 512, 128, 64, 128), \
        load_component("h200-sxm", "gpu")
    for kv, kernel in (("fp8", "flashmla"), ("bf16", "fa3")):
        got = _module(estimate(**dict(kw, kv_dtype=kv)).decode.op_times)
        want = mla_module_seconds("decode", 4, 1, ctx, 16, dims, h200, "vllm", "fp8_block",
                                  "fp8" if kv == "fp8" else "bfloat16")
        assert all(s == pytest.approx(want, rel=1e-9) for s in got.values()), kernel
    from whatif.roofline.kernel_models.fitted_roofline import family_params
    assert family_params("mla_module_decode_flashmla", "vllm", "hopper") != \
        family_params("mla_module_decode_fa3", "vllm", "hopper")


def test_prefill_and_models_without_mla_keep_their_kernels():
    e = estimate(**DS)
    kernels = estimate(**DS, module_fits=False)
    for (p, _), (k, _) in zip(e.prefill, kernels.prefill):
        assert [t.time_s for t in p.op_times] == [t.time_s for t in k.op_times]
    llama = dict(model="meta-llama/Llama-3.1-8B-Instruct", hardware="b200", kernel_engine="trtllm", batch=4,
                 prompt=1024, output=64, with_max_batch=False)
    assert estimate(**llama).tpot_s == pytest.approx(_kernels_tpot(llama), rel=1e-12)


def _kernels_tpot(kw):
    return estimate(**kw, module_fits=False).tpot_s


QWEN = dict(model="Qwen/Qwen3.5-397B-A17B", hardware="dgx-b200", kernel_engine="sglang", tp=4, batch=64, prompt=1024,
            output=64, with_max_batch=False)


def test_a_decode_pass_prices_the_gated_deltanet_recurrence_by_its_kernel_fit():
    from whatif.roofline.kernel_models.linear_attention import gdn_seconds
    e, kernels = estimate(**QWEN), estimate(**QWEN, module_fits=False)
    op = next(t for t in e.decode.op_times if t.op.name == "gated_deltanet")
    assert op.time_s == pytest.approx(gdn_seconds("recurrent_decode", 64, 1, 16 / 4, 64 / 4,
                                                  load_component("b200", "gpu"), "sglang"), rel=1e-9)
    assert "GDN kernel fit" in op.op.formula
    mine = next(t for t in kernels.decode.op_times if t.op.name == "gated_deltanet")
    assert abs(op.time_s / mine.time_s - 1) > 0.02                       # it did change
    conv = next(t for t in e.decode.op_times if t.op.name == "short_conv")
    assert conv.time_s == pytest.approx(gdn_seconds("conv1d_decode", 64, 1, 16 / 4, 64 / 4,
                                                    load_component("b200", "gpu"), "sglang"), rel=1e-9)
    assert "GDN kernel fit" in conv.op.formula


def test_a_prefill_pass_prices_the_gated_deltanet_chunked_kernel_by_its_fit():
    """The chunked kernel's serial state pass and its launches: the forward pass's one recurrence op priced a
    1k-token prefill of 16 value heads at a tenth of the table's time; the fit replaces it, the rest stays."""
    from whatif.roofline.kernel_models.linear_attention import gdn_seconds
    e, kernels = estimate(**QWEN), estimate(**QWEN, module_fits=False)
    (p, _), (k, _) = e.prefill[0], kernels.prefill[0]
    b200, seqs = load_component("b200", "gpu"), p.batch.sequences
    assert p.batch.groups == ((1024, 0, seqs),)   # sequences of 1,024 tokens, 4 key and 16 value heads a GPU
    for t, mine in zip(p.op_times, k.op_times):
        if t.op.name == "gated_deltanet":
            assert t.time_s == pytest.approx(gdn_seconds("chunk_prefill", seqs, 1024, 4, 16, b200, "sglang"), rel=1e-9)
            assert t.time_s > 3 * mine.time_s and "GDN kernel fit" in t.op.formula
        elif t.op.name == "short_conv":
            assert t.time_s == pytest.approx(gdn_seconds("conv1d_prefill", seqs, 1024, 4, 16, b200, "sglang"),
                                             rel=1e-9)
        else:
            assert t.time_s == mine.time_s


V32 = dict(model="deepseek-ai/DeepSeek-V3.2", hardware="dgx-h100", tp=8, batch=8, prompt=4096, output=64,
           with_max_batch=False, quantization="fp8-block")


def test_dsa_decode_takes_its_module_fit_on_vllm_and_trtllm_only():
    from whatif.roofline.module_fits import DSA_MODULE_ROLES
    vllm = estimate(**V32, kernel_engine="vllm")
    kernels = estimate(**V32, kernel_engine="vllm", module_fits=False)
    dsa = lambda est: sum(t.time_s for t in est.decode.op_times if graph_role(t.op) in DSA_MODULE_ROLES)  # noqa
    assert abs(dsa(vllm) / dsa(kernels) - 1) > 0.05
    assert any(graph_role(t.op).value == "sparse_indexer" and "module fit" in t.op.formula
               for t in vllm.decode.op_times)
    trt = dict(V32, kernel_engine="trtllm")   # its Hopper kernel walks every top-k slot: the fit knows, kernels not
    assert estimate(**trt).tpot_s > 1.05 * estimate(**trt, module_fits=False).tpot_s
    sglang = dict(V32, kernel_engine="sglang")   # SGLang's kernels summed beat its DSA module fit: unchanged
    assert estimate(**sglang).tpot_s == pytest.approx(estimate(**sglang, module_fits=False).tpot_s, rel=1e-12)


def test_a_checkpoint_with_its_o_proj_apart_prices_each_projection_at_its_own_format():
    """nvidia/DeepSeek-R1-0528-FP4-V2: q_a/q_b/kv_a/kv_b 16-bit, o_proj NVFP4; the module fit reads o_proj at NVFP4
    (bytes, peak, one quantize launch), the rest at bf16, where it once priced the whole module at bf16."""
    kw = {k: v for k, v in DS.items() if k != "quantization"} | {"model": "nvidia/DeepSeek-R1-0528-FP4-V2"}
    ctx, dims, b200 = DS["prompt"] + DS["output"] // 2, MlaDims(7168, 1536, 512, 128, 64, 128), \
        load_component("b200", "gpu")
    args = ("decode", 4, 1, ctx, 16, dims, b200, "trtllm", "bfloat16", "fp8")
    want = mla_module_seconds(*args, out_format="nvfp4")
    assert want != pytest.approx(mla_module_seconds(*args), rel=1e-3)           # o_proj's format counts
    assert mla_module_seconds(*args, out_format="bfloat16") == mla_module_seconds(*args)   # one format: as before
    got = _module(estimate(**kw).decode.op_times)
    assert got and all(s == pytest.approx(want, rel=1e-9) for s in got.values())


def test_a_module_priced_whole_pays_one_inter_kernel_gap_a_layer_not_one_a_kernel():
    """Its fit's time already holds the gaps between its kernels (aiconfigurator timed the module as one CUDA graph):
    the pass charges the module one gap a layer, every other kernel one gap as before."""
    from whatif.roofline.ops import OpClass, is_overlapped
    from whatif.roofline.shared_expert_stream import hidden_shared_s
    gap = 1e-6

    def gaps(est):   # (TensorRT-LLM's shared-expert stream hides part of the serial sum: added back)
        p = est.decode
        hidden = hidden_shared_s(p.op_times, gap)
        return (p.gpu_s + hidden - sum(t.total_s for t in p.op_times if not is_overlapped(t.op))) / gap

    e, kernels = estimate(**DS), estimate(**DS, module_fits=False)
    mine = [t for t in e.decode.op_times if graph_role(t.op) in MLA_MODULE_ROLES]
    layers = sum(t.op.count for t in mine if t.op.name == "attention_mla")
    others = sum(t.op.count for t in e.decode.op_times
                 if graph_role(t.op) not in MLA_MODULE_ROLES and t.op.op_class != OpClass.TRANSFER)
    assert layers == 61 and len(mine) > 2 * 2
    assert gaps(e) == pytest.approx(others + layers, abs=1e-3)
    assert gaps(kernels) == pytest.approx(kernels.decode.kernels, abs=1e-3)   # per-kernel pricing: one gap each
    assert e.decode.kernels == kernels.decode.kernels                         # the kernels are all still there


def test_glm52_index_share_layers_take_the_dsa_module_fit_less_its_indexer():
    """GLM-5.2: the 21 layers that run their indexer are the DSA module fit's module; the 57 that reuse its top-k run
    the fit less the indexer's kernels (assumed), never the whole fit, never less than their own kernels summed."""
    from whatif.roofline.module_fits import DSA_MODULE_ROLES
    kw = dict(model="glm-5.2", hardware="dgx-b200", tp=8, batch=8, prompt=4096, output=64, with_max_batch=False,
              quantization="fp8-block", kernel_engine="vllm")
    fitted, kernels = estimate(**kw), estimate(**kw, module_fits=False)

    def modules(est):
        out: dict[int, list] = {}
        for t in est.decode.op_times:
            if graph_role(t.op) in DSA_MODULE_ROLES:
                out.setdefault(t.op.count, []).append(t)
        return out
    got, summed = modules(fitted), modules(kernels)
    assert set(got) == {3, 18, 57}          # indexer layers dense (0-2) and MoE (18), shared MoE layers (57)
    fit = sum(t.time_s for t in got[3])
    assert sum(t.time_s for t in got[18]) == pytest.approx(fit, rel=1e-9)
    indexer = sum(t.time_s for t in summed[3] if t.op.name.startswith("indexer_"))   # as whatif's kernels price it
    shared = sum(t.time_s for t in got[57])
    assert not any(t.op.name.startswith("indexer_") for t in got[57])
    assert shared == pytest.approx(max(fit - indexer, sum(t.time_s for t in summed[57])), rel=1e-9)
    assert shared < fit
    glm5 = estimate(**dict(kw, model="glm-5"))
    assert fitted.tpot_s < glm5.tpot_s


def test_kimi_delta_attention_is_not_priced_by_the_gdn_fits():
    """The gdn_perf tables time FLA's GDN kernels, not chunk_kda / fused_recurrent_kda: KDA keeps its kernels."""
    kw = dict(model="kimi-linear-48b-a3b", hardware="dgx-b200", kernel_engine="sglang", tp=2, batch=64, prompt=1024,
              output=64, with_max_batch=False)
    e, kernels = estimate(**kw), estimate(**kw, module_fits=False)
    op = next(t for t in e.decode.op_times if t.op.name == "kimi_delta_attention")
    mine = next(t for t in kernels.decode.op_times if t.op.name == "kimi_delta_attention")
    assert op.time_s == mine.time_s and "GDN kernel fit" not in op.op.formula


def test_the_mla_module_fit_leaves_kimi_linears_kda_layers_alone():
    """Kimi-Linear's 20 KDA layers sit between 7 MLA layers: their output projection has o_proj's role but is no part
    of an MLA module, so the MLA decode fit scales only the MLA layers' kernels (it once scaled the KDA out-projection
    x14.8 to a whole MLA module's time)."""
    kw = dict(model="kimi-linear-48b-a3b", hardware="h100-sxm", tp=2, batch=8, prompt=1024, output=64,
              with_max_batch=False)
    e, kernels = estimate(**kw), estimate(**kw, module_fits=False)
    def op(est, name):
        return next(t for t in est.decode.op_times if t.op.name == name)
    assert op(e, "mixer_out_proj").time_s == op(kernels, "mixer_out_proj").time_s
    assert "module fit" in op(e, "o_proj").op.formula and op(e, "o_proj").time_s != op(kernels, "o_proj").time_s
