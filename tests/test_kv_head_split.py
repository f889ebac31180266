"""Fewer TP GPUs than KV heads must split the heads evenly, as vLLM's QKVParallelLinear asserts
(divide(total_num_kv_heads, tp_size)): MiniMax-M2.5 (48 heads, 8 KV heads) at --tp 3 was priced, not refused
(session 74 L)."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import Parallelism
from whatif.specs.models import load_model
from whatif.roofline.graph import check_parallelism


def test_tp_below_the_kv_heads_that_does_not_split_them_is_refused():
    with pytest.raises(WhatifError, match=r"--tp: 3 neither divides nor is a multiple of the 8 KV heads.*valid: 1, 2"):
        check_parallelism(load_model("minimax-m2.5"), Parallelism(tp=3))


@pytest.mark.parametrize("tp", [1, 2, 4, 8, 16])
def test_tp_that_splits_or_replicates_the_kv_heads_passes(tp):
    check_parallelism(load_model("minimax-m2.5"), Parallelism(tp=tp))
