"""A user's walk through the headline questions (session 73 M): what the search answers must not depend on how the
question was spelled: a scheme named as the engines name it, or the batches listed beside the one that wins."""
from __future__ import annotations

import pytest

import whatif
from whatif.queries.deployment import from_search


def _rows(res):
    return {(c.batch, c.replica.ep): c for c in res.configs if c.replicas == 1 and c.status != "does not fit"}


def test_fp8_on_a_block_fp8_checkpoint_prices_and_launches_its_blocks():
    """`--quantizations fp8` on deepseek-ai/DeepSeek-R1 (quantization_config fp8, weight_block_size [128, 128]) is
    what `vllm serve deepseek-ai/DeepSeek-R1 --quantization fp8` loads: its 128x128 blocks (Fp8Config reads
    weight_block_size). It priced per-tensor FP8 on every layer (TTFT 2.5 s against 1.9 s at batch 16)."""
    kw = dict(gpus=8, ttft=1.0, tpot=0.03, tp=(8,), pp=(1,), ep=(1,), batches=(16,), modes=("aggregated",), jobs=1)
    named = _rows(whatif.search("deepseek-ai/DeepSeek-R1", "hgx-h200", quantizations=("fp8",), **kw))
    stored = _rows(whatif.search("deepseek-ai/DeepSeek-R1", "hgx-h200", **kw))   # the checkpoint as stored
    assert named.keys() == stored.keys() and named
    for key, c in named.items():
        assert c.tpot_s == pytest.approx(stored[key].tpot_s, rel=1e-9)
        assert c.request_rate == pytest.approx(stored[key].request_rate, rel=1e-9)
    res = whatif.search("deepseek-ai/DeepSeek-R1", "hgx-h200", quantizations=("fp8",), **kw)
    d, _ = from_search(res.space, next(c for c in res.configs if c.status == "ok"))
    assert d.quantization == ""     # loaded as stored: no per-tensor flag, no "MODEL must be" note


def test_a_configurations_tpot_does_not_depend_on_the_other_batches_searched():
    """Under a TTFT target a request decodes beside the occupancy it sees, interpolated between priced steps; with no
    batch below B listed it read B's own step: Llama-3.1-8B b32 14.56 ms alone against 14.02 in the default list
    (+3.9%), DeepSeek-R1 8xH200 b32 29.3 against 26.7 ms (+10%, the 30 ms verdict flips). The batch-1 step is priced
    in every search, so it bounds the interpolation."""
    kw = dict(gpus=1, prompt=2000, output=200, ttft=0.3, tpot=0.05, tp=(1,), pp=(1,), modes=("aggregated",),
              engine="vllm", jobs=1)
    alone = _rows(whatif.search("llama-3.1-8b", "dgx-h100", batches=(32,), **kw))
    listed = _rows(whatif.search("llama-3.1-8b", "dgx-h100", batches=(1, 2, 4, 8, 16, 32), **kw))
    key = (32, 1)
    assert alone[key].tpot_s == pytest.approx(listed[key].tpot_s, rel=0.01)


def test_an_ep_no_tp_splits_into_is_a_one_line_error():
    """`--tp 8 --ep 16` (wide EP needs a TP group as wide) searched 0 configurations and answered 'no configuration
    meets the SLOs', exit 0."""
    from whatif.errors import WhatifError
    with pytest.raises(WhatifError, match=r"--ep: 16: no TP size tried \(8\).*valid: divisors of --tp"):
        whatif.search("qwen3-30b-a3b", "dgx-h100", gpus=8, tp=(8,), ep=(16,), batches=(8,), jobs=1)


def test_when_nothing_fits_the_answer_names_the_nearest_layout():
    """DeepSeek-R1 on 4 H200: every layout misses memory; the answer said 'no configuration meets the SLOs' and its
    example was tp1 (677 GB a GPU), where tp4 needs 173 GB against 136 usable."""
    res = whatif.search("deepseek-ai/DeepSeek-R1", "hgx-h200", gpus=4, ttft=1.0, batches=(32,), modes=("aggregated",),
                        jobs=1)
    text = res.text()
    assert "best: nothing fits within 4 GPUs; the widest, [tp4 pp1" in text
    assert "(e.g. [tp4 pp1" in text


def test_estimate_heads_its_answer_with_the_id_the_user_asked_for():
    """`estimate --model deepseek-ai/DeepSeek-R1` ran the deepseek-v3 profile and said only that (session 73 M)."""
    from whatif.specs.hf_ids import model_heading
    assert model_heading("deepseek-v3", "deepseek-ai/DeepSeek-R1") == "deepseek-ai/DeepSeek-R1 (profile deepseek-v3)"
    assert model_heading("llama-3.1-8b", "llama-3.1-8b") == "llama-3.1-8b"
    assert model_heading("qwen3-32b", "/tmp/x/config.json") == "qwen3-32b"
    assert model_heading("qwen3-32b", None) == "qwen3-32b"
