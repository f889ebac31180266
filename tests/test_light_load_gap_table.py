"""benchmarks/light_load_gap_table.py: the rank correlation, the model shapes and the in-deployment contrasts read
what made-up rows carry, and the committed table keeps the two contrasts the diagnosis rests on (docs/accuracy.md,
"Session 69 A")."""
import math
import statistics

import pytest

from tests.benchmark_module import load_benchmark

lgt = load_benchmark("light_load_gap_table")


def test_spearman_reads_rank_order_not_scale():
    assert lgt.spearman([1, 2, 3, 4], [10, 20, 30, 400]) == pytest.approx(1.0)
    assert lgt.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert lgt.spearman([1, 1, 2, 2], [5, 5, 7, 7]) == pytest.approx(1.0)    # ties share a rank
    assert math.isnan(lgt.spearman([1, 2], [3, 4]))                          # too few points
    assert math.isnan(lgt.spearman([1, 2, 3], [5, 5, 5]))                    # a constant side


def test_structure_names_the_attention_kind_and_experts_from_the_specs():
    assert lgt.structure("deepseek-ai/DeepSeek-R1") == {"experts": 256, "topk": 8, "attention": "MLA"}
    assert lgt.structure("zhipuai/GLM-5")["attention"] == "DSA"
    assert lgt.structure("Qwen/Qwen3.5-397B-A17B")["attention"] == "GDN+GQA"
    assert lgt.structure("meta-llama/Llama-3.1-70B") == {"experts": 0, "topk": 0, "attention": "GQA"}
    assert lgt.structure("no-such/model") == {"experts": 0, "topk": 0, "attention": "-"}


def _row(**kw):
    base = dict(system="b200_sxm", engine="trtllm", model="x/M", version="1", gemm_quant="fp8", tp="8", ep="1",
                isl="1024", concurrency="4", graph="eager", gap=100.0)
    return {**base, **kw}


def test_contrast_pairs_only_rows_that_differ_in_the_one_field():
    rows = [_row(gap=100.0), _row(concurrency="8", gap=50.0),        # a once-a-run cost would halve
            _row(tp="4", gap=80.0),                                   # no N = 8 partner: left out
            _row(graph="graphless", concurrency="8", gap=10.0)]       # another prefill mode: not a partner
    got = lgt.contrast(rows, "concurrency", "4", "8")
    assert got == {"M trtllm": [(100.0, 50.0)]}


def test_ep_rows_keep_only_ep1_and_ep_equal_tp():
    rows = [_row(ep="1"), _row(ep="8"), _row(ep="4")]
    assert [r["ep_kind"] for r in lgt.ep_rows(rows)] == ["EP1", "EP=TP"]


def test_the_committed_table_keeps_the_deepseek_gap_at_twice_the_clients_and_the_kimi_graph_contrast():
    rows = lgt.llf.light_rows(8)
    # a cost paid once a run over the client's 10 N requests would halve from N = 4 to 8; the DeepSeek gap does not
    pairs = lgt.contrast(rows, "concurrency", "4", "8")["DeepSeek-R1 trtllm"]
    a, b = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
    assert a > 80 and b > 0.75 * a
    # with piecewise graphs (vLLM's 2,048-token capture) Kimi-K2.5's MLA + 384-expert 1k prefill is priced right
    table = {(t["engine"], t["model"], t["tp"], t["ep"], t["isl"]): t for t in lgt.group_table(rows, price=False)}
    kimi = table[("vllm", "moonshotai/Kimi-K2.5", "4", "1", "1024")]
    assert kimi["graph"] == lgt.llf.GRAPHED and abs(kimi["gap"]) < 20
    assert table[("vllm", "moonshotai/Kimi-K2.5", "4", "4", "1024")]["gap"] > 60   # the same model graphless
