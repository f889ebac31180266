"""Claims of catalogue family H (see ../shared/techniques.md).

Bands come from the mechanism, set before the estimate was run: a step that runs a share s of the
layers costs s of the per-layer work, while the embedding, LM head and sampling stay (Amdahl), so
the gain lies between 1 / (s x per-layer share + the rest) and 1 / s.
"""
from .claim import Claim

_A100 = "a100-sxm-80gb"

CLAIMS: list[Claim] = [
    Claim(
        technique="skip_decode",
        paper="SkipDecode can obtain 2x to 5x inference speedups with negligible regression across a variety of "
              "tasks. This is achieved using OPT models of 1.3 billion and 6.7 billion parameters (2x end)",
        claimed=2.0,
        metric="tpot",
        setup={"model": "opt-1.3b", "hardware": _A100, "workload": {"batch": 16, "prompt": 512, "output": 128}},
        variant={"techniques": ["skip_decode:max_layers=0.75,min_layers=0.25,prompt=512,length=128"]},
        why="the schedule runs half of OPT-1.3B's 24 layers on average over the generation, so the per-layer "
            "kernels (weights, KV reads, launches) halve; the tied 50K-row LM head (8% of the weights), the "
            "embedding and sampling still run every step, which keeps whatif just under the nominal 2x",
        band=(1.6, 2.0),
        setup_note="the abstract gives no schedule: 75% to 25% of the layers, mean 50% (a 2x layer budget) is "
                   "assumed, as are the A100, batch 16 and the 512/128-token lengths; decode step time (TPOT), "
                   "prefill unchanged",
        illustrative="the layer schedule (a mean of 50% of the layers) is one over the claimed 2x",
    ),
    Claim(
        technique="skip_decode",
        paper="SkipDecode can obtain 2x to 5x inference speedups with negligible regression across a variety of "
              "tasks. This is achieved using OPT models of 1.3 billion and 6.7 billion parameters (5x end)",
        claimed=5.0,
        metric="tpot",
        setup={"model": "opt-6.7b", "hardware": _A100, "workload": {"batch": 16, "prompt": 512, "output": 128}},
        variant={"techniques": ["skip_decode:max_layers=0.3,min_layers=0.1,prompt=512,length=128"]},
        why="a schedule averaging 20% of the layers gives a 5x layer budget; whatif's step keeps the parts no "
            "layer budget removes (LM head, embedding, sampling, their launches), about 3% of OPT-6.7B's step, "
            "so the 5x becomes about 4.6x: the paper's figure reads as the layer ratio",
        band=(3.5, 5.0),
        setup_note="schedule assumed (30% to 10% of the 32 layers, mean 20%), as are the A100, batch 16 and the "
                   "lengths; decode step time (TPOT)",
        illustrative="the layer schedule (a mean of 20% of the layers) is one over the claimed 5x",
    ),
    Claim(
        technique="early_exit",
        paper="(SkipDecode, on token-level early exit) they cannot be readily applied for batch inferencing and "
              "Key-Value caching ... because they have to wait until the last token in a batch exits",
        claimed=None,
        metric="tpot",
        setup={"model": "opt-6.7b", "hardware": _A100, "workload": {"batch": 16, "prompt": 512, "output": 128}},
        variant={"techniques": ["early_exit"]},
        why="agrees: with 16 rows exiting uniformly between 25% and 100% of the layers, the deepest row runs "
            "1 - 0.75/17 = 96% of them on average, and filling the skipped layers' K/V for later tokens costs "
            "their K/V projections: the batch gains almost nothing (at batch 1 the same exit law gives ~1.4x)",
        band=(0.95, 1.1),
        setup_note="CALM-style exits with an assumed uniform depth law and a cheap state classifier",
    ),
    Claim(
        technique="ffn_skip",
        paper="FFN-SkipLLM ... can skip 25-30% of FFN blocks of LLMs with marginal change in performance ... "
              "without any requirement to handle KV cache",
        claimed=None,
        metric="tpot",
        setup={"model": "llama-2-7b", "hardware": _A100, "workload": {"batch": 1, "prompt": 512, "output": 128}},
        variant={"techniques": ["ffn_skip:share=0.25"]},
        why="the abstract gives no speed figure; whatif predicts what skipping a quarter of the FFN blocks buys at "
            "batch 1: the FFN is 2/3 of a Llama layer's weights, so a step reads ~16% fewer bytes (~1.2x). With "
            "per-token choices a batch runs a block unless every row skips it, so at batch 8 the gain is gone",
        band=(1.1, 1.25),
        setup_note="model, GPU and lengths assumed (the paper evaluates LLaMa models on knowledge-intensive tasks)",
    ),
    Claim(
        technique="layer_skip",
        paper="(Unified Layer Skipping) selects the number of layers to skip computation based solely on the target "
              "speedup ratio ... naturally supports popular acceleration techniques such as batch decoding and KV "
              "caching (target 2x: half the layers)",
        claimed=2.0,
        metric="tpot",
        setup={"model": "llama-2-7b", "hardware": _A100, "workload": {"batch": 8, "prompt": 512, "output": 128}},
        variant={"techniques": ["layer_skip:share=0.5"]},
        why="batch-synchronous: every sequence skips the same half of the layers, so the per-layer work halves at "
            "any batch; the LM head and embedding (4% of Llama-2-7B's weights) keep the step just above half, so "
            "whatif lands a little under the target ratio the skip count was set from",
        band=(1.7, 2.0),
        setup_note="the paper's tasks (translation, summarization) and models are not in the abstract; Llama-2-7B "
                   "on an A100 at batch 8 assumed",
        illustrative="the skip share (0.5) is one over the claimed 2x target",
    ),
    Claim(
        technique="layer_skip",
        paper="(FiRST) reduces inference latency by using layer-specific routers to select a subset of transformer "
              "layers adaptively for each input sequence - the prompt (during the prefill stage) decides which "
              "layers will be skipped during decoding",
        claimed=None,
        metric="tpot",
        setup={"model": "llama-3.2-3b", "hardware": "rtx-4090", "workload": {"batch": 1, "prompt": 512,
                                                                             "output": 128}},
        variant={"techniques": ["layer_skip:share=0.25,per_sequence=true"]},
        why="the abstract gives no figure; at batch 1 (the edge setting it targets) the sequence's own set is what "
            "runs, so skipping a quarter of the layers gives ~1.3x less the tied 128K-row LM head's share; in a "
            "batch each sequence's set differs and the union runs: 1 - 0.25^B of the layers, no gain by batch 8",
        band=(1.2, 1.33),
        setup_note="skip share (25%), model and GPU assumed; FiRST's router cost is not modelled",
    ),
]
