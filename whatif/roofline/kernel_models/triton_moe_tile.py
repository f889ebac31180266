"""The M tile (BLOCK_SIZE_M) the Triton fused-MoE kernel runs block-FP8 experts at where no tuned config file matches
the shape: a property of the engine's default config, not of the rows an expert gets (kernel_models/moe.tile_m, the
tuned-config rule, prices the other fused MoEs). The tile sets the rows each expert is padded to (its compute) and
the M tiles of the launch grid (moe_align_block_size pads each expert's slots to it; the grid is
cdiv(EM, BLOCK_SIZE_M) x cdiv(N, BLOCK_SIZE_N)).

- SGLang (the rows validate/moe_fit.FITS fused_moe_triton is fitted on, aiconfigurator's sglang_fused_moe_triton
  fp8_block): get_default_config in moe_runner/triton_utils/fused_moe_triton_config.py gives block FP8
  BLOCK_SIZE_M 64 at every M (session 72 B2; FIT_ROWS_BLOCK_M below) where no shipped tuned file names the row's
  shape (sglang_moe_configs.py: 8 shapes, 2-4% of the rows, session 73 E).
- vLLM v0.17.0 (vllm-0.17.0.tar.gz from PyPI, sha256 b0b62e58...5629a, vllm/model_executor/layers/fused_moe/
  fused_moe.py get_default_config, lines 1247-1261, vllm#34846): block FP8 BLOCK_SIZE_M 16 if M <= 64 else 64, M
  the fused call's tokens (TritonExperts.apply passes num_tokens to try_get_optimal_moe_config, which falls back to
  the default where get_moe_configs(E, N = w2.shape[2], ...) finds no file: none for B200 E=256 N=768/384, the
  MiniMax-M2.5 v0.17.0 rows' TP2/TP4 slices). vLLM releases before #34846 (merged 2026-02-18) had other defaults,
  not modelled: `moe_kernels triton` is mapped for v0.17.0's rows only (serving_reference VLLM_RELEASE_MOE_KERNELS)."""
from __future__ import annotations

SGLANG_BLOCK_M = 64           # SGLang's block-FP8 default, every M
VLLM_DECODE_BLOCK_M = 16      # vLLM >= #34846 (v0.17.0): M <= VLLM_DECODE_TOKENS
VLLM_DECODE_TOKENS = 64
VLLM_BLOCK_M = 64             # vLLM >= #34846 above VLLM_DECODE_TOKENS

# (kernel_source, corpus dtype) of fit rows -> the M tile their collector ran (validate/moe_fit.GRID_TILE_ROWS)
FIT_ROWS_BLOCK_M = {("sglang_fused_moe_triton", "fp8_block"): SGLANG_BLOCK_M}


def fit_rows_block_m(kernel_source: str, dtype: str) -> int:
    """The M tile a fit's corpus rows ran at (0: none fixed, the tuned tile by rows: kernel_models/moe.tile_m)."""
    return FIT_ROWS_BLOCK_M.get((kernel_source, dtype), 0)


def triton_block_m(engine: str, tokens: float) -> int:
    """The M tile `engine`'s Triton fused MoE runs block-FP8 experts at for a call of `tokens` tokens, by its
    default config (vLLM's batch-aware one, SGLang's fixed 64)."""
    if engine == "vllm":
        return VLLM_DECODE_BLOCK_M if tokens <= VLLM_DECODE_TOKENS else VLLM_BLOCK_M
    return SGLANG_BLOCK_M
