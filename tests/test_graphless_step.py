"""vLLM V1's steps above its largest CUDA-graph capture size (roofline/graphless_step.py): no graph at all, every
kernel at the engine's measured eager call; steps inside the captured sizes, and other engines, priced as before."""
from __future__ import annotations

import pytest

from whatif.roofline.config import ForwardBatch
from whatif.roofline.forward_pass import time_pass
from whatif.roofline.graphless_step import graphless_step
from whatif.roofline.step_price.parts import PassParts
from whatif.scenario import Scenario

from tests.test_piecewise_graph import setup_of, vllm

PROMPT = ForwardBatch(((1024, 0, 1),))
VLLM_2048 = (1, 2, 4, *range(8, 249, 8), *range(256, 2049, 16))   # --max-cudagraph-capture-size 2048


def test_vllms_capture_ceiling_follows_its_sequence_limit_and_token_budget():
    assert vllm().engine_spec().mixed_graph_tokens == 512            # min(2 x 1024 sequences, 512)
    assert vllm(max_num_seqs=4).engine_spec().mixed_graph_tokens == 8   # min(2 x 4, 512)
    assert vllm(max_num_seqs=4, cuda_graph_sizes=VLLM_2048, max_num_batched_tokens=2048) \
        .engine_spec().mixed_graph_tokens == 2048                       # a launch's list, cut at the budget
    assert vllm(cuda_graph_sizes=VLLM_2048, max_num_batched_tokens=1024).engine_spec().mixed_graph_tokens == 1024


def test_other_engines_have_no_such_ceiling():
    for engine in ("trtllm", "sglang"):
        spec = Scenario(model="llama-3.1-8b", hardware="h100-sxm", kernel_engine=engine).engine_spec()
        assert spec.mixed_graph_tokens == 0 and not graphless_step(spec, 10 ** 6)


def test_a_prompt_above_the_ceiling_pays_the_eager_call_per_kernel():
    small = setup_of(vllm(max_num_seqs=4))
    p = time_pass(small, PROMPT, False)
    assert p.launch_s == pytest.approx(p.kernels * small.engine_spec.piecewise_call_s)
    big = setup_of(vllm(max_num_seqs=4, cuda_graph_sizes=VLLM_2048, max_num_batched_tokens=2048))
    q = time_pass(big, PROMPT, False)
    assert q.launch_s == pytest.approx(q.kernels * big.system.gpu.launch_overhead.value)
    assert q.launch_s < p.launch_s and q.time_s <= p.time_s


def test_the_parts_price_a_graphless_step_as_the_whole_pass():
    setup = setup_of(vllm(max_num_seqs=4))
    parts = PassParts(setup)
    assert parts.graphless is not None
    for groups in (((1024, 0, 1),), ((6, 0, 1),), ((900, 0, 1), (1, 500, 3))):
        batch = ForwardBatch(groups)
        assert parts.time_s(groups, 0, False) == pytest.approx(time_pass(setup, batch, False).time_s, rel=1e-12)


def test_the_graphless_sibling_prices_from_its_parents_tables_and_grows_them_to_the_next_power_of_two():
    """The sibling's setup-only tables are its parent's (built once, session 69 F); its prices are still the whole
    pass's, and a GEMM table past its first 4,096 rows holds the next power of two of them (not twice that)."""
    setup = setup_of(vllm(max_num_seqs=4))
    parts = PassParts(setup)
    sibling = parts.graphless
    assert sibling.gemm_tables is parts.gemm_tables and sibling.token_pieces is parts.token_pieces
    assert sibling.whole_passes is parts.whole_passes
    groups = ((5000, 0, 1),)   # (its first step: the pieces are read, and the passes they were read from dropped)
    assert parts.time_s(groups, 0, False) == pytest.approx(time_pass(setup, ForwardBatch(groups), False).time_s,
                                                           rel=1e-12)
    assert parts.token_pieces and not parts.whole_passes
    assert max(len(t[0]) for t in parts.gemm_tables.values()) == 8192   # (m = 5,000)


def test_the_cli_capture_list_sets_the_decode_graphs_and_vllms_prefill_ceiling():
    from whatif.cli import build_parser
    from whatif.cli.scenario_flags import scenario_from_args
    args = build_parser().parse_args(["estimate", "--model", "llama-3.1-8b", "--engine", "vllm",
                                      "--cuda-graph-sizes", "8,1,4,2048"])
    spec = scenario_from_args(args).engine_spec()
    assert spec.graph_sizes == (1, 4, 8, 2048) and spec.mixed_graph_tokens == 2048   # a launch's list, as given


def test_a_bad_capture_list_is_a_one_line_flag_error(capsys):
    from tests.test_cli import run_error
    line = run_error(capsys, "estimate", "--cuda-graph-sizes", "1,0")
    assert "--cuda-graph-sizes: '0' is not valid; valid: integers from 1 to 65,536" in line
