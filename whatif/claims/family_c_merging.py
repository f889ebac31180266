"""Claims of catalogue family C's merging and draft-scored variants (EMS, KVMerger, PrefixKV, Elastic Cache,
TIM, SpecKV, SpecPC; see ../shared/techniques.md). None of their abstracts states a speed or memory figure
(their figures are quality at a budget), so each claim states no figure: a check of direction, with a band
from the mechanism's ceiling, never from a result."""
from .claim import Claim
from .family_c import setup

_LLAVA = {"model": "vicuna-7b", "hardware": "a100-sxm-80gb", "workload": {"batch": 1, "prompt": 640, "output": 512},
          "techniques": ["vision_encoder"]}
_LLAVA_NOTE = ("LLaVA-1.5-7B (Vicuna-7B v1.5 behind CLIP ViT-L/14-336, 576 image tokens and a 64-token instruction) "
               "on one A100; 512 generated tokens (the papers' outputs are not in the abstracts); kept 0.5 assumed")

CLAIMS: list[Claim] = [
    Claim(
        technique="kvmerger",
        paper="KVMerger: 'adaptive KV cache compression for long-context tasks without significant performance "
              "degradation under constrained memory budgets' (50% and 35% KV cache budgets)",
        claimed=None, metric="throughput_at_max_batch",
        setup=setup("llama-2-7b", 1, 3500, 512),
        variant={"techniques": ["kvmerger:kept=0.5"]},
        why="no speed figure (the abstract's figures are quality at a budget): a direction check. Merging half "
            "the prompt holds 1,750 + 512 generated tokens a sequence instead of 4,012, so the batch that fits "
            "can grow at most 1.77x; the merge reads the prompt's K/V once",
        setup_note="Llama-2-7B (the paper's Llama2-7B-chat shape) on one A100, a LongBench-length prompt of 3.5K "
                   "tokens (the 4K window less the output); the paper's 50% budget",
        band=(1.0, 2.0),
    ),
    Claim(
        technique="ems",
        paper="EMS: 'preserves 95% retrieval accuracy with a cache budget less than 2% of the context length' "
              "(256-token budget)",
        claimed=None, metric="tpot",
        setup=setup("llama-3.1-8b", 1, 32768, 256),
        variant={"techniques": ["ems:budget=256"]},
        why="no speed figure: a direction check. At batch 1 a step reads 16 GB of weights and 4.3 GB of KV at "
            "32K; a 256-token budget (plus the generated tokens) removes nearly all of the KV read, so the "
            "gain is at most (16 + 4.3) / 16 = 1.27x",
        setup_note="Llama-3.1-8B (one of the paper's four LLMs is a Llama-3 8B) at 32K tokens, batch 1; the "
                   "paper's 256-token budget (under 1% of the context)",
        band=(1.0, 1.3),
    ),
    Claim(
        technique="elastic_cache",
        paper="Elastic Cache 'boosts efficiency' with 'an arbitrary acceleration ratio' (LVLMs)",
        claimed=None, metric="throughput_at_max_batch",
        setup=_LLAVA,
        variant={"techniques": ["vision_encoder", "elastic_cache:kept=0.5"]},
        why="no speed figure: a direction check. Half of each sequence's KV is merged away, so at most twice "
            "the sequences fit; at batch 1 a step is weight-bound and barely changes, which is why the gain "
            "shows at the largest batch",
        setup_note=_LLAVA_NOTE,
        band=(1.0, 2.0),
    ),
    Claim(
        technique="prefixkv",
        paper="PrefixKV 'exhibits superior inference efficiency and generation quality trade-offs' (LVLMs)",
        claimed=None, metric="throughput_at_max_batch",
        setup=_LLAVA,
        variant={"techniques": ["vision_encoder", "prefixkv:kept=0.5"]},
        why="no speed figure: a direction check. Per-layer budgets whose mean is half the tokens cost what a "
            "uniform half does (memory and decode attention are linear in each layer's tokens): at most twice "
            "the sequences fit, less the importance scoring; the uneven split buys quality, not speed",
        setup_note=_LLAVA_NOTE,
        band=(1.0, 2.0),
    ),
    Claim(
        technique="tim",
        paper="TIM/TIMRUN 'sustains high inference throughput, even when manipulating up to 90% of the KV "
              "cache in GPU memory'",
        claimed=None, metric="throughput",
        setup=setup("qwen3-8b", 16, 1024, 16384),
        variant={"techniques": ["tim:kept=0.1"]},
        why="no figure: a direction check that pruning costs less than it saves. Each pruning moves and "
            "re-rotates the kept tokens (amortized over a 256-token subtask), while every step reads a tenth "
            "of the generated tokens' KV; over 16K generated tokens the KV read dominates the baseline",
        setup_note="TIM-8B is not shipped: Qwen3-8B stands in (assumed to be its base); batch 16, a 1K prompt "
                   "and 16K generated tokens of reasoning (assumed); 90% of the generated tokens' KV pruned, "
                   "the prompt kept",
        band=(1.0, float("inf")),
    ),
    Claim(
        technique="speckv",
        paper="SpecKV: 'higher accuracy than existing baselines, while preserving the same improvements in "
              "memory usage, latency, and throughput'",
        claimed=None, metric="tpot",
        setup=setup("llama-3.1-8b", 1, 32768, 256, techniques=["snapkv:budget=1024"]),
        variant={"techniques": ["speckv:budget=1024"]},
        why="a check against SnapKV at the same budget: a decode step reads the same 1,024 prompt tokens (plus "
            "the generated ones, which SnapKV counts inside its budget), so decode is the same within a few "
            "per cent. Not the same: the first token, which waits for the 1B draft's prefill and 64 draft "
            "steps (whatif: ~0.8x SnapKV's TTFT at 32K)",
        setup_note="Llama-3.1-8B with Llama-3.2-1B drafting (assumed pairing) at 32K tokens, batch 1; budget 1024 "
                   "and a 64-token lookahead assumed (not in the abstract)",
        band=(0.9, 1.05),
    ),
    Claim(
        technique="specpc",
        paper="SpecPC: 'uses the draft model's attention activations to identify and discard unimportant "
              "prompt tokens' (same latency improvements as prompt compression)",
        claimed=None, metric="ttft",
        setup=setup("llama-3.1-8b", 1, 32768, 256),
        variant={"techniques": ["specpc:keep=0.25"]},
        why="no figure: a direction check. The target prefills a quarter of the prompt, so its prefill falls "
            "between 4x (linear work) and 16x (attention, quadratic); the 1B draft's prefill over the whole "
            "prompt is paid first",
        setup_note="Llama-3.1-8B with Llama-3.2-1B drafting (assumed pairing) at 32K tokens, batch 1; a quarter "
                   "of the prompt kept (assumed)",
        band=(1.0, 16.0),
    ),
]
