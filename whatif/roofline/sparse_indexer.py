"""DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5), priced by its mechanism.

Per new token: project an indexer query (heads x head_dim, from the MLA query latent), one indexer key and per-head
weights; append the key to its fp8 cache; score the query against every cached key (heads fp8 dot products, a
ReLU and a weighted sum per key) and keep the top_k tokens, which MLA then attends (attention_window caps it).
The indexer's projections are replicated on every GPU of the attention group (vLLM's ReplicatedLinear). Scores
read every cached indexer key once per sequence and write the q x context fp32 logits the top-k pick re-reads.
No kernel table here: `indexer_score_op` is the one op a fitted efficiency can
price later; today the class model prices it at the fp8 tensor-core peak (attention classes)."""
from __future__ import annotations

from ..specs.model_sections import IndexerSpec
from ..specs.models import ModelSpec
from .attention import DECODE_MAX_QUERIES, causal_pairs
from .config import Precision
from .mlp import weight_gemm
from .ops import Op, OpClass, OpRole, StreamShape, streaming

TOPK_FLOPS = 4.0     # compare/select work per score in a radix/heap top-k (order of magnitude; memory bound)
LOGIT_BYTES = 4.0    # fp32 scores


def indexer_score_op(ix: IndexerSpec, groups, act_bytes: float, count: int) -> Op:
    """Scores of every new token against every cached indexer key: 2 x heads x head_dim FLOPs (fp8) a (query, key)
    pair plus the weighted ReLU sum; bytes: the cached keys once per sequence, queries in, logits out."""
    pairs = sum(n * causal_pairs(q, c) for q, c, n in groups)
    queries = sum(n * q for q, _, n in groups)
    keys = sum(n * (c + q) for q, c, n in groups) * ix.key_bytes
    decode = all(q <= DECODE_MAX_QUERIES for q, _, _ in groups)
    logits = pairs * LOGIT_BYTES     # written for the top-k pick
    flops = pairs * (2.0 * ix.heads * ix.head_dim + 3.0 * ix.heads)
    hbm = keys + queries * ix.heads * (ix.head_dim + act_bytes) + logits
    return Op("indexer_scores", OpClass.ATTENTION_DECODE if decode else OpClass.ATTENTION_PREFILL, flops,
              {"hbm": hbm}, "fp8", StreamShape(pairs), count,
              f"DSA indexer: {pairs:g} (query, key) pairs x 2*{ix.heads}*{ix.head_dim} fp8 FLOPs; cached keys "
              f"{ix.key_bytes} B/token read once a sequence, fp32 logits written", OpRole.SPARSE_INDEXER)


def indexer_ops(model: ModelSpec, groups, tokens: float, prec: Precision, count: int) -> list[Op]:
    ix, m = model.indexer, model.mla
    d = model.hidden_size
    q_in = m.q_lora_rank or d
    ops = [weight_gemm("indexer_q_proj", tokens, ix.heads * ix.head_dim, q_in, prec, count, OpRole.SPARSE_INDEXER),
           weight_gemm("indexer_k_proj", tokens, ix.head_dim, d, prec, count, OpRole.SPARSE_INDEXER),
           weight_gemm("indexer_weights_proj", tokens, ix.heads, d, prec, count, OpRole.SPARSE_INDEXER),
           streaming("indexer_key_write", OpClass.ELEMENTWISE, tokens * ix.head_dim, reads=1, writes=0,
                     flops_per_element=2.0, elem_bytes=prec.act_bytes, dtype=prec.activation, count=count,
                     extra_bytes=tokens * ix.key_bytes, role=OpRole.KV_WRITE),
           indexer_score_op(ix, groups, prec.act_bytes, count)]
    scores = sum(n * causal_pairs(q, c) for q, c, n in groups)
    picked = sum(n * q for q, _, n in groups) * ix.top_k * 4.0      # int32 indices out
    ops.append(Op("indexer_topk", OpClass.ELEMENTWISE, TOPK_FLOPS * scores,
                  {"hbm": scores * LOGIT_BYTES + picked}, "fp32", StreamShape(scores), count,
                  f"top-{ix.top_k} of {scores:g} scores", OpRole.INDEXER_TOPK))
    return ops
