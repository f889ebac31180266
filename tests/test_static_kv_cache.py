"""gpt-fast's static KV cache (static_kv_cache): preallocated for prompt + output and attended in full at every
decode step, so a dense step reads every slot, filled or not; a sparse kernel's share scales with it."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline.estimate import Workload
from whatif.roofline.ops import OpClass
from whatif.roofline.techniques.registry import parse_technique
from whatif.scenario import Scenario


DEFAULT = Workload(4, 2048, 2048)


def run(techniques, workload=DEFAULT):
    return Scenario(model="llama-2-7b", hardware="a100-sxm-80gb", workload=workload,
                    techniques=tuple(techniques)).run(with_max_batch=False)


def test_length_defaults_to_prompt_plus_output():
    t = parse_technique("static_kv_cache").for_workload(Workload(4, 2048, 1000))
    assert t.length == 3048
    assert parse_technique("static_kv_cache").for_workload(Workload(4, 2048, 1001)).length == 3056   # x8
    assert parse_technique("static_kv_cache:length=9000").for_workload(Workload(4, 2048, 1000)).length == 9000
    with pytest.raises(WhatifError, match="length"):
        parse_technique("static_kv_cache:length=-1")


def test_dense_decode_reads_the_whole_buffer():
    plain, static = run([]), run(["static_kv_cache"])
    assert static.tpot_s > plain.tpot_s
    assert static.ttft_s == pytest.approx(plain.ttft_s)          # prefill untouched
    def kv(est):
        return sum(t.op.shape.kv_bytes for stage in est.decode.stages for t in stage
                   if t.op.op_class == OpClass.ATTENTION_DECODE)
    # the mean decode step sits at 2048 + 1024 tokens of a 4096-slot buffer
    assert kv(static) == pytest.approx(kv(plain) * 4096 / 3072)


def test_a_full_buffer_costs_nothing_extra():
    # at the last step the context fills the buffer: length = context gives no padding
    wl = Workload(4, 4000, 1)
    assert run(["static_kv_cache"], wl).tpot_s == pytest.approx(run([], wl).tpot_s, rel=1e-9)


def test_cannot_combine_with_hugging_face_concatenation():
    with pytest.raises(WhatifError):
        run(["static_kv_cache", "kv_concat"])
