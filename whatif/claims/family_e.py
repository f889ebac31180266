"""Claims of catalogue family E (see ../shared/techniques.md), and CacheGen's (family B, whose
mechanism, loading KV instead of computing it, lives with E)."""
from dataclasses import replace

from .claim import Assumption, Claim

# Hydragen: CodeLlama-13b, tensor parallel over eight A100-40GB, batch 1K, many completions of one prompt
# (the prompt is the shared prefix), 128 generated tokens; baseline vLLM (prefix stored once, read per
# sequence) = prefix_caching.
_HYDRAGEN = {"model": "codellama-13b", "hardware": "dgx-a100-40gb", "gpus": 8,
             "workload": {"batch": 1024, "prompt": 1024, "output": 128, "shared_prefix": 1024}}
_HYDRAGEN_LONG = _HYDRAGEN
# The release's vLLM baseline (ScalingIntelligence/hydragen scripts/synth.py go_vllm): one prompt with
# SamplingParams(n=batch) (the prompt's blocks forked, stored once), LLM(max_num_seqs=max batch,
# max_paddings=16384, tensor_parallel_size=8), and its sweeps_from_paper.md pins vLLM commit 2e0b6e7, the v0.2.7
# release (the commit other ports of v0.2.7's block manager cite): the vllm-0.2 engine. Hydragen itself runs its own
# CUDA-graphed PyTorch model with FlashAttention 2.3.6 (requirements.txt), for which whatif's default engine stands in.
# Which of the release's two vLLM baselines the 32x is against is not in its code (session 70 U): docs/
# sweeps_from_paper.md runs every vLLM command as `--mode vllm` and says `vllm` / `vllm_notok` differ only in whether
# vllm/engine/llm_engine.py#L468 at 2e0b6e7 (the per-sequence _decode_sequence call, the detokenizer) is commented out;
# synth.py's go_vllm is the same for both. vllm-0.2 keeps the detokenizer (20 us a sequence); without it the 32x
# claim gives 23.3x (23.6x with), the 3x claim 2.92x (3.36x): no verdict turns on it.
_HYDRAGEN_VLLM = {"baseline_engine": "vllm-0.2", "system_engine": "vllm",
                  "engine_why": "the release's vLLM baseline (scripts/synth.py: LLM(..., max_paddings=16384); "
                                "its sweeps_from_paper.md pins vLLM commit 2e0b6e7, the v0.2.7 release); Hydragen's "
                                "own graphed PyTorch + FlashAttention 2.3.6 on the default engine"}
_VLLM_SEQS = {"max_num_seqs": 1024}    # synth.py: LLM(max_num_seqs=max(bs_list)), the batch of 1K
_LONG_PREFIX = {"workload": {"prompt": 16256, "shared_prefix": 16256}}
# LLaVA-1.5-7B: Vicuna-7B v1.5 behind one 336-px image (576 visual tokens) and a 64-token instruction.
_LLAVA = {"model": "vicuna-7b", "hardware": "a100-sxm-80gb", "workload": {"batch": 1, "prompt": 640, "output": 64}}
# A sub-1B model on a low-power GPU for "Return of the Encoder" (its setup is not in the abstract; assumed).
_SLM = {"model": "qwen2.5-0.5b", "hardware": "l4", "workload": {"batch": 1, "prompt": 512, "output": 128}}
# The authors' release (github.com/microsoft/encoder-decoder-slm): README "2/3-1/3 encoder-decoder split";
# src/mu/models/modeling_mu.py MuConfig: 20 encoder + 10 decoder layers (width 1024, 6 heads / 3 KV heads of 64,
# GELU MLP 4096, vocab 32128). Qwen2.5-0.5B's 24 layers split the same way: 16 + 8.
_ENC_DEC = "encoder_decoder:encoder_layers=16,decoder_layers=8"
_NO_13B = "CodeLlama-13b (MHA, 40 KV heads, 16K window) as in the paper; a 16K prefix and the output fill the window"

# CacheBlend's release (YaoJiayi/CacheBlend example/blend_musique.py, blend_wikimqa.py) caches every chunk of the
# prompt, the instruction prefix included, and computes only the question suffix (the query template, ~40 tokens, the
# question and the chat end tag: `suffix_len`); a 64-token suffix of the 4K prompt is a 98.4% reused share (added
# after scoring, session 62: the technique's default 90% had been left in, which no source gives).
_CACHEBLEND = f"cacheblend:reused={1 - 64 / 4096:g}"
_CACHEBLEND_NOTE = ("reused share 98.4%: the release's QA scripts cache every chunk and the instruction prefix, "
                    "computing only the question suffix (~64 tokens assumed)")


def _cacheblend_prompt(claim: Claim, tokens: float) -> Claim:
    """CacheBlend's claim at another prompt length, the ~64-token question suffix kept (so the reused share moves)."""
    return replace(claim, setup={**claim.setup, "workload": {**claim.setup["workload"], "prompt": int(tokens)}},
                   variant={"techniques": [f"cacheblend:reused={1 - 64 / tokens:g}"]})


# The prompt length is not in the abstract (session 69 I). The release's inputs span ~3K to ~6K tokens: example/
# blend.py's inputs/1-10.json hold 6 retrieved chunks each (chunk_num 6; 12-14K characters of lower-cased wiki text, ~3K
# tokens), and blend_musique.py / blend_wikimqa.py load inputs/musique_s.json / wikimqa_s.json, whose queries carry 10
# passages of ~512-600 tokens (not stored here: as the nicemyeong/cacheblend-rag-extended dataset card describes them).
_CACHEBLEND_PROMPT = Assumption("prompt tokens", (3072, 3584, 4096, 4608, 5120, 5632, 6144), 4096,
                                "the abstract gives no prompt length; the release's inputs span ~3K tokens (6 chunks, "
                                "inputs/N.json) to ~6K (10 passages, musique_s.json / wikimqa_s.json)",
                                apply=_cacheblend_prompt)

# APE's GPU is not in the abstract (session 69 I): swept over the H100 variants by their dense bf16 peak (datasheets).
_H100_BY_BF16 = {756: "h100-pcie", 835: "h100-nvl", 989: "h100-sxm"}


def _ape_gpu(claim: Claim, bf16_tflops: float) -> Claim:
    """APE's claim on the H100 variant with this dense bf16 peak (TFLOP/s), both sides."""
    return replace(claim, setup={**claim.setup, "hardware": _H100_BY_BF16[int(bf16_tflops)]})


_APE_GPU = Assumption("H100 bf16 TFLOP/s", (756, 835, 989), 989,
                      "the abstract names no GPU; the paper's introduction (a 128K prefill in 17 s) rules out an "
                      "A100 for an 8B model, leaving the H100 PCIe (756), NVL (835) and SXM (989); session 72 K: "
                      "its release (Infini-AI-Lab/APE) is not indexed", apply=_ape_gpu)

CLAIMS: list[Claim] = [
    Claim(
        technique="hydragen",
        paper="batch size 1K, tensor parallelism across eight A100s: over 3x end-to-end CodeLlama-13b throughput "
              "with a prefix length of 1K",
        claimed=3.0,
        metric="throughput",
        setup={**_HYDRAGEN, **_VLLM_SEQS, "techniques": ["prefix_caching"]},
        variant={"techniques": ["hydragen"]},
        why="agrees: at batch 1K the baseline's decode reads the 1K-token prefix once per sequence (memory bound), "
            "Hydragen reads it once per batch as a matrix product, which is what the paper measures",
        setup_note="baseline vLLM 0.2 as prefix_caching (prefix stored once, attended per sequence)",
        bound="at_least",
        **_HYDRAGEN_VLLM,
    ),
    Claim(
        technique="hydragen",
        paper="up to 32x end-to-end throughput (over 30x with a 16K prefix at batch 1K on eight A100s)",
        claimed=32.0,
        metric="throughput",
        setup={**_HYDRAGEN_LONG, "workload": {**_HYDRAGEN["workload"], **_LONG_PREFIX["workload"]},
               **_VLLM_SEQS, "techniques": ["prefix_caching"]},
        variant={"techniques": ["hydragen"]},
        why="with 40 KV heads the baseline's decode reads each sequence's 16K-token prefix (~13 GB per sequence "
            "over the GPUs) every step, while Hydragen reads it once per batch: per head, the 1024 queries of the "
            "batch against the 16K prefix keys run as one attention problem (inter-sequence batching), priced by "
            "the fitted prefill-attention kernel at ~55% of the A100's peak; whatif lands just under the band: "
            "its vLLM 0.2 baseline already reads the prefix KV at the HBM bound (~722 tok/s), so the gap is in the "
            "kernels (vLLM 0.2's paged decode below that bound, or Hydragen's prefix attention above ~55%)",
        miss="the paper's own decode of the suffix and its merge cost less than whatif's "
             "fitted prefill-attention kernel at ~55% of peak for the shared-prefix attention: whatif's Hydragen "
             "step is 56.6 ms (prefix attention 11.6, suffix decode 10.6, TP all-reduces 12.2, GEMMs ~12.5 ms) and "
             "the band needs ~4% more throughput (6% before vLLM 0.2's detokenizer, session 67: 20 us a sequence, "
             "21 ms of its step at 1,024); the vLLM 0.2 baseline is at the HBM bound (1.42 s a step, 722 tok/s), so "
             "only Hydragen's kernels (unmeasured in /work/shared) could close it",
        setup_note=_NO_13B + "; baseline vLLM 0.2 as prefix_caching",
        **_HYDRAGEN_VLLM,
    ),
    Claim(
        technique="hydragen",
        paper="with a high batch size, increasing the prefix length from 1K to 16K tokens decreases Hydragen "
              "throughput by less than 15%",
        claimed=0.85,
        metric="throughput",
        setup={**_HYDRAGEN_LONG, "techniques": ["hydragen"]},
        variant=_LONG_PREFIX,
        why="the prefix part becomes a tensor-core matrix product whose FLOPs grow 16x but stay comparable to the "
            "linear layers' at batch 1K, so throughput falls by a fraction, not 16x; whatif charges those FLOPs at "
            "FlashAttention efficiency, a little more than the paper's 15%",
        setup_note=_NO_13B,
        bound="at_least",
    ),
    Claim(
        technique="prefix_caching",
        paper="(Hydragen's baseline, vLLM) increasing the prefix length from 1K to 16K tokens: the throughput of "
              "baselines drops by over 90%",
        claimed=0.1,
        metric="throughput",
        setup={**_HYDRAGEN_LONG, **_VLLM_SEQS, "techniques": ["prefix_caching"]},
        variant=_LONG_PREFIX,
        why="agrees: each decode step reads every sequence's 16K-token prefix, so decode becomes KV-read bound "
            "and throughput falls by about the prefix's growth",
        setup_note=_NO_13B + "; vLLM 0.2 on both sides",
        bound="at_most",
        baseline_engine="vllm-0.2", engine_why=_HYDRAGEN_VLLM["engine_why"],
    ),
    Claim(
        technique="cacheblend",
        paper="reduces time-to-first-token (TTFT) by 2.2-3.3X compared with full KV recompute",
        claimed=2.75,
        metric="ttft",
        setup={"model": "mistral-7b", "hardware": "a40",
               "workload": {"batch": 1, "prompt": 4096, "output": 32}, "techniques": []},
        variant={"techniques": [_CACHEBLEND]},
        why="prefill computes the question and 15% of the reused chunks (16% of the prompt) in every layer, while "
            "the chunks' KV loads from CPU memory in parallel; as the release runs it (vllm_blend llama.py, "
            "check_layers=[1]) layer 0 also prefills every loaded token, layer 1 projects their Q/K/V to pick the "
            "deviating ones, and layers 1-31 re-rotate the loaded keys to their new positions: ~4.2x, at the top "
            "of the band (5.1x before session 63 D, which charged the selection as one K/V projection; 3.73x at "
            "the 90% reused share assumed until session 62)",
        setup_note="paper: A40 GPUs (the a40 profile), RAG inputs of retrieved chunks; the prompt's 4K tokens are "
                   "assumed; " + _CACHEBLEND_NOTE,
        paper_range=(2.2, 3.3),
        # scored until session 69 I: over the release's 3K-6K prompts the gain leaves the band's top (4.29x) at 4.6K,
        # 5.1K and 6.1K (4.48x, 4.41x, 4.52x), so the verdict turns on the unstated prompt length
        assumed=_CACHEBLEND_PROMPT,
    ),
    Claim(
        technique="cacheblend",
        paper="increases the inference throughput by 2.8-5X compared with full KV recompute",
        claimed=3.9,
        metric="throughput",
        setup={"model": "mistral-7b", "hardware": "a40",
               "workload": {"batch": 8, "prompt": 4096, "output": 32}, "techniques": []},
        variant={"techniques": [_CACHEBLEND]},
        why="a batch of RAG requests with short answers is prefill bound, so the prefill saving carries over; the "
            "paper's throughput is measured under a request stream with queueing, which a single batch lacks "
            "(2.74x with the release's first layers over every loaded token and its key re-rotation, session 63 D; "
            "3.02x before; 2.52x at the 90% reused share assumed until session 62)",
        setup_note="request arrival process not expressed (a batch of 8 instead); the paper's A40 (the a40 profile); "
                   + _CACHEBLEND_NOTE,
        paper_range=(2.8, 5.0),
        # stays scored (session 69 I): over the same 3K-6K prompts (_CACHEBLEND_PROMPT) it stays in band, 2.46x-3.11x
    ),
    Claim(
        technique="cache_craft",
        paper="with continuous batching on a real production workload, 1.6X speed up in throughput over "
              "prefix-caching (LLaMA-3-8B)",
        claimed=1.6,
        metric="throughput",
        setup={"model": "llama-3-8b", "hardware": "a100-sxm-80gb",
               "workload": {"batch": 32, "prompt": 4096, "output": 64, "shared_prefix": 2007},
               "techniques": ["prefix_caching"]},
        variant={"techniques": ["cache_craft"]},
        why="Cache-Craft computes 25% of the prompt where prefix caching computes 51% (both from the paper); the "
            "gain is the prefill saving diluted by the decode steps both still run",
        setup_note="prefix caching's 49% hit (2007 of 4096 tokens) follows from the paper's 51% and 75% compute "
                   "reductions; batch, prompt and output lengths of the production trace are assumed",
        derived="prefix caching's hit (2007 of 4096) and Cache-Craft's 25% recompute are taken from the paper's "
                "measured compute savings",
    ),
    Claim(
        technique="cache_craft",
        paper="2X reduction in end-to-end response latency over prefix-caching",
        claimed=2.0,
        metric="e2e",
        setup={"model": "llama-3-8b", "hardware": "a100-sxm-80gb",
               "workload": {"batch": 32, "prompt": 4096, "output": 64, "shared_prefix": 2007},
               "techniques": ["prefix_caching"]},
        variant={"techniques": ["cache_craft"]},
        why="at a fixed batch whatif's latency gain equals its throughput gain; the paper's response latency "
            "also includes queueing under load, which shrinks more when prefill gets cheaper",
        setup_note="no arrival process or queueing; lengths assumed as in the throughput claim",
        derived="prefix caching's hit (2007 of 4096) and Cache-Craft's 25% recompute are taken from the paper's "
                "measured compute savings",
    ),
    Claim(
        technique="ape",
        paper="APE can achieve an end-to-end 4.5x speedup by reducing 28x prefilling time for a 128K-length "
              "context (prefill part)",
        claimed=28.0,
        metric="ttft",
        setup={"model": "llama-3.1-8b", "hardware": "h100-sxm",
               "workload": {"batch": 1, "prompt": 130816, "output": 256}, "techniques": []},
        variant={"techniques": ["ape"]},
        why="the contexts' KV (16 GB) loads over PCIe instead of a 128K-token prefill whose attention is "
            "quadratic; whatif's ratio depends on the host link and the GPU's FLOPs, neither stated in the abstract",
        setup_note="GPU and host link assumed (H100 SXM over PCIe Gen5); all contexts cached; 64-token query",
        # scored until session 69 I: the GPU is unstated and the gain crosses the band's top (36.4x) between the H100
        # variants (SXM 30.5x, NVL 35.6x, PCIe 40.2x); the A100 (51.2x) is left out of the range because the paper's
        # own 17 s prefill of 128K is below what an A100's 312 TFLOP/s allows for this model (~6.6 PFLOP: >= 21 s)
        assumed=_APE_GPU,
    ),
    Claim(
        technique="ape",
        paper="APE can achieve an end-to-end 4.5x speedup for a 128K-length context",
        claimed=4.5,
        metric="e2e",
        setup={"model": "llama-3.1-8b", "hardware": "h100-sxm",
               "workload": {"batch": 1, "prompt": 130816, "output": 256}, "techniques": []},
        variant={"techniques": ["ape"]},
        why="after the prefill saving, 255 decode steps over a 128K-token cache remain in both; the output length "
            "sets how much of the 28x survives end to end",
        # the output length is the paper's own: its introduction times exactly this case (session 69 I), and the
        # verdict turns on it (64 tokens: 9.63x, 128: 6.02x, 512: 2.42x, 1024: 1.72x against the band 3.46-5.85x)
        setup_note="256 generated tokens as the paper's introduction times them (arXiv 2502.05431 section 1: "
                   "'prefilling a 128K context takes 17 seconds, whereas generating 256 tokens requires only 6 "
                   "seconds'); GPU assumed",
        # scored until session 69 I: over the H100 variants (_APE_GPU) the gain is 3.37x on the PCIe card (below the
        # band's 3.46x), 4.58x on the NVL and 3.73x on the SXM, so the unstated GPU decides the verdict
        assumed=_APE_GPU,
    ),
    Claim(
        technique="pie",
        paper="PIE reduces computational overhead by over 85% compared to the standard full recomputation approach",
        claimed=6.67,
        metric="ttft",
        setup={"model": "llama-2-7b", "hardware": "a100-sxm-80gb",
               "workload": {"batch": 1, "prompt": 3968, "output": 64}, "techniques": []},
        variant={"techniques": ["pie"]},
        why="only the edited tokens are recomputed and the keys after the edit re-rotated (memory bound), so "
            "whatif's saving is far beyond the paper's lower bound of 85% (6.7x)",
        setup_note="DeepSeek-Coder-6.7B (a Llama-2-7B-shaped MHA model) as llama-2-7b, RepoBench-C 8K prompts cut "
                   "to its 4K window; a 32-token edit in the middle of the prompt",
        bound="at_least",
    ),
    Claim(
        technique="cachegen",
        paper="compared to recent methods that handle long contexts, CacheGen reduces the total delay in fetching "
              "and processing contexts by 2.7-3x",
        claimed=2.85,
        metric="ttft",
        setup={"model": "mistral-7b", "hardware": "a100-sxm-80gb",
               "workload": {"batch": 1, "prompt": 8192, "output": 1},
               "techniques": ["cachegen:bits=8,codec=none"]},
        variant={"techniques": ["cachegen"]},
        why="at 3 Gbit/s fetching is bandwidth bound, so the stream shrinks by the size ratio (8 bits vs ~2 bits "
            "per element, taken from the paper's 3.7-4.3x smaller bitstream); the query's prefill (~16 ms) waits "
            "for the last token chunk on both sides and does not shrink, so the delay falls ~3.9x, at the top of "
            "the band: the paper's per-chunk decode stalls and adaptation controller, not charged, would lower it",
        setup_note="baseline: the paper's 8-bit quantized KV fetched over the same link (bits=8,codec=none); "
                   "an 8128-token context and 64-token query; 3 Gbit/s assumed; the bandwidth claim (3.7-4.3x) "
                   "is the default bits setting, not a test",
        paper_range=(2.7, 3.0),
        assumed=Assumption("bits", (1.5, 2.0, 3.0, 4.0), 2.0, "the default ~2 bits per element was set from the "
                           "paper's 3.7-4.3x smaller bitstream; CacheGen's quantization levels span 1-4 bits",
                           apply=lambda c, v: replace(c, variant={"techniques": [f"cachegen:bits={v:g}"]})),
    ),
    # ---- REFRAG (chunk embeddings of a retrieved context)
    Claim(
        technique="refrag",
        paper="REFRAG: 30.85x the time-to-first-token acceleration (3.75x improvement to previous work) without "
              "loss in perplexity",
        claimed=30.85,
        metric="ttft",
        setup={"model": "llama-2-7b-32k", "hardware": "a100-sxm-80gb",
               "workload": {"batch": 1, "prompt": 16384, "output": 1}, "techniques": []},
        variant={"techniques": ["refrag"]},
        why="the decoder prefills one position per 16-token chunk, so its linear work falls 16x and its attention "
            "256x, but RoBERTa-large still encodes all 16K context tokens per request (~40% of REFRAG's TTFT "
            "here), which holds the gain near 13x. The verdict turns on two settings the abstract does not give: "
            "the chunk size k and whether the chunk embeddings are precomputed with the corpus (the design's "
            "point: they are precomputable and cacheable, and the paper times TTFT with and without that cache, as "
            "the stored summaries of arXiv 2509.01092 describe it); encoded per request no k reaches the band "
            "(7.9x / 12.9x / 17.6x at k = 8 / 16 / 32), precomputed only k = 32 does (10.4x / 21.4x / 38.3x)",
        setup_note="the abstract gives neither the context nor the chunk size of its headline: LLaMA-2-7B (the "
                   "paper's decoder; the 32K-window profile so a 16K context passes the window check), a 16K-token "
                   "retrieved context, REFRAG16 (the paper's main setting), embeddings computed per request, one "
                   "A100 (assumed)",
        assumed=Assumption("chunk", (8, 16, 32, -8, -16, -32), 16,
                           "REFRAG's chunk size k (the paper's REFRAG16 and REFRAG32, and 8 below them); a "
                           "negative value runs k = |value| with the chunk embeddings precomputed (no encoder pass "
                           "per request), a positive one encodes the context per request; neither setting is "
                           "stated with the figure",
                           apply=lambda c, v: replace(c, variant={"techniques": [
                               f"refrag:chunk={abs(v):g},precomputed={'true' if v < 0 else 'false'}"]})),
    ),
    # ---- visual-token pruning at the LLM's input (a multimodal front end)
    Claim(
        technique="visual_token_pruning",
        paper="pruning 50% visual tokens while retaining more than 96% of the original performance across all "
              "benchmarks for all these three MLLMs",
        claimed=None,
        metric="ttft",
        setup={**_LLAVA, "techniques": ["vision_encoder"]},
        variant={"techniques": ["visual_token_pruning:keep=0.5"]},
        why="no speed figure in the abstract (its figure is quality): a check of direction and of the ceiling "
            "the setting allows. Half of the 576 image tokens leave the prompt, so the LLM's prefill shrinks "
            "by ~45% of a 640-token prompt, while the CLIP encoder still runs on every patch and the selector "
            "reads the first layer's attention over the whole prompt; the gain stays well under 2x",
        band=(1.0, 2.0),
        setup_note="LLaVA-1.5-7B (Vicuna-7B v1.5 behind CLIP ViT-L/14-336, 576 image tokens) stands in for the "
                   "paper's Qwen2-VL, LLaVA-OneVision and VILA1.5; one image and a 64-token instruction, one A100 "
                   "(assumed); the 50% share is the paper's stated setting",
    ),
    # ---- CoLoR (passages rewritten shorter by a compressor model)
    Claim(
        technique="color",
        paper="CoLoR improves the retrieval performance by 6% while compressing the in-context size by a factor "
              "of 1.91",
        claimed=1.91,
        metric="kv_cache_bytes",
        setup={"model": "llama-3.1-8b", "hardware": "h100-sxm",
               "workload": {"batch": 1, "prompt": 129024, "output": 64}, "techniques": []},
        variant={"techniques": ["color"]},
        why="the reader caches context / 1.91 + query positions, so its cache shrinks by the ratio (a little "
            "less with the generated tokens); the same setup's TTFT falls ~3.8x with passages compressed "
            "offline (the paper's pipeline) and ~1.3x when the Phi-3-mini compressor runs per request",
        illustrative="the compression ratio is the technique's input (a property of the compressor's outputs), "
                     "set from this very figure, so whatif only reproduces it",
        band=(1.7, 2.0),
        setup_note="LOFT 128K-token corpora in context; the paper's readers are API models (GPT-4o), so "
                   "Llama-3.1-8B on one H100 stands in; passages are all of the prompt (assumed)",
    ),
    # ---- encoder-decoder graphs ("Return of the Encoder")
    Claim(
        technique="encoder_decoder",
        paper="encoder-decoder architectures achieve 47% lower first-token latency ... compared to decoder-only "
              "models on edge devices",
        claimed=1 / (1 - 0.47),
        metric="ttft",
        setup={**_SLM, "techniques": []},
        variant={"techniques": [_ENC_DEC]},
        why="the prompt passes through the encoder's 16 layers instead of the decoder-only model's 24, with twice "
            "the attention pairs (bidirectional) and each of the 8 decoder layers' cross K/V projection, so TTFT "
            "falls ~1.2x; with the released 2/3-1/3 split the encoder is two thirds of the model's depth, so a "
            "roofline gain over a parameter-matched decoder-only prefill stays well under 1.5x",
        miss="setup the abstract does not give: the lengths and the devices (edge GPU, CPU, NPU; whatif has no "
             "profile for them) are not stated; with the release's 2/3-1/3 split (16 + 8 of a 24-layer stand-in) "
             "whatif's gain is ~1.2x (with the release's own Mu shapes, 20 + 10 layers against a 30-layer "
             "decoder-only of the same blocks, also ~1.2x); the paper's 1.89x needs a cost whatif does not see "
             "in the decoder-only prefill. Not a FLOP effect: the release's README (microsoft/encoder-decoder-slm) "
             "states 22% fewer FLOPs for a sequence's generation, while whatif's split already saves 35% (31% of "
             "the prefill's); its per-platform latencies (GPU 86 ms, CPU 1591 ms, NPU 189 ms for a 330M model, "
             "what they time not stated) sit ~8x above whatif's L4 prefill (9.9 ms), a framework-bound regime",
        setup_note="Qwen2.5-0.5B (a sub-1B GQA + RoPE model, the paper's ingredients) on an L4 (the nearest "
                   "low-power GPU profiled); decoder-only vs its 24 layers split 16 + 8 (the release's 2/3-1/3 "
                   "encoder-decoder split, MuConfig 20 + 10); 512-token prompt, 128 generated, batch 1 (assumed)",
    ),
    Claim(
        technique="encoder_decoder",
        paper="encoder-decoder architectures achieve ... 4.7x higher throughput compared to decoder-only models on "
              "edge devices",
        claimed=4.7,
        metric="throughput",
        setup={**_SLM, "techniques": []},
        variant={"techniques": [_ENC_DEC]},
        why="each decode step runs the 8 decoder layers instead of 24 and reads a third of the self-attention "
            "cache (plus the cross K/V of the prompt), so batch-1 throughput rises ~2x; 4.7x needs a mechanism "
            "the abstract does not name (a batch or device effect), which whatif cannot reconstruct from it",
        miss="setup the abstract does not give: lengths, batch and devices are not stated; with the release's "
             "2/3-1/3 split whatif's gain is ~2x (with the release's Mu shapes, 20 + 10 layers against a 30-layer "
             "decoder-only, ~2.5x); 4.7x needs a batch or device effect the abstract does not name (the release's "
             "own generate() keeps no KV cache, re-running the decoder over all generated tokens each step, "
             "which would favour the encoder-decoder far more, but the paper's figure describes cached decoding); "
             "the README's 22% fewer FLOPs a sequence (whatif's split: 35%) puts the 4.7x outside compute: a "
             "per-step cost growing with the decoder-only's input KV or depth on the edge devices, not stated",
        setup_note="as the latency claim",
    ),
]
