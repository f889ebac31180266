"""vLLM runs MLA's absorbed bmms (q_absorb: q_nope x W_UK_T, v_absorb: latent x W_UV) as a 16-bit torch.bmm on
weights it dequantized at load, whatever kv_b_proj stores (engine_profiles/vllm.yaml kernels.mla_absorb_bf16, read
at v0.10.2-v0.19.0): the ops run bf16 with no block quantize, priced by vLLM's mla_bmm fit (its torch.bmm table);
SGLang and TensorRT-LLM keep the graph's ops."""
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from whatif.api import estimate
from whatif.roofline.config import ForwardBatch, Precision
from whatif.roofline.context import pass_context
from whatif.roofline.engine_kernels import engine_ops
from whatif.roofline.engines import engine_spec
from whatif.roofline.graph import pass_ops
from whatif.roofline.kernel_timing import op_seconds
from whatif.roofline.ops import gemm
from whatif.scenario import Scenario
from whatif.specs.op_kinds import OpRole
from whatif.validate.corpus import corpus_gpu

ABSORBS = {OpRole.Q_ABSORB, OpRole.V_ABSORB}
MODERN = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator" / "modern"


def absorb_ops(engine: str, batch: ForwardBatch):
    sc = Scenario(model="deepseek-v3", hardware="dgx-b200", gpus=8, precision=Precision.of_scheme("fp8-block"))
    model, _, par, _ = sc.resolve()
    ops = engine_ops(pass_ops(pass_context(model, batch, par, sc.precision, 0)), engine_spec(engine), model)
    return [op for op in ops if op.role in ABSORBS or op.part_of in ABSORBS]


@pytest.mark.parametrize("batch", [ForwardBatch.decode(16, 2000), ForwardBatch.prefill(1, 2048)])
def test_vllm_runs_the_absorbs_bf16_on_every_release(batch):
    if not batch.is_decode:   # a dense model's prefill expands its rows; DSA's absorbs every row (not built here)
        assert absorb_ops("vllm", batch) == []
        return
    for name in ("vllm", "vllm-0.18"):
        ops = absorb_ops(name, batch)
        assert ops and {op.role for op in ops} == ABSORBS, name   # no block quantize (part_of an absorb) before them
        assert all(op.dtype == "bf16" and op.bmm_fit and not op.block_scaled for op in ops), name
    for name in ("sglang", "trtllm"):   # their own sources not read for this: the graph's fp8 block GEMMs stay
        ops = absorb_ops(name, batch)
        assert {op.dtype for op in ops if op.role in ABSORBS} == {"fp8"}, name
        assert any(op.part_of in ABSORBS for op in ops), name


@pytest.mark.skipif(not MODERN.is_dir(), reason="needs ../shared/reference/aiconfigurator/modern")
@pytest.mark.parametrize("gpu", ["b200_sxm", "h100_sxm"])
def test_the_absorb_reads_vllms_own_bmm_table(gpu):
    """The priced op at every shape of vLLM's torch.bmm table (pre: 128 -> 512, post: 512 -> 128 per head; 636 rows
    a GPU) within 10% MAPE (in-sample 7.8% B200, 7.7% H100; the bf16 dense GEMM fit on the same op: 33.2 / 20.5%)."""
    table = pd.read_parquet(MODERN / gpu / "vllm" / "mla_bmm__mla_bmm_perf.parquet")
    errors = []
    for r in table.itertuples():
        pre = r.op_name == "mla_gen_pre"
        k, n = (128, 512) if pre else (512, 128)
        op = gemm("absorb", r.num_tokens * r.num_heads, n, k, 2.0, 2.0, "bf16",
                  role=OpRole.Q_ABSORB if pre else OpRole.V_ABSORB)
        op = replace(op, bmm_fit=True, shape=replace(op.shape, bmm_heads=float(r.num_heads)))
        errors.append(abs(op_seconds(op, corpus_gpu(gpu), "vllm")[0] / (r.latency / 1e3) - 1))
    assert sum(errors) / len(errors) < 0.10


def test_a_per_tensor_fp8_prefill_no_longer_prices_the_absorbs_at_the_fp8_gemm_fit():
    """GLM-5 (DSA: every prefill row absorbed) at fp8 on 8 B200, 8,192 tokens: the absorbs were 12% of the pass each
    by the per-tensor fp8 GEMM fit far past its table; as vLLM's bf16 bmm they are under 1% (docs/accuracy.md
    session 73 R)."""
    est = estimate("zhipuai/GLM-5", "dgx-b200", gpus=8, tp=8, batch=1, prompt=8192, output=4, kernel_engine="vllm",
                   with_max_batch=False, quantization="fp8")
    rows = [line.split() for line in est.text(show_ops=True).split("\ndecode step")[0].splitlines()
            if line.split()[:1] in (["q_absorb"], ["v_absorb"])]
    assert len(rows) == 2
    assert all(float(next(t for t in r if t.endswith("%")).rstrip("%")) < 1.0 for r in rows)
