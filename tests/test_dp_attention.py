"""Attention data parallelism (SGLang --enable-dp-attention): the flag's checks, its memory gain for MLA
(each GPU holds the latent of its own sequences only), the split of attention work, and the search's layouts."""
from __future__ import annotations

import pytest

import whatif
from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.graph import forward_ops
from whatif.specs.op_kinds import OpRole
from whatif.specs.models import load_model

V3 = dict(model="deepseek-v3", hardware="hgx-h200", tp=8, ep=8, weight_dtype="fp8", prompt=4096, output=1024)
ATTENTION_ROLES = {OpRole.ATTENTION, OpRole.MLA_ATTENTION, OpRole.Q_ABSORB, OpRole.V_ABSORB}


def test_refused_for_a_dense_model():
    with pytest.raises(WhatifError, match="--dp-attention: .*no experts"):
        whatif.estimate("llama-3.1-8b", "dgx-h100", tp=2, ep=2, dp_attention=True)


def test_refused_on_a_tp_group_of_one():
    with pytest.raises(WhatifError, match="--dp-attention: needs a TP group of more than one GPU"):
        whatif.estimate("mixtral-8x7b", "dgx-h100", tp=1, dp_attention=True)


def test_refused_when_not_a_bool():
    with pytest.raises(WhatifError, match="--dp-attention"):
        Parallelism(tp=8, ep=8, dp_attention="yes")


def test_raises_the_max_batch_of_an_mla_model():
    """Under TP every GPU holds the same latent of every sequence; under DP attention only its own."""
    tp = whatif.estimate(**V3, batch=1, with_max_batch=False)
    dp = whatif.estimate(**V3, batch=1, with_max_batch=False, dp_attention=True)
    # memory alone (the engine's max_num_seqs aside): whole attention weights cost room, the latent gains more
    tp_fit, dp_fit = tp.estimate.memory.max_sequences(5120), dp.estimate.memory.max_sequences(5120)
    assert dp.estimate.memory.weights_bytes > tp.estimate.memory.weights_bytes
    assert dp_fit > 2 * tp_fit
    assert dp.max_batch > tp.max_batch


@pytest.mark.parametrize("batch", [8, 64])
def test_per_gpu_attention_flops_equal_tp_at_the_same_batch(batch):
    """Same total attention work split by sequence instead of by head: per GPU, the same FLOPs."""
    model, prec = load_model("deepseek-v3"), Precision(weight="fp8")
    fb = ForwardBatch.decode(batch, 4096)

    def attention_flops(par):
        return sum(op.flops * op.count for op in forward_ops(model, fb, par, prec) if op.role in ATTENTION_ROLES)

    tp = attention_flops(Parallelism(tp=8, ep=8))
    dp = attention_flops(Parallelism(tp=8, ep=8, dp_attention=True))
    assert tp > 0 and dp == pytest.approx(tp, rel=1e-12)


def test_no_tp_allreduce_and_local_dispatch():
    model, prec = load_model("deepseek-v3"), Precision(weight="fp8")
    fb = ForwardBatch.decode(64, 4096)
    tp = forward_ops(model, fb, Parallelism(tp=8, ep=8), prec)
    dp = forward_ops(model, fb, Parallelism(tp=8, ep=8, dp_attention=True), prec)
    assert any(op.role == OpRole.ATTN_ALLREDUCE for op in tp)
    assert not any(op.role in (OpRole.ATTN_ALLREDUCE, OpRole.MLP_ALLREDUCE) for op in dp)

    def dispatch_bytes(ops):
        return sum(op.bytes["link"] for op in ops if op.role == OpRole.MOE_DISPATCH)

    assert dispatch_bytes(tp) == 0   # TP attention: every GPU holds every token, no all-to-all
    assert dispatch_bytes(dp) == pytest.approx(64 / 8 * 8 * 7168 * prec.act_bytes)   # its own 8 tokens x top-8


def test_batch_one_decode_is_not_faster():
    """One sequence: one GPU runs all of its attention with whole weights."""
    tp = whatif.estimate(**V3, batch=1, with_max_batch=False)
    dp = whatif.estimate(**V3, batch=1, with_max_batch=False, dp_attention=True)
    assert dp.tpot_s >= tp.tpot_s


def test_search_enumerates_dp_attention_for_moe_only():
    kw = dict(gpus=8, prompt=1000, output=100, batches=(1, 8), modes=("aggregated",), pp=(1,))
    moe = whatif.search("mixtral-8x7b", "dgx-h100", tp=(2, 4), engine="trtllm", **kw)
    dp = [c for c in moe.configs if c.replica.dp_attention]
    assert dp and all(c.replica.tp > 1 and c.replica.tp % c.replica.ep == 0 for c in dp)
    assert {c.replica.ep for c in dp if c.replica.tp == 4} == {1, 2, 4}   # experts split ep x moe_tp = tp
    assert any(c.feasible for c in dp)
    assert all("dp-attn" in c.label() and c.row()["dp_attention"] for c in dp)
    dense = whatif.search("llama-3.1-8b", "dgx-h100", tp=(1, 2), **kw)
    assert not any(c.replica.dp_attention for c in dense.configs)


def test_refused_with_techniques():
    """Techniques price their ops on the group's batch; until they see one GPU's share, the pair is refused."""
    with pytest.raises(WhatifError, match="--dp-attention: not modelled together with --technique"):
        whatif.estimate(**V3, dp_attention=True, techniques="kivi")


def test_prefill_chunk_is_each_ranks_own_where_the_engine_says_so():
    """TensorRT-LLM's max_num_tokens is each attention-DP rank's own: one 8k prompt on 8 ranks is one pass of
    8192 tokens on its rank. SGLang divides --chunked-prefill-size by the DP size: the same prompt runs in 8
    passes of 1024 tokens."""
    from whatif.roofline.estimate import group_prefill_passes
    par = Parallelism(tp=8, ep=8, dp_attention=True)
    own = group_prefill_passes(par, 1, 8192, 8192, group_limits=False)
    split = group_prefill_passes(par, 1, 8192, 8192, group_limits=True)
    assert [(fb.split(8).tokens, n) for fb, n in own] == [(8192, 1)]
    assert sum(n for _, n in split) == 8 and {fb.split(8).tokens for fb, _ in split} == {1024}
    one = dict(V3, batch=1, prompt=8192, output=2, with_max_batch=False, dp_attention=True)
    trt = whatif.estimate(**one, kernel_engine="trtllm")
    sgl = whatif.estimate(**one, kernel_engine="sglang")
    assert "8 prefill passes" not in trt.text() and "8 prefill passes" in sgl.text()


def test_one_8k_prompt_under_trtllm_attention_dp_is_one_priced_pass():
    """Pin (B200, DeepSeek-R1 fp8-block, TensorRT-LLM, TP8 EP8 attention-DP 8, one 8192-token prompt): one pass on
    its rank, MLA context attention by the measured kernel's fit, the MoE's tokens all-gathered. 293 ms at this
    commit (499 ms before: 8 passes of 1024 tokens, the per-class MLA price, an all-to-all); a deployment of that
    prefill layout measured a TTFT of 372 ms at one client (aiconfigurator silicon set,
    dsr1_b200_trtllm_fp8_disagg_8192x1024_c1_cfg556: prefill, KV hand-off and the first decode step): a figure to
    compare, not fitted. 279 ms once TensorRT-LLM's quantized B200 experts went back to the per-class model (its
    two-shape MXFP4 x MXFP8 table is not fitted: validate/moe_fit.py FITS); 307 ms once block-fp8 experts priced
    by the dense GEMM fit pay their serial K-block promotion (roofline/block_promotion.py, session 60)."""
    r = whatif.estimate(model="deepseek-ai/DeepSeek-R1", hardware="dgx-b200", tp=8, ep=8, attention_dp=8,
                        quantization="fp8-block", batch=1, prompt=8192, output=2, kernel_engine="trtllm",
                        with_max_batch=False)
    assert r.ttft_s == pytest.approx(0.307, rel=0.03)


@pytest.mark.parametrize("engine,hardware,ep,gathered", [
    ("trtllm", "dgx-b200", 8, True),        # ep <= top-k 8 (and no MNNVL): all-gather / reduce-scatter
    ("trtllm", "gb200-nvl72", 16, False),   # ep 16 > top-k over multi-node NVLink: TensorRT-LLM's MNNVL all-to-all
    ("sglang", "dgx-b200", 8, False),       # SGLang's DeepEP-style dispatch / combine
])
def test_attention_dp_moe_comm_follows_the_engine(engine, hardware, ep, gathered):
    """TensorRT-LLM's fused MoE enables an all-to-all under attention DP only with more EP ranks than top-k over
    MNNVL (or DeepEP by env); otherwise it all-gathers every rank's tokens and reduce-scatters the outputs
    (engine_profiles/trtllm.yaml kernels.dp_moe_alltoall)."""
    from whatif.roofline.forward_pass import time_pass
    from whatif.inputs import scenario_from_inputs
    given = dict(model="deepseek-v3", hardware=hardware, tp=ep, ep=ep, dp_attention=True, kernel_engine=engine,
                 batch=ep, prompt=1024, output=2)
    setup = scenario_from_inputs(None, given, weight_dtype="fp8").resolved().pass_setup()
    names = {t.op.name for t in time_pass(setup, ForwardBatch.prefill(1, 1024, 0).times(ep), False).op_times}
    assert ({"moe_gather", "moe_scatter"} <= names) == gathered
    assert ({"moe_dispatch", "moe_combine"} <= names) == (not gathered)
