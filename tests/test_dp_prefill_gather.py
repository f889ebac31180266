"""EngineSpec.dp_prefill_gather: how an attention-DP MoE that gathers every rank's tokens does it in a step with a
prefill. SGLang pads such a step to the sum of the ranks' tokens (DpPaddingMode SUM_LEN) and gathers and combines
by all-reduces (engine_profiles/sglang.yaml kernels.dp_prefill_gather); decode steps and other engines keep the
all-gather / reduce-scatter."""
from __future__ import annotations

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.graph import forward_ops
from whatif.roofline.moe import gather_collective
from whatif.specs.engines import load_engine
from whatif.specs.kernel_options import kernel_options
from whatif.specs.models import load_model

V3, FP8 = load_model("deepseek-v3"), Precision(weight="fp8")


def collectives(par: Parallelism, batch: ForwardBatch) -> dict[str, str]:
    return {op.name: op.shape.collective for op in forward_ops(V3, batch, par, FP8)
            if op.name in ("moe_gather", "moe_scatter")}


@pytest.mark.parametrize("flag, decode, want", [(True, False, "all_reduce"), (True, True, "all_gather"),
                                                (False, False, "all_gather")])
def test_the_collective_follows_the_flag_and_the_step(flag, decode, want):
    par = Parallelism(tp=8, attention_dp=8, prefill_gather_all_reduce=flag)
    assert gather_collective(par, decode, "all_gather") == want


def test_a_prefill_step_gathers_and_combines_by_all_reduce_and_a_decode_step_does_not():
    par = Parallelism(tp=8, attention_dp=8, prefill_gather_all_reduce=True)   # moe_tp 8: the experts gather
    assert collectives(par, ForwardBatch.prefill(8, 1024, 0)) == {"moe_gather": "all_reduce",
                                                                  "moe_scatter": "all_reduce"}
    assert collectives(par, ForwardBatch.decode(64, 2048)) == {"moe_gather": "all_gather",
                                                               "moe_scatter": "reduce_scatter"}
    plain = Parallelism(tp=8, attention_dp=8)
    assert collectives(plain, ForwardBatch.prefill(8, 1024, 0)) == {"moe_gather": "all_gather",
                                                                    "moe_scatter": "reduce_scatter"}


def test_only_sglang_sets_it():
    assert load_engine("sglang").dp_prefill_gather == "all_reduce"
    assert load_engine("trtllm").dp_prefill_gather == load_engine("vllm").dp_prefill_gather == "all_gather"


def test_sglangs_attention_dp_prefill_pass_pays_the_all_reduces():
    """The engine's setting reaches the pass (forward_pass.moe_comm_parallel): an SGLang ADP8 MoE-TP8 prefill of 8
    prompts prices its gather and combine as all-reduces, which take longer than the all-gather / reduce-scatter."""
    from whatif.inputs import scenario_from_inputs
    from whatif.roofline.forward_pass import time_pass
    given = dict(model="deepseek-v3", hardware="dgx-b200", tp=8, ep=1, dp_attention=True, kernel_engine="sglang",
                 batch=8, prompt=4096, output=2)
    setup = scenario_from_inputs(None, given, weight_dtype="fp8").resolved().pass_setup()
    ops = {t.op.name: t for t in time_pass(setup, ForwardBatch.prefill(1, 4096, 0).times(8), False).op_times}
    assert ops["moe_gather"].op.shape.collective == ops["moe_scatter"].op.shape.collective == "all_reduce"


def test_a_bad_value_names_the_field_and_the_valid_ones():
    with pytest.raises(WhatifError, match=r"kernels\.dp_prefill_gather.*all_gather, all_reduce"):
        kernel_options({"dp_prefill_gather": "ring"}, "x.kernels", lambda key: "ring")
