"""Hugging Face Transformers before SDPA (engine_profiles/versions/hf-transformers-4.35.yaml): attention as eager
kernels over the full score rectangle, its scores streamed through HBM (roofline/engine_kernels.eager_attention)."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch
from whatif.roofline.context import pass_context
from whatif.roofline.engine_kernels import EAGER_SCORE_ACCESSES, eager_attention, engine_ops
from whatif.roofline.engines import engine_spec
from whatif.roofline.graph import pass_ops
from whatif.roofline.ops import OpClass
from whatif.scenario import Scenario
from whatif.specs.engines import engine_from_mapping
from whatif.specs.op_kinds import OpRole
from whatif.specs.profiles import read_yaml
from whatif.specs.engines import VERSION_DIR


def _attention(batch: ForwardBatch):
    sc = Scenario(model="llama-2-7b", hardware="a100-sxm-80gb")
    m, _system, par, _eff = sc.resolve()
    ctx = pass_context(m, batch, par, sc.precision, 0)
    return next(o for o in pass_ops(ctx) if o.role == OpRole.ATTENTION)


def test_prefill_computes_the_full_rectangle_and_streams_every_score():
    op = _attention(ForwardBatch.prefill(2, 1024))
    run, scores = eager_attention(op)
    full = 2 * 1024 * 1024
    assert run.shape.pairs == pytest.approx(full) and op.shape.pairs < 0.51 * full   # causal: about half
    assert run.flops / op.flops == pytest.approx(full / op.shape.pairs)
    a, f = EAGER_SCORE_ACCESSES
    assert scores.op_class == OpClass.ELEMENTWISE and scores.count == op.count
    assert scores.bytes["hbm"] == pytest.approx(full * op.shape.heads * (a * 2 + f * 4))


def test_decode_keeps_its_pairs_and_only_the_old_engine_runs_eagerly():
    op = _attention(ForwardBatch.decode(4, 2000))
    run, scores = eager_attention(op)
    assert run.shape.pairs == op.shape.pairs
    assert engine_ops([op], engine_spec("hf-transformers-4.35"))[0] == run
    assert engine_ops([op], engine_spec("hf-transformers")) == [op]
    assert engine_spec("hf-transformers-4.35").eager_attention and not engine_spec("hf-transformers").eager_attention


def test_eager_attention_slows_a_long_prefill_far_more_than_a_decode_step():
    def ratio(**workload):
        t = {e: Scenario(model="llama-2-7b", hardware="a100-sxm-80gb", kernel_engine=e,
                         workload=Scenario().workload.__class__(**workload)).run()
             for e in ("hf-transformers", "hf-transformers-4.35")}
        return t["hf-transformers-4.35"], t["hf-transformers"]
    new, old = ratio(batch=1, prompt=4000, output=8)
    assert new.ttft_s > 1.3 * old.ttft_s                   # 32 heads x 4000^2 scores x 24 B per layer
    assert new.tpot_s == pytest.approx(old.tpot_s, rel=0.15)   # one query: scores ~5% of the KV read


def test_a_bad_value_is_a_one_line_error():
    data = read_yaml(VERSION_DIR / "hf-transformers-4.35.yaml")
    data["kernels"]["attention_scores_materialised"] = {**data["kernels"]["attention_scores_materialised"],
                                                         "value": "sometimes"}
    with pytest.raises(WhatifError, match="attention_scores_materialised"):
        engine_from_mapping(data, "x.yaml")


def test_a_long_prompt_holds_one_layers_scores_at_the_peak():
    from whatif.roofline.memory import EAGER_SCORE_PEAK_BYTES, activation_bytes
    runs = {e: Scenario(model="llama-2-7b", hardware="a100-sxm-80gb", kernel_engine=e,
                        workload=Scenario().workload.__class__(batch=1, prompt=4000, output=8)).run()
            for e in ("hf-transformers", "hf-transformers-4.35")}
    # The cache grows as generate goes (memory.grown_cache_peak_extra): the scores (~3.1 GB) make the prompt pass
    # (weights + the prompt's cache + its activations + one layer's scores) the peak, over the last decode step's.
    scores = 32 * 4000 ** 2 * EAGER_SCORE_PEAK_BYTES
    r = runs["hf-transformers-4.35"]
    m = r.memory
    prompt_pass = (m.weights_bytes + m.workspace_bytes + m.sequence_kv_bytes(4000)
                   + activation_bytes(r.model, 4000, 4000, r.parallel, r.precision, 2.0 + 4.0))   # every position's
    # logits, 16-bit and the fp32 copy of Llama's forward before transformers 4.45 (tests/test_prefill_logits.py)
    assert m.total_bytes == pytest.approx(prompt_pass + scores, rel=0.01)
    assert runs["hf-transformers"].memory.total_bytes < prompt_pass + scores - 1e9   # SDPA: no scores, decode-bound
