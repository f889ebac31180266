"""Claims of catalogue family I about the memory tiers themselves (GH200, CXL, disk-streamed weights),
checked with placement alone; the offloading techniques' claims are in family_i_weights/_kv."""
from dataclasses import replace

from .claim import Assumption, Claim

# "Characterizing ... loosely- and closely-coupled CPU-GPU systems" (SKIP/TKLQT): Llama 3.2-1B prefill
# on PCIe A100/H100 hosts versus GH200. The prompt length and the batch of the 1.9-2.7x figure were not
# found; 512 tokens at batch 64 (four full 8K-token prefill passes) is assumed.
_GH200_PREFILL = {"model": "llama-3.2-1b", "workload": {"batch": 64, "prompt": 512, "output": 2}, "cuda_graphs": False}
_GH200_NOTE = ("prompt length and batch of the paper's figure not found: prompt 512 at batch 64 assumed (64 x 128 to "
               "64 x 2048 and 128 x 512 move the gains by under 1%); the paper's GH200 memory variant is not stated: "
               "gh200-96gb (HBM3, 4 TB/s) assumed")
# GH200 ships with 96 GB HBM3 (4 TB/s) or 144 GB HBM3e (4.9 TB/s), same Hopper die and clocks (hardware profiles,
# NVIDIA datasheet); the paper names neither, so its variant is an assumed input swept over both.
_GH200_VARIANTS = {96: "gh200-96gb", 144: "gh200-144gb"}


def _gh200_hbm(claim: Claim, gb: float) -> Claim:
    """The claim with the GH200 of `gb` GB of HBM as the closely-coupled side."""
    return replace(claim, variant={**claim.variant, "hardware": _GH200_VARIANTS[int(gb)]})


_GH200_HBM = Assumption("GH200 HBM (GB)", (96, 144), 96, "the paper names no GH200 variant; GH200 ships with 96 GB "
                        "HBM3 (4 TB/s) or 144 GB HBM3e (4.9 TB/s); session 72 K: its arXiv page "
                        "(ar5iv 2504.11750) is stored only from its start, the author's page "
                        "(prabsy96.github.io) names none", apply=_gh200_hbm)
_LAUNCH_WHY = ("whatif gives every host the same assumed 4 us kernel launch (the profile field); Grace's launch and "
               "queuing time per kernel was not found, so the mechanism (the launch queue, estimate.py) is there "
               "but its Grace input is not: give it with --launch-us (or a GPU profile's launch_overhead)")

# TPI-LLM: Llama 2-70B over 8 emulated edge devices, weights streamed from disk by a sliding window of
# layers (kept in memory two at a time here), all-reduce over a slow network.
# Full precision, as the authors run it (Lizonghang/TPI-LLM README: "run Yi-34B in full precision", its results table
# "Model (FP32)"), which the paper's own figures agree with: 70B FP32 weights over 8 devices are 35 GB each, so 3.1 GB
# is the stated 90% cut (in 16 bits it would be 82%).
_TPI = {"model": "llama-2-70b", "hardware": "dgx-h100", "gpus": 8,
        "precision": {"weight": "fp32", "activation": "fp32", "kv": "fp32"},
        "workload": {"batch": 1, "prompt": 128, "output": 32}, "add_tiers": ["nvme-gen4-ssd:8"]}

CLAIMS: list[Claim] = [
    Claim(
        technique="gh200",
        paper="closely-coupled GH200 achieves 1.9x-2.7x faster prefill latency for Llama 3.2-1B than loosely-coupled "
              "PCIe H100 at large batch sizes",
        claimed=1.9,
        metric="ttft",
        setup={**_GH200_PREFILL, "hardware": "h100-pcie"},
        variant={"hardware": "gh200-96gb"},
        why="large-batch prefill is compute- and HBM-bound, so whatif's ratio is the two GPUs' ceilings (989 vs 756 "
            "TFLOP/s, 4 or 4.9 vs 2 TB/s) scaled by the same efficiency model: 1.44x against the 96 GB GH200, 1.51x "
            "against the 144 GB HBM3e one, both below the paper's 1.9x low end (the band starts at 1.46x); the "
            "paper's larger gap likely includes the PCIe H100's lower sustained clocks and its host's launch "
            "overheads, which whatif does not model (under the hf-transformers engine's eager attention the ratio "
            "is 1.42x: the scores' HBM traffic does not move it)",
        setup_note=_GH200_NOTE,
        paper_range=(1.9, 2.7),
        assumed=_GH200_HBM,
    ),
    Claim(
        technique="gh200",
        paper="closely-coupled GH200 achieves 1.9x-2.7x faster prefill latency for Llama 3.2-1B than loosely-coupled "
              "PCIe A100 at large batch sizes",
        claimed=2.7,
        metric="ttft",
        setup={**_GH200_PREFILL, "hardware": "a100-pcie-80gb"},
        variant={"hardware": "gh200-96gb"},
        why="agrees roughly: against the A100 (312 TFLOP/s, 1.9 TB/s) the ceilings alone give ~2.9x, a little above "
            "the paper's upper end",
        setup_note=_GH200_NOTE + " (the 144 GB HBM3e GH200 gives 2.96x, in band alike)",
        paper_range=(1.9, 2.7),
    ),
    Claim(
        technique="gh200",
        paper="GH200 remains CPU-bound up to 4x larger batch sizes than loosely-coupled systems, with higher latency "
              "at low batch sizes (Grace CPU launch and queuing time)",
        claimed=None,
        metric="ttft",
        setup={"model": "llama-3.2-1b", "hardware": "h100-pcie", "workload": {"batch": 1, "prompt": 128, "output": 2},
               "cuda_graphs": False},
        variant={"hardware": "gh200-96gb"},
        why="misses the direction: with equal launch costs whatif finds GH200 faster at batch 1 too (its kernels are "
            "shorter, so it is launch-bound to a somewhat larger batch, but not slower); " + _LAUNCH_WHY,
        setup_note="batch 1, 128-token prompt, eager mode (no CUDA graphs) assumed",
    ),
    Claim(
        technique="cxl",
        paper="(CXL memory for long-context LLM work) employing multiple CXL add-in cards significantly reduces "
              "bandwidth contention",
        claimed=None,
        metric="tpot",
        setup={"model": "llama-3.1-8b", "hardware": "h100-pcie-host", "workload": {"batch": 8, "prompt": 60000,
                                                                                   "output": 256},
               "place": ["kv=cxl"], "add_tiers": ["cxl-micron-cz120-256gb:1"]},
        variant={"add_tiers": ["cxl-micron-cz120-256gb:2"]},
        why="agrees in mechanism: with the KV on CXL, decode reads it over the cards' PCIe 5.0 x8 links, so a second "
            "card doubles the bandwidth (32 -> 64 GB/s) until the GPU's x16 link caps it; the paper measures CPU-side "
            "fine-tuning (optimizer steps), which whatif does not model, so this is inference's version of the claim",
        band=(1.6, 2.05),
        setup_note="the paper studies fine-tuning with CPU offloading; expressed as decode with the KV cache on CXL",
    ),
    Claim(
        technique="tpi_llm",
        paper="TPI-LLM cuts the peak memory footprint of Llama 2-70B by 90%, 3.1 GB of memory for 70B-scale models "
              "(sliding window of layer weights streamed from disk)",
        claimed=10.0,
        metric="hbm_bytes",
        setup=_TPI,
        variant={"place": ["weights=nvme:1"]},
        why="the mechanism: streaming every layer from disk leaves two layers' weights, the embeddings and the "
            "runtime reserve in device memory (~4.3 GB of the baseline's ~38 GB of FP32 weights and reserve per "
            "device); the paper's 3.1 GB is a little less, as the emulated H100s carry vLLM's large-GPU activation "
            "reserve (8192 tokens per step) that TPI-LLM's own framework on an 8 GB device does not hold",
        setup_note="8 emulated edge devices (8 GB each) as 8 H100s with one NVMe SSD each, in FP32 as the authors "
                   "run it (the repository README); the paper's network all-reduce and latency claims are not "
                   "expressed",
    ),
]
