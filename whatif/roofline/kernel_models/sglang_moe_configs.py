"""The tuned Triton fused-MoE configs SGLang 0.5.14 ships for the block-FP8 shapes of the fit's corpus rows
(validate/moe_fit.FITS fused_moe_triton/fp8: aiconfigurator's sglang_fused_moe_triton fp8_block rows, collector
SGLang 0.5.14 on H100 and B200), as (BLOCK_SIZE_M, BLOCK_SIZE_N) per M key.

Source: sglang-0.5.14-cp311-cp311-manylinux_2_34_x86_64.whl from PyPI (sha256 4fe16056...00fc99),
sglang/srt/layers/moe/moe_runner/triton_utils/configs/triton_<version>/E={E},N={N},device_name={device},
dtype=fp8_w8a8,block_shape=[128, 128].json. The collector (ai-dynamo/aiconfigurator collector/sglang/collect_moe.py
`benchmark`) calls `get_moe_configs(E / ep, inter / moe_tp, "fp8_w8a8", 128, 128)` and runs the file's config at the
M key nearest the call's tokens, else `get_default_config` (block FP8: BLOCK_SIZE_M 64, BLOCK_SIZE_N 128 at every M).
`get_moe_configs` (fused_moe_triton_config.py) reads the running Triton's folder first, then every shipped
triton_* folder newest first, so the folder below is the one any Triton without its own file falls back to (the
wheel's triton_3_6_0 holds none of these). Only 8 (GPU, E, N) shapes of the table have a file: 243 of 13,527 B200
rows and 1,620 of 38,799 H100 rows; every other row ran the default."""
from __future__ import annotations

DEFAULT_TILE = (64, 128)   # get_default_config, block FP8 [128, 128]: BLOCK_SIZE_M 64, BLOCK_SIZE_N block_n

# corpus GPU -> torch.cuda.get_device_name() as the config file names it
DEVICE_NAME = {"h100_sxm": "NVIDIA_H100_80GB_HBM3", "b200_sxm": "NVIDIA_B200"}

# (device, E experts on the GPU, N = intermediate per moe_tp rank) -> (folder, {M key: (BLOCK_SIZE_M, BLOCK_SIZE_N)})
TUNED = {
    ("NVIDIA_B200", 128, 384): ("triton_3_4_0", {
        1: (16, 64), 2: (16, 128), 4: (16, 64), 8: (16, 128), 16: (16, 128), 24: (16, 128), 32: (16, 256),
        48: (16, 256), 64: (16, 256), 96: (16, 256), 128: (16, 256), 256: (16, 128), 512: (64, 128), 1024: (64, 128),
        1536: (64, 128), 2048: (64, 128), 3072: (64, 128), 4096: (64, 128)}),
    ("NVIDIA_B200", 256, 256): ("triton_3_4_0", {
        1: (16, 64), 2: (16, 128), 4: (16, 128), 8: (16, 128), 16: (16, 128), 24: (16, 128), 32: (16, 128),
        48: (16, 256), 64: (16, 128), 96: (16, 128), 128: (16, 128), 256: (16, 128), 512: (16, 128), 1024: (32, 128),
        1536: (64, 128), 2048: (64, 128), 3072: (64, 128), 4096: (64, 128)}),
    ("NVIDIA_H100_80GB_HBM3", 64, 1024): ("triton_3_1_0", {
        1: (64, 32), 2: (64, 64), 4: (64, 128), 8: (64, 64), 16: (64, 64), 24: (64, 128), 32: (64, 64), 48: (64, 128),
        64: (64, 128), 96: (64, 128), 128: (64, 128), 256: (64, 128), 512: (64, 128), 1024: (64, 128),
        1536: (128, 64), 2048: (64, 128), 3072: (64, 128), 4096: (64, 128)}),
    ("NVIDIA_H100_80GB_HBM3", 128, 384): ("triton_3_3_1", {
        1: (16, 128), 2: (16, 64), 4: (16, 128), 8: (16, 128), 16: (16, 128), 24: (16, 64), 32: (16, 128),
        48: (16, 128), 64: (16, 128), 96: (16, 128), 128: (16, 128), 256: (64, 128), 512: (64, 128), 1024: (64, 128),
        1536: (64, 128), 2048: (64, 128), 3072: (64, 128), 4096: (64, 128)}),
    ("NVIDIA_H100_80GB_HBM3", 256, 128): ("triton_3_1_0", {
        1: (64, 64), 2: (64, 64), 4: (64, 64), 8: (64, 64), 16: (64, 128), 24: (64, 128), 32: (64, 64), 48: (64, 64),
        64: (64, 128), 96: (64, 128), 128: (64, 128), 256: (64, 128), 512: (64, 128), 1024: (64, 128),
        1536: (64, 128), 2048: (64, 128), 3072: (128, 64), 4096: (64, 128)}),
    ("NVIDIA_H100_80GB_HBM3", 256, 384): ("triton_3_5_1", {
        1: (16, 64), 2: (16, 32), 4: (16, 64), 8: (16, 64), 16: (16, 64), 24: (16, 64), 32: (16, 64), 48: (16, 64),
        64: (16, 64), 96: (16, 64), 128: (16, 128), 256: (16, 128), 512: (32, 64), 1024: (64, 64), 1536: (64, 64),
        2048: (64, 64), 3072: (64, 64), 4096: (64, 128)}),
    ("NVIDIA_H100_80GB_HBM3", 512, 128): ("triton_3_5_1", {
        1: (16, 64), 2: (16, 64), 4: (16, 64), 8: (16, 64), 16: (16, 64), 24: (16, 64), 32: (16, 64), 48: (16, 128),
        64: (16, 128), 96: (16, 64), 128: (16, 64), 256: (16, 64), 512: (16, 64), 1024: (32, 128), 1536: (64, 64),
        2048: (64, 64), 3072: (64, 64), 4096: (64, 64)}),
    ("NVIDIA_H100_80GB_HBM3", 512, 256): ("triton_3_5_1", {
        1: (16, 128), 2: (16, 128), 4: (16, 128), 8: (16, 128), 16: (16, 128), 24: (16, 128), 32: (16, 128),
        48: (16, 128), 64: (16, 128), 96: (16, 128), 128: (16, 128), 256: (16, 128), 512: (16, 128), 1024: (32, 128),
        1536: (32, 128), 2048: (64, 128), 3072: (64, 128), 4096: (64, 128)}),
}


def sglang_fit_row_tile(gpu: str, experts_local: int, inter_local: int, tokens: float) -> tuple[int, int]:
    """(BLOCK_SIZE_M, BLOCK_SIZE_N) SGLang 0.5.14's Triton fused MoE ran a block-FP8 corpus row at: the shipped
    file's config at the M key nearest `tokens` (the first of two equally near, as Python's min picks), else the
    default. `tokens` is the row's num_tokens; the collector's EP>1 rows time rank 0's share of them (assumed
    here: the nearest key of the full count)."""
    tuned = TUNED.get((DEVICE_NAME.get(gpu, ""), int(experts_local), int(inter_local)))
    if tuned is None:
        return DEFAULT_TILE
    configs = tuned[1]
    return configs[min(configs, key=lambda m: abs(m - tokens))]
