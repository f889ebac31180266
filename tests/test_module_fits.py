"""roofline/module_fits.py: a decode pass's MLA module priced by the module fit, its kernels scaled together."""
import pytest

from whatif.api import estimate
from whatif.roofline.kernel_models.mla_modules import MlaDims, mla_module_seconds
from whatif.roofline.module_fits import MLA_MODULE_ROLES, kernels_only
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
    with kernels_only():
        kernels = estimate(**DS)
    assert all(abs(s / want - 1) > 0.05 for s in _module(kernels.decode.op_times).values())   # it did change
    rest = lambda est: [t.time_s for t in est.decode.op_times if graph_role(t.op) not in MLA_MODULE_ROLES]  # noqa
    assert rest(e) == rest(kernels)                           # nothing outside the module moves
    assert "module fit" in next(t.op.formula for t in e.decode.op_times if t.op.name == "q_a_proj")


def test_prefill_and_models_without_mla_keep_their_kernels():
    e = estimate(**DS)
    with kernels_only():
        kernels = estimate(**DS)
    for (p, _), (k, _) in zip(e.prefill, kernels.prefill):
        assert [t.time_s for t in p.op_times] == [t.time_s for t in k.op_times]
    llama = dict(model="meta-llama/Llama-3.1-8B-Instruct", hardware="b200", kernel_engine="trtllm", batch=4,
                 prompt=1024, output=64, with_max_batch=False)
    assert estimate(**llama).tpot_s == pytest.approx(_kernels_tpot(llama), rel=1e-12)


def _kernels_tpot(kw):
    with kernels_only():
        return estimate(**kw).tpot_s
