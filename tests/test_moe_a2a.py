"""Parallelism.moe_a2a: what carries attention-DP MoE dispatch / combine. "nccl" (default: an NCCL all-to-all),
"deepep" (DeepEP's kernels, by their fit on aiconfigurator's measured tables: normal for a batch with a prefill,
low-latency for a decode batch, as SGLang's --deepep-mode auto) or "gather" (SGLang without an a2a backend)."""
from __future__ import annotations

import pytest

import whatif
from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.graph import forward_ops
from whatif.roofline.kernel_models import deepep
from whatif.roofline.timing import time_op
from whatif.specs.hardware import load_component
from whatif.specs.models import load_model

V3, FP8 = load_model("deepseek-v3"), Precision(weight="fp8")
B200, NVLINK5 = load_component("b200", "gpu"), load_component("nvlink-5", "link")


def moe_comm(par: Parallelism, batch: ForwardBatch):
    return {op.name: op for op in forward_ops(V3, batch, par, FP8) if op.name.startswith("moe_")}


def test_default_is_the_nccl_all_to_all():
    ops = moe_comm(Parallelism(tp=8, ep=8, attention_dp=8), ForwardBatch.prefill(8, 1024, 0))
    assert ops["moe_dispatch"].shape.collective == "all_to_all" and not hasattr(ops["moe_dispatch"].shape, "mode")


@pytest.mark.parametrize("batch, mode", [(ForwardBatch.prefill(8, 1024, 0), "normal"),
                                         (ForwardBatch.decode(64, 2048), "ll")])
def test_deepep_prices_prefill_normal_and_decode_low_latency(batch, mode):
    """Each rank routes its own tokens (1/8 of the group's here); the op's time is the DeepEP fit's."""
    ops = moe_comm(Parallelism(tp=8, ep=8, attention_dp=8, moe_a2a="deepep"), batch)
    for phase, name in (("dispatch", "moe_dispatch"), ("combine", "moe_combine")):
        s = ops[name].shape
        assert (s.mode, s.phase, s.tokens, s.gpus) == (mode, phase, batch.tokens / 8, 8)
        price = deepep.deepep_dispatch_seconds if phase == "dispatch" else deepep.deepep_combine_seconds
        want = price(int(s.tokens), V3.hidden_size, 8, 256, B200, NVLINK5.bandwidth.value, low_latency=mode == "ll")
        assert time_op(ops[name], B200, None, NVLINK5).time_s == pytest.approx(want)


def test_deepep_normal_beats_nccl_on_a_long_prefill_and_gather_gathers():
    """A long prefill's dispatch by DeepEP's normal kernels (SM-copy bound, fp8) takes less than NCCL's bf16
    all-to-all; "gather" builds the all-gather / reduce-scatter of split experts instead."""
    r = {a2a: whatif.estimate("deepseek-v3", "dgx-b200", tp=8, ep=8, dp_attention=True, batch=16, prompt=8192,
                              output=2, weight_dtype="fp8", kernel_engine="sglang", moe_a2a=a2a,
                              with_max_batch=False) for a2a in ("nccl", "deepep")}
    assert r["deepep"].ttft_s < r["nccl"].ttft_s
    ops = moe_comm(Parallelism(tp=8, ep=8, attention_dp=8, moe_a2a="gather"), ForwardBatch.decode(64, 2048))
    assert {"moe_gather", "moe_scatter"} <= set(ops) and "moe_dispatch" not in ops


def test_a_bad_value_names_the_field_and_the_valid_ones():
    with pytest.raises(WhatifError, match=r"--moe-a2a: 'mori'; valid: nccl, deepep, gather"):
        Parallelism(tp=8, ep=8, attention_dp=8, moe_a2a="mori")


def test_the_flag_takes_sglangs_spelling(capsys):
    import json
    from whatif.cli import main
    args = ["estimate", "--model", "deepseek-v3", "--hardware", "dgx-b200", "--tp", "8", "--ep", "8",
            "--dp-attention", "8", "--weight-dtype", "fp8", "--batch", "8", "--prompt", "8192", "--output", "2",
            "--engine", "sglang", "--no-ops", "--json"]
    ttft = {}
    for a2a in ("nccl", "deepep"):
        main(args + ["--moe-a2a-backend", a2a])
        ttft[a2a] = json.loads(capsys.readouterr().out)["ttft_s"]
    assert ttft["deepep"] < ttft["nccl"]
