"""Claims of catalogue family F's single-model and nested drafters (Hidden Transfer, S2D; see
../shared/techniques.md). Neither abstract states a figure or an acceptance rate, so each claim compares the
technique with the drafter it competes with at the same assumed tree and acceptance: what differs is the
cost of a round, which whatif predicts; the acceptance each paper improves is not predicted."""
from .claim import Claim

_A100 = "a100-sxm-80gb"
_VICUNA = {"model": "vicuna-7b", "hardware": _A100, "workload": {"batch": 1, "prompt": 128, "output": 512}}

CLAIMS: list[Claim] = [
    Claim(
        technique="hidden_transfer",
        paper="Hidden Transfer: 'we outperform all the single-model acceleration techniques, including Medusa "
              "and Self-Speculative decoding'",
        claimed=None, metric="tpot",
        setup={**_VICUNA, "techniques": ["medusa:heads=3,tree=4x2x1,alphas=0.6/0.4/0.3"]},
        variant={"techniques": ["hidden_transfer:k=3,tree=4x2x1,alphas=0.6/0.4/0.3"]},
        why="at the same tree and acceptance the two differ only in a round's drafting work: Medusa reads 3 "
            "heads (a residual block and a 32K-vocabulary LM head each, ~0.9 GB), hidden transfer 3 hidden x "
            "hidden transfer layers and 3 more rows through the upper layers, nearly free in a weight-bound "
            "step; so it is a few per cent faster per round, and any larger lead is acceptance",
        setup_note="Vicuna-7B on one A100, batch 1 (a Medusa setting); tree 4x2x1 and acceptance 0.6/0.4/0.3 "
                   "assumed for both, transfer at half depth assumed",
        band=(1.0, 1.2),
    ),
    Claim(
        technique="s2d",
        paper="S2D: 'our draft models perform better than baselines for multiple target models at the same time' "
              "(Vicuna 7B, 13B, LLama Chat 70B)",
        claimed=None, metric="tpot",
        setup={"model": "vicuna-13b", "hardware": _A100, "workload": {"batch": 1, "prompt": 128, "output": 512},
               "techniques": ["speculative:draft=vicuna-68m,k=4,alpha=0.7"]},
        variant={"techniques": ["s2d:draft=vicuna-68m,k=4,alpha=0.7,draft_layers=0.5"]},
        why="one target of the several a sorted draft serves: drafting with half of the draft's layers at the "
            "same acceptance saves half of the drafter's (already small) step; the verify pass dominates, so "
            "the gain is at most the draft's share of a round. Sharing one draft among targets (the paper's "
            "point) saves memory across deployments, which one scenario does not hold",
        setup_note="Vicuna-13B drafted by Vicuna-68M on one A100, batch 1; acceptance 0.7 and half the draft's "
                   "layers assumed for both sides (the abstract gives neither)",
        band=(1.0, 1.2),
    ),
    Claim(
        technique="eagle",
        paper="Scylla: 'Industrial inference engine deployments demonstrate 2X decoding throughput improvements "
              "over EAGLE2 (Table 5)'; '1.5-2.2 higher acceptance rate than EAGLE2'",
        claimed=2.0, metric="tpot",
        setup={"model": "llama-3.1-8b", "hardware": "h100-sxm", "workload": {"batch": 8, "prompt": 512,
                                                                              "output": 512},
               "techniques": ["eagle:alpha=0.7"]},
        variant={"techniques": ["eagle:alpha=0.85,tree=3x2x2x1x1x1x1x1"]},
        why="both sides draft with a one-layer feature head; Scylla's larger, longer-trained drafter accepts more "
            "tokens per round (a deeper tree at a higher per-token acceptance: 6.0 against 3.7 here); at batch 8 "
            "the three extra draft steps and the wider verify pass (every node of 8 sequences) cost as much as the "
            "extra tokens save, so whatif's gain is ~1x. Scylla's bigger draft model (its capacity scaling) is "
            "charged as EAGLE's one layer",
        setup_note="Llama-3.1-8B on one H100, batch 8, 512+512 tokens; EAGLE-2 at 0.7 acceptance per draft token "
                   "and Scylla at 0.85 with an 8-deep tree (about 2 more tokens per round, the abstract's "
                   "'1.5-2.2 higher')",
        illustrative="every number of the setup is assumed: Table 5's engine, model, GPU and batch are not in the "
                     "abstract, and the acceptance rates are read from its '1.5-2.2 higher'",
    ),
]
