"""Claims of catalogue family K (see ../shared/techniques.md)."""
from .claim import Claim

_A100_DECODE = {"model": "llama-2-7b", "hardware": "a100-sxm-80gb",
                "workload": {"batch": 1, "prompt": 3840, "output": 256}}

CLAIMS: list[Claim] = [
    Claim(
        technique="lean_attention",
        paper="an average of 2.6x attention execution speedup over FlashAttention-2 (decode phase)",
        claimed=2.6,
        metric="decode_attention_s",
        setup={**_A100_DECODE, "techniques": ["no_split_decode"]},
        variant={"techniques": ["lean_attention"]},
        why="FlashAttention-2 runs one block per (sequence, KV head): 32 blocks leave 76 of the A100's 108 SMs and "
            "their bandwidth idle; stream-K spreads the context over all SMs, so whatif's gain is about 108/32 "
            "less the tile tail and the fix-up; the paper averages over many head counts and lengths",
        setup_note="one configuration (Llama-2-7B shapes, batch 1, 4K context) instead of the paper's sweep",
    ),
    Claim(
        technique="lean_attention",
        paper="up to 8.33x attention speedup over FlashAttention-2 for 512k context lengths",
        claimed=8.33,
        metric="decode_attention_s",
        setup={"model": "llama-3.1-8b", "hardware": "a100-sxm-80gb",
               "workload": {"batch": 1, "prompt": 130816, "output": 256}, "techniques": ["no_split_decode"]},
        variant={"techniques": ["lean_attention"]},
        why="whatif's gain is the occupancy ratio, SMs / (sequences x KV heads): with 8 KV heads 100 of 108 SMs "
            "idle under FlashAttention-2, hence ~13x at any long context; the paper's gain grows with context and "
            "depends on head counts it does not state in the abstract",
        setup_note="no model reaches 512K tokens; Llama-3.1-8B at 128K (GQA, 8 KV heads) instead",
        miss="setup whatif cannot express: whatif's gain is the occupancy ratio SMs / (sequences x KV heads), ~12x at "
             "any long context with 8 KV heads; the paper's gain grows with context and depends on head counts the "
             "abstract does not state",
    ),
    Claim(
        technique="paged_kv",
        paper="(vAttention) generates tokens up to 1.97x faster than vLLM: contiguous KV with unchanged attention "
              "kernels versus PagedAttention",
        claimed=1.97,
        metric="tpot",
        setup={"model": "llama-3-8b", "hardware": "a100-sxm-80gb",
               "workload": {"batch": 32, "prompt": 4096, "output": 256}, "techniques": ["paged_kv"]},
        variant={"techniques": []},
        why="whatif can say what paging moves (a 4-byte block-table entry per 16 tokens, address arithmetic, up to "
            "15 padded tokens per sequence): about 0.1% of a decode step; it cannot say how much slower a given paged "
            "kernel is than a contiguous one (vLLM's kernel versus FlashAttention-2/FlashInfer), which is kernel "
            "quality, so the rest of the 1.97x is outside the model (a calibration of the paged kernel would carry it)",
        setup_note="vAttention's contiguous layout is whatif's default cache; batch and lengths assumed",
        miss="kernel quality (invisible to a roofline): paging moves ~0.1% more bytes; the rest of the 1.97x is how "
             "much slower vLLM's paged kernel is than FlashAttention-2 / FlashInfer, a calibration of the kernel, not "
             "a mechanism",
    ),
    Claim(
        technique="paged_kv",
        paper="(vLLM) near-zero waste in KV cache memory: a sequence wastes at most the unused part of its last block",
        claimed=None,
        metric="kv_cache_bytes",
        setup={"model": "llama-3-8b", "hardware": "a100-sxm-80gb",
               "workload": {"batch": 32, "prompt": 4000, "output": 250}, "techniques": []},
        variant={"techniques": ["paged_kv"]},
        why="agrees: 4250 tokens round up to 4256 in 16-token blocks, a 0.14% overhead over an exact cache",
        band=(0.99, 1.0),
    ),
    Claim(
        technique="naive_attention",
        paper="(The I/O Complexity of Attention) standard attention moves Theta(Nd + N^2) bytes; FlashAttention "
              "Theta(N^2 d^2 / M), optimal for M >= d^2, so it avoids the N^2 score traffic",
        claimed=None,
        metric="prefill_attention_s",
        setup={"model": "llama-2-7b", "hardware": "a100-sxm-80gb",
               "workload": {"batch": 1, "prompt": 3968, "output": 128}, "techniques": ["naive_attention"]},
        variant={"techniques": []},
        why="standard attention writes and reads the 4K x 4K score and probability matrices per head (memory "
            "bound, and it computes the masked half too) where FlashAttention is compute bound on half the pairs",
        band=(2.0, 20.0),
        setup_note="asymptotic claim; checked as FlashAttention's prefill attention time gain at N = 4K",
    ),
]
