"""The prefill-chunk axis of `whatif search`: figures at each chunk match `whatif.estimate` at that chunk (the
decode shared across chunks included), the chunk reaches labels and tables, and the API, CLI and search file
take a list or one value."""
from __future__ import annotations

import json

import pytest

import whatif
from whatif.cli import main
from whatif.config_search.configs import Config
from whatif.config_search.recheck import sim_config
from whatif.roofline.config import Parallelism
from whatif.config_search.space import ReplicaSetup, SearchSpace
from whatif.errors import WhatifError
from whatif.specs.engines import load_engine

PROMPT, OUTPUT = 3000, 100
CHUNKS, BATCHES = (8192, 1024), (1, 4, 16)
FRONT_S = load_engine("vllm").frontend.seconds(PROMPT)   # the search's default engine's front end, a request


def _search(model: str, **kw):
    return whatif.search(model, "dgx-h100", gpus=2, prompt=PROMPT, output=OUTPUT, batches=BATCHES,
                         prefill_chunks=CHUNKS, modes=("aggregated",), **kw)


@pytest.mark.parametrize("model, kw", [
    ("llama-3.1-8b", {"tp": (1, 2), "pp": (1, 2)}),
    ("mixtral-8x7b", {"tp": (2,), "pp": (1,)}),          # EP and attention DP layouts
    ("llama-3.1-8b", {"tp": (1,), "pp": (1,), "techniques": ["kivi"]}),   # no sharing: every chunk estimated
])
def test_figures_at_each_chunk_match_whatif_estimate(model, kw):
    """Every one-replica configuration's TTFT, E2E and throughput are the estimate's at its chunk, whether its
    decode was estimated at this chunk or shared from another."""
    r = _search(model, **kw)
    seen = set()
    for c in r.configs:
        if not c.feasible or c.replicas != 1:
            continue
        e = c.replica
        opts = dict(tp=e.tp, pp=e.pp, ep=e.ep, dp_attention=e.dp_attention, prompt=PROMPT, output=OUTPUT,
                    prefill_chunk=c.chunk, techniques=tuple(e.techniques), with_max_batch=False)
        one = whatif.estimate(model, "dgx-h100", batch=1, **opts)
        est = whatif.estimate(model, "dgx-h100", batch=c.batch, **opts)
        # a closed loop of B clients' TTFT (closed_loop_ttft.py), from the send through the server's front end
        # (vLLM's, f a request): a lone prompt's plus f at batch 1, at most the batch's whole prefill after the
        # last of B reaches the engine; with it the request's cycle is the estimate's e2e(B)
        if c.batch == 1:
            assert c.ttft_s == pytest.approx(one.ttft_s + FRONT_S, rel=1e-12), c.label()
        assert one.ttft_s * (1 - 1e-12) <= c.ttft_s <= (est.ttft_s + c.batch * FRONT_S) * (1 + 1e-12), c.label()
        assert c.e2e_s == pytest.approx(est.e2e_s, rel=1e-12), c.label()
        assert c.tok_s == pytest.approx(est.throughput_tok_s, rel=1e-12), c.label()
        assert c.tpot_s == pytest.approx((est.e2e_s - c.ttft_s) / (OUTPUT - 1), rel=1e-9), c.label()
        seen.add((e, c.chunk))
    assert {chunk for _, chunk in seen} == set(CHUNKS)


def test_the_chunk_enters_ttft_and_the_decode_stall_only():
    """At 1024 tokens a 3000-token prompt takes 3 passes: its TTFT changes; so does an aggregated replica's TPOT at
    batch > 1 (the running requests' prefills are its decode stall); at batch 1 there is no stall, only the decode,
    which does not depend on the chunk."""
    r = _search("llama-3.1-8b", tp=(1,), pp=(1,))
    by = {(c.batch, c.chunk): c for c in r.configs if c.feasible and c.replicas == 1}
    assert by[1, 1024].ttft_s != by[1, 8192].ttft_s
    assert by[16, 1024].tpot_s != by[16, 8192].tpot_s
    assert by[1, 1024].tpot_s == by[1, 8192].tpot_s


def test_chunk_in_labels_rows_and_disaggregated_pairs():
    r = whatif.search("llama-3.1-8b", "dgx-h100", gpus=4, prompt=PROMPT, output=OUTPUT, tp=(1, 2), pp=(1,),
                      batches=(8,), prefill_chunks=(2048, 8192))
    assert {c.chunk for c in r.configs} == {2048, 8192}
    for c in r.configs:
        assert f"chunk {c.chunk}" in c.label()
        assert c.row()["prefill_chunk"] == c.chunk
    frame = r.to_frame()
    assert set(frame["prefill_chunk"]) == {2048, 8192}
    assert r.to_dict()["space"]["prefill_chunks"] == (2048, 8192)


def test_prefill_chunk_alone_is_a_one_value_list():
    a = whatif.search("llama-3.1-8b", "dgx-h100", gpus=1, tp=(1,), pp=(1,), batches=(1, 8), prefill_chunk=2048)
    b = whatif.search("llama-3.1-8b", "dgx-h100", gpus=1, tp=(1,), pp=(1,), batches=(1, 8), prefill_chunks=[2048])
    assert [c.row() for c in a.configs] == [c.row() for c in b.configs]
    with pytest.raises(WhatifError, match="--prefill-chunk"):
        whatif.search("llama-3.1-8b", "dgx-h100", gpus=1, prefill_chunk=2048, prefill_chunks=[4096])


CLI = ["search", "--model", "llama-3.1-8b", "--hardware", "dgx-h100", "--gpus", "1", "--tp", "1", "--pp", "1",
       "--batches", "1,8", "--modes", "aggregated", "--json", "--no-progress"]


def _chunks_of(capsys, argv) -> set[int]:
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    return set(d["space"]["prefill_chunks"])


def test_cli_flags_and_search_file(capsys, tmp_path):
    assert _chunks_of(capsys, [*CLI, "--prefill-chunks", "2048,8192"]) == {2048, 8192}
    assert _chunks_of(capsys, [*CLI, "--prefill-chunk", "4096"]) == {4096}
    f = tmp_path / "s.yaml"
    f.write_text("prefill_chunks: 1024,2048\n")
    assert _chunks_of(capsys, [*CLI, "--scenario", str(f)]) == {1024, 2048}
    f.write_text("prefill_chunks: [512]\n")
    assert _chunks_of(capsys, [*CLI, "--scenario", str(f)]) == {512}
    f.write_text("prefill_chunk: 1024\n")
    assert _chunks_of(capsys, [*CLI, "--scenario", str(f)]) == {1024}
    assert _chunks_of(capsys, [*CLI, "--scenario", str(f), "--prefill-chunks", "256"]) == {256}
    assert main([*CLI, "--prefill-chunks", "0,8192"]) != 0
    assert main([*CLI, "--prefill-chunk", "4096", "--prefill-chunks", "8192"]) != 0
    err = capsys.readouterr().err
    assert "--prefill-chunks" in err and "--prefill-chunk:" in err


def test_recheck_runs_the_chunk_and_the_prefill_pools_own_layout():
    space = SearchSpace(model="mixtral-8x7b", hardware=("dgx-h100",), gpu_budget=2, prefill_chunks=(2048,))
    dp = ReplicaSetup("dgx-h100", 2, 1, 2, "bf16", "bf16", (), True)
    c = Config("aggregated", "dgx-h100", dp, 8, 1, 2, request_rate=1.0, chunk=2048)
    assert sim_config(space, c, 10).scheduler.token_budget == 2048
    plain = ReplicaSetup("dgx-h100", 2, 1, 1, "bf16", "bf16")
    x = Config("disaggregated", "dgx-h100", dp, 8, 1, 2, request_rate=1.0, chunk=2048, prefill=plain,
               prefill_replicas=1)
    assert sim_config(space, x, 10).cluster.prefill_parallel(dp) == Parallelism(tp=2, ep=1)


BAD = [
    ({"efficiency": "x"}, "--efficiency"), ({"kv_link": "nope"}, "--kv-link"), ({"tp": []}, "--tp"),
    ({"pp": ()}, "--pp"), ({"batches": []}, "--batches"), ({"modes": []}, "--modes"),
    ({"weight_dtypes": []}, "--weight-dtypes"), ({"kv_dtypes": ()}, "--kv-dtypes"),
    ({"prefill_chunks": []}, "--prefill-chunks"), ({"prefill_chunks": [0]}, "--prefill-chunks"),
    ({"prefill_chunk": -1}, "--prefill-chunks"), ({"prefill_chunks": [1 << 40]}, "--prefill-chunks"),
    ({"prefill_chunks": 2048}, "--prefill-chunks"), ({"batches": [0]}, "--batches"),
    ({"batches": [10 ** 12]}, "--batches"), ({"tp": [-2]}, "--tp"), ({"gpus": -1}, "--gpus"),
    ({"gpus": 10 ** 12}, "--gpus"), ({"prompt": 0}, "--prompt"), ({"output": 10 ** 10}, "--output"),
    ({"hardware": []}, "--hardware"), ({"hardware": ["nope-gpu"]}, "--hardware"), ({"modes": "both"}, "--modes"),
    ({"objective": "speed"}, "--objective"), ({"ttft": -1}, "ttft"), ({"techniques": 3}, "--technique"),
    ({"simulate_top": -1}, "--simulate-top"), ({"weight_dtypes": [""]}, "--weight-dtypes"),
]


@pytest.mark.parametrize("kw, flag", BAD, ids=[f"{next(iter(k))}={next(iter(k.values()))!r:.20}" for k, _ in BAD])
def test_bad_api_arguments_are_one_line_errors(kw, flag):
    args = {"gpus": 2, "hardware": "dgx-h100", **kw}
    with pytest.raises(WhatifError, match=flag) as info:
        whatif.search("llama-3.1-8b", args.pop("hardware"), **args)
    assert "\n" not in str(info.value)
