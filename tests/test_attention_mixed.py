"""A pass mixing prompts with decoding sequences (chunked prefill) runs a prefill and a decode attention
kernel; whatif times the mixed op as their sum (roofline/attention.py mixed_op)."""
from dataclasses import replace

from whatif.roofline.attention import attention_op
from whatif.roofline.config import Precision
from whatif.roofline.engine_kernels import engine_ops
from whatif.roofline.engines import engine_spec
from whatif.roofline.ops import OpClass, OpRole
from whatif.roofline.timing import time_op
from whatif.scenario import Scenario

DECODES, PROMPT = (1, 1500, 545), (1000, 0, 1)


def op_of(groups, kv_heads=8):
    return attention_op(groups, heads=32, kv_heads=kv_heads, d_qk=128, d_v=128, act_bytes=1.0, kv_bytes=1.0,
                        kv_width=2 * kv_heads * 128, count=32, dtype="fp8", role=OpRole.ATTENTION)


def test_a_mixed_op_is_its_two_kernels_summed():
    fp8 = Precision(weight="fp8", activation="fp8", kv="fp8")
    model, system, par, eff = Scenario(kernel_engine="trtllm", precision=fp8).resolve()
    mixed, pre, dec = op_of((DECODES, PROMPT)), op_of((PROMPT,)), op_of((DECODES,))
    assert [p.op_class for p in mixed.shape.parts] == [OpClass.ATTENTION_PREFILL, OpClass.ATTENTION_DECODE]
    assert mixed.flops == pre.flops + dec.flops and mixed.hbm_bytes == pre.hbm_bytes + dec.hbm_bytes
    gpu = system.gpu
    t_mixed, t_pre, t_dec = (time_op(o, gpu, eff).time_s for o in (mixed, pre, dec))
    assert t_mixed == t_pre + t_dec
    assert 0 < t_pre < t_dec     # 545 sequences' 1,500-token caches outweigh one 1,000-token prompt


def test_an_engine_version_rewrites_the_decode_kernel_of_a_mixed_op():
    """trtllm-0.6 reads a GQA cache once per query head in decode: the mixed op's decode part is rewritten,
    its prefill part is not."""
    mixed = op_of((DECODES, PROMPT))
    run, = engine_ops([mixed], engine_spec("trtllm-0.6"))
    pre, dec = run.shape.parts
    assert pre == mixed.shape.parts[0]
    assert dec.shape.kv_heads == 32 and dec.hbm_bytes > mixed.shape.parts[1].hbm_bytes
    assert run.hbm_bytes - mixed.hbm_bytes == dec.hbm_bytes - mixed.shape.parts[1].hbm_bytes


def test_a_change_made_to_a_mixed_op_after_it_was_built_reaches_its_kernels():
    """A technique or a placement that scales the op's bytes (or moves some to a slower tier) after it was
    built: the two kernels carry it in proportion to their bytes, so the time follows the op's bytes."""
    fp8 = Precision(weight="fp8", activation="fp8", kv="fp8")
    model, system, par, eff = Scenario(kernel_engine="trtllm", precision=fp8).resolve()
    mixed = op_of((DECODES, PROMPT))
    lighter = replace(mixed, bytes={**mixed.bytes, "hbm": mixed.hbm_bytes / 2})
    assert time_op(lighter, system.gpu, eff).time_s < time_op(mixed, system.gpu, eff).time_s
