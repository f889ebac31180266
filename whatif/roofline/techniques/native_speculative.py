"""Family F: the engines' native speculative heads, DeepSeek's multi-token prediction (MTP) module and EAGLE-3
heads, with the draft lengths the engines choose when none is given. Drafting and the verify pass are priced
as EAGLE's (speculative.Eagle, a sibling family kept apart): the verify pass by the target's own pricer at
B x (drafts + 1) tokens, so the gain shrinks as that crosses the ridge point. The MTP module runs laid out as
the target (its TP, EP and attention-DP ranks), so it applies under --dp-attention too; an EAGLE-3 head is
dense, over the TP group (under attention DP each rank runs its own copy over its attention_tp GPUs, as the
target's dense layers, on its own share of the sequences)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...specs.models import ModelSpec
from ..config import Parallelism
from ..decode_round import RoundContext
from ..forward_pass import time_pass
from ..memory import layer_weight_bytes, stored_kv_bytes
from ..mlp import weight_gemm
from .base import param, register
from .compose import NONE
from .decoding import Speculative, draft_later_steps, draft_model_passes

# Draft tokens per round when the deployment does not say, by engine (the base engine of a version profile):
#  sglang: server_args.auto_choose_speculative_params, DeepseekV3ForCausalLM -> 3 steps, top-1, 4 draft tokens
#          (a chain of 3); every other architecture -> 5 steps, top-4, 8 draft tokens (7 drafts and the root)
#  trtllm: MTP's num_nextn_predict_layers and EAGLE-3's max_draft_len have no default; its DeepSeek-R1 and
#          EAGLE-3 examples use 3 (taken here)
#  vllm:   method deepseek_mtp: num_speculative_tokens defaults to the checkpoint's num_nextn_predict_layers
#          (1 for DeepSeek-V3/R1); eagle3 requires it, its examples use 3 (taken here)
MTP_DRAFTS = {"sglang": 3, "trtllm": 3, "vllm": 1}
# SGLang's 7 drafts over 5 steps: the shape its top-4 tree is pruned to is assumed (3 siblings, then the best chain)
EAGLE3_DRAFTS = {"sglang": "0/1/2/0.0/0.0.0/0.0.0.0/0.0.0.0.0", "trtllm": "1x1x1", "vllm": "1x1x1"}
DEFAULT_ENGINE_KEY = "vllm"


def engine_key(engine: str) -> str:
    """The base engine of `engine` (a version profile such as trtllm-0.6 or sglang-0.3 counts as its engine)."""
    return next((k for k in MTP_DRAFTS if engine.startswith(k)), DEFAULT_ENGINE_KEY)


class _TargetLayout:
    """A head that is a module of the target runs on the target's GPUs as the target is laid out."""

    per_rank = True

    def catch_up_tokens(self, tokens: float, reach: list[float]) -> float:
        """Every token the round accepted: the head runs each with the target's feature at it, which only the
        verify pass computed (as EAGLE)."""
        return tokens

    def head_parallel(self, par: Parallelism) -> Parallelism:
        """The head's layout: the target's (one pipeline stage: the head sits on the last)."""
        return replace(par, pp=1)

    def _head_setup(self, rc: RoundContext):
        par = rc.setup.parallel
        return rc.other_model(self.head_model(rc.setup.user_model), par.tp, self.head_parallel(par))

    def _fuse(self, rc: RoundContext, rows: float) -> float:
        """The fuse of [features, token embedding] before the head's layer, on one attention rank's rows."""
        s = rc.setup
        d = s.model.hidden_size
        rows = rows / s.parallel.attention_dp
        return rc.ops_time([weight_gemm(f"{self.name}_fuse", rows, d, self.fused * d, s.precision, 1)])

    def _head_context(self, rc: RoundContext) -> RoundContext:
        """The round as the head's passes see it: the whole group's batch (the head's layout splits it)."""
        return rc

    def draft_s(self, rc: RoundContext, widths: list[int], catch_up: float) -> float:
        rows = rc.batch * (max(1.0, catch_up) + sum(widths[:-1]))
        return draft_model_passes(self._head_context(rc), self._head_setup(rc), widths, catch_up, rc.context) + \
            self._fuse(rc, rows)

    def prefill_s(self, rc: RoundContext) -> float:
        from ..estimate import group_prefill_passes
        setup, own = self._head_setup(rc), self._head_context(rc)
        from ..engines import limits_per_group
        passes = group_prefill_passes(setup.parallel, own.batch, own.prompt, own.prefill_chunk,
                                      group_limits=limits_per_group(setup.engine_spec))
        return sum(time_pass(setup, fb, False).time_s * n for fb, n in passes) + self._fuse(rc, rc.batch * rc.prompt)

    def extra_weight_bytes(self, model, par, prec) -> float:
        d = model.hidden_size
        return layer_weight_bytes(self.head_model(model), self.head_parallel(par), prec, 0) + \
            self.fused * d * d * prec.weight_bytes / par.attention_tp

    def extra_kv_bytes(self, model, par, prec, tokens) -> float:
        return stored_kv_bytes(self.head_model(model), self.head_parallel(par), prec, NONE, tokens)


@register
@dataclass(frozen=True)
class Mtp(_TargetLayout, Speculative):
    """DeepSeek's multi-token prediction module as the engines serve it (SGLang EAGLE with the NextN weights,
    TensorRT-LLM MTP, vLLM deepseek_mtp): one more decoder layer of the target's own shape, its MoE included,
    fed [the target's last hidden state, the next token's embedding] through a 2h -> h projection, sharing the
    target's embedding and LM head; run k times in a chain, each draft verified in one target pass."""

    name = "mtp"
    family = "F"
    paper = "DeepSeek-V3 Technical Report (multi-token prediction), as SGLang, TensorRT-LLM and vLLM serve it"
    fused = 2
    k: int = param(0, "draft tokens per round, a chain; 0 = the engine's default (sglang 3, trtllm 3, vllm 1)",
                   "tokens")
    alpha: float = param(0.85, "acceptance per draft token (assumed: DeepSeek-V3's report measures 85-90% for "
                               "the second token; deeper drafts of the same module assumed alike)")
    tree: str = param("", "draft tree (widths per depth or nodes); '' = a chain of k, the engines' MTP")

    def check_params(self) -> None:
        if self.k == 0:   # the engine's k comes with for_engine; checked as a chain of one meanwhile
            replace(self, k=1)
            return
        super().check_params()

    def for_engine(self, engine: str) -> Mtp:
        return self if self.k else replace(self, k=MTP_DRAFTS[engine_key(engine)])

    def draft_tree(self):
        return super().draft_tree() if self.k else replace(self, k=MTP_DRAFTS[DEFAULT_ENGINE_KEY]).draft_tree()

    # TensorRT-LLM serves DeepSeek-V3/R1 (num_nextn_predict_layers 1 in the checkpoint) as MTP-Eagle, its one MTP
    # layer chained k times (llm_args MTPDecodingConfig.spec_dec_mode -> MTP_EAGLE_ONE_MODEL; speculative/mtp.py
    # MTPEagleWorker.forward, `for i in range(self.mtp_num_modules)` over mtp_layers[0]), in the same step as the
    # target: pass 0 over every token the target ran, passes 1..k-1 over one token a request (seq_lens filled
    # with 1). So a context step drafts too, and a generation step's first draft pass runs all k + 1 verified
    # positions, not only the accepted ones. SGLang runs the head once over a prompt (eagle_worker
    # forward_draft_extend) and its chain in the decode round (draft()), priced as EAGLE's; vLLM not read here.
    def _chains_in_step(self, rc: RoundContext) -> bool:
        engine = rc.setup.engine_spec
        return engine is not None and engine.base_engine == "trtllm"

    def draft_s(self, rc: RoundContext, widths: list[int], catch_up: float) -> float:
        if self._chains_in_step(rc):   # MTPEagleWorker.prepare_drafter_inputs: accepted_tokens, k + 1 a request
            catch_up = 1.0 + sum(widths)
        return super().draft_s(rc, widths, catch_up)

    def prefill_s(self, rc: RoundContext) -> float:
        """The head over the prompt (as every engine); on TensorRT-LLM also the chain's k - 1 later passes of
        one token a request over the prompt's cache, eager as the context step is, each with its fuse."""
        over_prompt = super().prefill_s(rc)
        if not self._chains_in_step(rc):
            return over_prompt
        widths = self.draft_widths(0.0)
        eager = replace(self._head_context(rc), cuda_graphs=False)
        later = draft_later_steps(eager, self._head_setup(rc), widths, rc.prompt)
        return over_prompt + later + self._fuse(rc, rc.batch * sum(widths[:-1]))

    def head_model(self, model: ModelSpec) -> ModelSpec:
        moe = None if model.moe is None else replace(model.moe, first_dense_layers=0, moe_layer_frequency=1)
        # a hybrid model's MTP layer is full attention (SGLang qwen3_next_mtp.py: full_attention_interval = 1)
        return replace(model, name=f"{model.name}-mtp-module", num_layers=1, moe=moe, layer_types=())


@register
@dataclass(frozen=True)
class Eagle3(_TargetLayout, Speculative):
    """An EAGLE-3 head as the engines load it (SGLang / vLLM / TensorRT-LLM eagle3): one dense decoder layer
    fed the target's low, middle and high-layer features fused 3h -> h, drafting a tree through the target's
    LM head; the tree the engine's defaults give (SGLang: 5 steps of top-4 pruned to 8 tokens)."""

    name = "eagle3"
    family = "F"
    per_rank = True    # a dense head: under attention DP each rank runs its own copy on its own sequences
    paper = "EAGLE-3: Scaling up Inference Acceleration of Large Language Models via Training-Time Test"
    fused = 3
    alpha: float = param(0.8, "acceptance per draft token (assumed, the order EAGLE-3 reports on chat "
                              "benchmarks; measure it for your head and data)")
    tree: str = param("", "draft tree; '' = the engine's default (sglang: 7 drafts over 5 steps, 3 siblings then "
                          "the best one's chain, the shape of its top-4 tree pruned to 8 tokens assumed; trtllm and "
                          "vllm a chain of 3)")

    def for_engine(self, engine: str) -> Eagle3:
        return self if self.tree else replace(self, tree=EAGLE3_DRAFTS[engine_key(engine)])

    def draft_tree(self):
        if self.tree:
            return super().draft_tree()
        return replace(self, tree=EAGLE3_DRAFTS[DEFAULT_ENGINE_KEY]).draft_tree()

    def head_parallel(self, par: Parallelism) -> Parallelism:
        """Over the TP group; under attention DP over one rank's attention_tp GPUs, as the target's dense layers."""
        return Parallelism(tp=par.attention_tp)

    def _head_context(self, rc: RoundContext) -> RoundContext:
        """Under attention DP the busiest rank's share of the group's sequences, each rank's chunk its share of the
        group's (as group_prefill_passes splits the target's): the ranks draft side by side."""
        dp = rc.setup.parallel.attention_dp
        return rc if dp == 1 else replace(rc, batch=-(-rc.batch // dp), prefill_chunk=max(1, rc.prefill_chunk // dp))

    def head_model(self, model: ModelSpec) -> ModelSpec:
        inter = model.intermediate_size if model.moe is None else \
            model.moe.expert_intermediate_size * max(1, model.moe.experts_per_token)
        return replace(model, name=f"{model.name}-eagle3-head", num_layers=1, moe=None, intermediate_size=inter)
