"""The Hugging Face Transformers generate() engine (engine_profiles/versions/hf-transformers.yaml), the baseline
many papers measured against: no CUDA graphs (every kernel launched from Python), a synchronous Python step, no
batch cap, and claims that name the engine their paper ran on."""
from dataclasses import replace

import pytest

from whatif.claims import all_claims
from whatif.claims.claim import Claim, claim_scenarios
from whatif.errors import WhatifError
from whatif.roofline.config import Precision
from whatif.roofline.engines import check_engine, engine_spec
from whatif.roofline.estimate import Workload
from whatif.scenario import Scenario
from whatif.specs.engines import expand_sizes

HF = "hf-transformers"
FP16 = Precision("fp16", "fp16", "fp16")


def run(engine: str, batch: int, **kw):
    sc = Scenario(model="llama-2-7b", hardware="a100-sxm-80gb", precision=FP16, kernel_engine=engine,
                  workload=Workload(batch=batch, prompt=160, output=338), **kw)
    return sc.run()


def test_profile_is_eager_uncapped_and_sourced():
    e = engine_spec(HF)
    assert e.graph_sizes == () and e.graph_batch(1) is None and not e.graph_prefill
    assert e.max_num_seqs > 10_000 and not e.cpu.overlapped and not e.chunked_prefill
    assert check_engine(HF) == "vllm" and e.kernel_fits == "vllm"
    assert e.eager_launch_s is not None and e.eager_launch_s > engine_spec("vllm").cpu.per_sequence_s
    assert "kernels.eager_launch_s" in e.sources and "no CUDA graphs" in e.summary()
    assert all(v.split(":")[0] in ("documented", "measured", "assumed") for v in e.sources.values())


def test_an_empty_capture_list_means_no_graphs_and_a_non_list_is_refused():
    assert expand_sizes([], "x") == ()
    with pytest.raises(WhatifError, match="cuda_graphs"):
        expand_sizes(8, "cuda_graphs.decode_sizes")


def test_batch_one_decode_is_bound_by_the_python_launches():
    hf, vllm = run(HF, 1), run("vllm", 1)
    host = hf.decode.kernels * engine_spec(HF).eager_launch_s
    assert hf.tpot_s >= host > hf.decode.gpu_s          # the GPU waits on the CPU
    assert hf.tpot_s > vllm.tpot_s


def test_a_large_batch_hides_the_launches_behind_the_kernels():
    slow_small = run(HF, 1).tpot_s / run("vllm", 1).tpot_s
    slow_large = run(HF, 200).tpot_s / run("vllm", 200).tpot_s
    assert slow_large < slow_small


def test_launch_us_overrides_the_engines_launch_cost():
    fast = run(HF, 1, launch_us=1.0)
    assert fast.tpot_s < run(HF, 1).tpot_s


def test_no_batch_cap_beside_vllms_max_num_seqs():
    kivi = dict(techniques=("kivi",))
    assert run("vllm", 1, **kivi).max_batch == engine_spec("vllm").max_num_seqs
    assert run(HF, 1, **kivi).max_batch > engine_spec("vllm").max_num_seqs


def test_a_claim_runs_each_side_on_the_engine_its_paper_names():
    base = dict(technique="kivi", paper="x", claimed=2.0, metric="tpot", why="y",
                setup={"model": "llama-2-7b", "techniques": []}, variant={"techniques": ["kivi"]})
    b, v = claim_scenarios(Claim(baseline_engine=HF, engine_why="its script", **base))
    assert b["kernel_engine"] == v["kernel_engine"] == HF and v["techniques"] == ["kivi"]
    b, v = claim_scenarios(Claim(baseline_engine=HF, system_engine="vllm", engine_why="its script", **base))
    assert (b["kernel_engine"], v["kernel_engine"]) == (HF, "vllm")
    b, v = claim_scenarios(Claim(**base))
    assert "kernel_engine" not in b and "kernel_engine" not in v
    with pytest.raises(AssertionError):
        Claim(baseline_engine=HF, **base)          # an engine needs the paper's reason


def test_every_claims_engine_is_a_known_engine_with_a_reason():
    named = [c for c in all_claims() if c.baseline_engine or c.system_engine]
    assert len(named) >= 20
    for c in named:
        for e in (c.baseline_engine, c.system_engine):
            if e:
                check_engine(e)
        assert len(c.engine_why) > 20, c.paper
        if HF in (c.baseline_engine, c.system_engine) and c.metric in ("tpot", "e2e", "throughput",
                                                                      "throughput_at_max_batch"):
            # HF's growing cache is copied every step: counted once, by the kv_concat technique
            assert "kv_concat" in claim_scenarios(c)[0]["techniques"], c.paper
    assert replace(named[0], engine_why="x").engine_why == "x"


# gemma-7b's shapes (its public config.json) as a Llama-type config: whatif has no gemma (v1) family; the decode
# step's kernels are the same (GeGLU has SwiGLU's op count in whatif's graph), and MHA has no repeat_kv copy.
GEMMA_7B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 3072,
            "intermediate_size": 24576, "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 16,
            "head_dim": 256, "vocab_size": 256000, "max_position_embeddings": 8192, "hidden_act": "gelu",
            "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "torch_dtype": "bfloat16", "tie_word_embeddings": True}


def test_the_eager_host_cost_predicts_hfs_own_a100_measurement(tmp_path):
    """Out of sample for eager_launch_s (derived from gpt-fast's eager Llama-2-7B): Hugging Face's own benchmark of
    eager generate() with a DynamicCache on an A100
    (huggingface.co/datasets/ydshieh/A100_cache_benchmark_dynamic_length,
    '[A100]_[gemma-7b]_[static=no]_[compile=no]_[len=optimal].json') takes 37.55-37.95 s for 1024 tokens and
    150.1-151.0 s for 4096: 36.6-37.1 ms a token, flat with length (host-bound; its compiled static-cache runs of
    the same model take ~15 ms). whatif's hf-transformers step for the same shapes must land within 10%."""
    import json
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(GEMMA_7B))
    for output, measured in ((1024, 37.6 / 1024), (4096, 150.1 / 4096)):
        sc = Scenario(model=str(cfg), hardware="a100-sxm-80gb", kernel_engine=HF,
                      workload=Workload(batch=1, prompt=16, output=output), techniques=("kv_concat",))
        tpot = sc.run().tpot_s
        assert abs(tpot / measured - 1) < 0.10, (output, tpot, measured)
