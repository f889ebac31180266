"""Family G, several tokens per pass of an autoregressive model: multi-token prediction heads
(self-speculation), lexical units, superposed decoding."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline import speculation as spec
from whatif.roofline.config import ForwardBatch
from whatif.roofline.estimate import Workload
from whatif.roofline.forward_pass import time_pass
from whatif.roofline.pass_setup import pass_setup
from whatif.roofline.techniques.parallel_decoding import head_model
from whatif.roofline.techniques.registry import parse_technique
from whatif.scenario import Scenario

WL = Workload(1, 512, 256)


def run(techniques=(), workload=WL, model="llama-2-7b", hardware="h100-sxm"):
    return Scenario(model=model, hardware=hardware, workload=workload,
                    techniques=tuple(techniques)).run(with_max_batch=False)


# ---- multi_token

def test_multi_token_heads_draft_a_chain_verified_in_one_pass():
    e = run(["multi_token"])
    r = e.decode_round
    assert r.tokens == pytest.approx(spec.expected_tokens(spec.chain(3), (0.85, 0.7, 0.6)))
    assert r.verify.batch.groups[0][0] == 4 and r.verify.batch.logit_rows == 4
    # drafting: k head layers (one layer of the target's shape + the LM head) over the verified positions
    s = pass_setup(head_model(e.model), e.system, e.parallel, e.precision, e.efficiency, 0.9)
    one = time_pass(s, ForwardBatch.verify_pass(1, 4, r.verify.batch.groups[0][1]), True).time_s
    assert r.draft_s == pytest.approx(3 * one)
    assert r.draft_s < 0.5 * r.verify.time_s     # three layers of 32, plus three LM heads
    assert e.tpot_s < run([]).tpot_s / 2


def test_multi_token_heads_add_weights_and_kv():
    base, one, three = run([]), run(["multi_token:k=1,alphas=0.9"]), run(["multi_token"])
    layer = head_model(base.model).layer_params(0) * 2
    assert one.memory.weights_bytes - base.memory.weights_bytes == pytest.approx(layer)
    assert three.memory.weights_bytes - base.memory.weights_bytes == pytest.approx(3 * layer)
    per_layer_kv = base.memory.kv_cache_bytes / base.model.num_layers
    assert three.memory.kv_cache_bytes == pytest.approx(base.memory.kv_cache_bytes + 3 * per_layer_kv)


def test_multi_token_never_accepted_is_pure_overhead():
    assert run(["multi_token:k=1,alphas=0"]).tpot_s > run([]).tpot_s


def test_multi_token_tree_deeper_than_the_heads_is_an_error():
    with pytest.raises(WhatifError, match="multi_token:tree='2x2x2': 3 levels deep, but only k=2 heads"):
        parse_technique("multi_token:k=2,tree=2x2x2,alphas=0.8")


# ---- lexical_units

def test_lexical_units_gain_is_tokens_per_step_while_weight_bound():
    base = run([])
    e = run(["lexical_units:span=4,tokens_per_step=1.5"])
    assert e.decode_round.verify.batch.groups[0][0] == 4 and e.decode_round.tokens == 1.5
    assert base.tpot_s / e.tpot_s == pytest.approx(1.5, rel=0.02)
    assert run(["lexical_units:span=1,tokens_per_step=1"]).tpot_s == pytest.approx(base.tpot_s, rel=1e-3)


def test_lexical_units_gain_shrinks_once_the_batch_is_compute_bound():
    def gain(batch):
        wl = Workload(batch, 512, 64)
        return run([], wl).tpot_s / run(["lexical_units:span=8,tokens_per_step=2"], wl).tpot_s
    assert gain(1) > 1.9
    assert gain(256) < 0.8 * gain(1)


def test_lexical_units_bad_parameters():
    with pytest.raises(WhatifError, match=r"lexical_units:tokens_per_step=5.0: must be in \[1, span=4\]"):
        parse_technique("lexical_units:tokens_per_step=5")
    with pytest.raises(WhatifError, match="lexical_units:span=0: must be an integer >= 1"):
        parse_technique("lexical_units:span=0")


# ---- superposed

def test_superposed_one_decode_pass_advances_k_drafts():
    base = run([], Workload(1, 512, 255))
    e = run(["superposed:drafts=3,ngram_us=0"], Workload(1, 512, 255))
    r = e.decode_round
    assert r.tokens == 3 and r.verify.batch.groups[0][0] == 1 and r.verify.batch.logit_rows == 1
    # mid-generation, ~128 draft tokens in: the shared sequence holds a third of them
    ctx = r.verify.batch.groups[0][1]
    assert ctx == r.detail["position"] and 512 + 40 <= ctx <= 512 + 43
    assert e.decode_throughput_tok_s / base.decode_throughput_tok_s == pytest.approx(3.0, rel=0.01)


def test_superposed_ngram_scoring_is_k_squared_lookups_per_sequence():
    e = run(["superposed:drafts=4,ngram_us=50"], Workload(8, 512, 256))
    assert e.decode_round.overhead_s == pytest.approx(8 * 16 * 50e-6)
    assert run(["superposed:drafts=1,ngram_us=0"]).tpot_s == pytest.approx(run([]).tpot_s, rel=1e-3)
    more = [run([f"superposed:drafts={k}"]).decode_throughput_tok_s for k in (1, 2, 3, 4)]
    assert more == sorted(more)


def test_superposed_bad_parameters():
    with pytest.raises(WhatifError, match="superposed:drafts=0: must be an integer >= 1"):
        parse_technique("superposed:drafts=0")
    with pytest.raises(WhatifError, match=r"superposed:ngram_us=-1.0: must be >= 0"):
        parse_technique("superposed:ngram_us=-1")
