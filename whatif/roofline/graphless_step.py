"""A vLLM V1 step with more tokens than its largest CUDA-graph capture size: no graph at all.

vLLM V1 replays a prefill or mixed step as piecewise CUDA graphs only at a captured token count: its
CudagraphDispatcher (vllm/v1/cudagraph_dispatcher.py dispatch) holds keys for the `cudagraph_capture_sizes` alone
and returns CUDAGraphMode.NONE for any other count, and the capture list ends at max_cudagraph_capture_size,
min(max_num_seqs x decode_query_len x 2, 512) unless a launch sets --max-cudagraph-capture-size, then capped at
max_num_batched_tokens (vllm/config/vllm.py VllmConfig._set_cudagraph_sizes; compilation.py: "set to
min(max_num_seqs*2, 512) by default"). A larger step runs the compiled model with every kernel and custom op issued
from the host, so it pays the engine's measured eager call (cuda_graphs.piecewise_call_s: vLLM's custom all-reduce
called eagerly, 22 us on the corpus's H100 hosts) per kernel where a step inside the captured sizes replays pieces.
EngineSpec.mixed_graph_tokens is that largest size (0: the engine has no such rule; its steps priced as before)."""
from __future__ import annotations


def graphless_step(spec, tokens: int) -> bool:
    """Whether an eagerly priced step of `tokens` new tokens runs with no CUDA graph on the engine `spec` (vLLM:
    more tokens than its largest capture size), so each kernel costs the host spec.piecewise_call_s."""
    if spec is None or not spec.piecewise_call_s:
        return False
    cap = spec.mixed_graph_tokens
    return cap > 0 and tokens > cap
