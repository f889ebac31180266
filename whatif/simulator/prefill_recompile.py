"""A prefill kernel compiled anew for each token count a server has not run before (engine setting
`prefill_recompile_s`; default 0: off).

SGLang's FLA L2-norm of the Gated DeltaNet prefill (python/sglang/srt/layers/attention/fla/l2norm.py,
`l2norm_fwd_kernel`, called on q and k by chunk_gated_delta_rule with use_qk_l2norm_in_kernel) declared its row
count `T` (the step's prefill tokens x the rank's key heads) `tl.constexpr`, so Triton compiled a new variant,
inline on the launching host, for every distinct token count of an eager (prefill) step, until sgl-project/sglang
PR #31558 (merged 2026-07-17) made it a runtime argument. A compiled variant stays cached for the server's life, so
a step pays the compile only the first time its prefill token count occurs; decode steps (CUDA graphs, a fused
recurrent kernel) never run it. The host is blocked meanwhile: the step takes that much longer, and so do the
decodes waiting behind it. The same shape of cost: FlashInfer 0.6.1's cuDNN NVFP4 GEMM, a graph and plans built per
exact token count (benchmarks/serving_reference.py sglang_fp4_cudnn_plans, session 70 J). An attention-DP group
(rank_group.py) charges each rank on its own new count; its step waits for the slowest."""
from __future__ import annotations


class TokenCountCompiles:
    """The token counts one server has compiled the kernel for: `cost(tokens)` is the host time a prefill step of
    `tokens` prefill tokens adds (compile_s the first time that count runs, else 0)."""

    def __init__(self, compile_s: float):
        self.compile_s = compile_s
        self.seen: set[int] = set()

    def cost(self, tokens: int) -> float:
        if tokens <= 0 or tokens in self.seen:
            return 0.0
        self.seen.add(tokens)
        return self.compile_s
