"""A norm over the whole q and k projections (MiniMax-M2's qk_norm_type per_layer): read from config.json, one
norm kernel per layer, and under attention TP an all-reduce of each token's two fp32 sums of squares."""
from whatif.roofline.config import ForwardBatch, Precision
from whatif.roofline.context import pass_context
from whatif.roofline.graph import pass_ops
from whatif.scenario import Scenario
from whatif.specs.models import load_model
from whatif.specs.op_kinds import OpRole
from whatif.specs.profiles import MODEL_DIR

CONFIGS = MODEL_DIR.parents[2] / "shared" / "reference" / "model_configs"
FP8 = Precision("fp8", "fp8", "fp8")


def decode_ops(model: str, tp: int):
    sc = Scenario(model=model, hardware="b200", gpus=tp, precision=FP8)
    spec, _, par, _ = sc.resolve()
    return spec, pass_ops(pass_context(spec, ForwardBatch.decode(8, 1000), par, sc.precision, 0))


def test_minimax_profile_and_its_config_norm_q_and_k_whole():
    assert load_model("minimax-m2.5").qk_layer_norm
    config = CONFIGS / "MiniMaxAI--MiniMax-M2.5_config.json"
    if config.exists():   # (the shared reference folder beside the checkout)
        assert load_model(str(config)).qk_layer_norm
    assert not load_model("qwen3-32b").qk_layer_norm   # Qwen3 normalizes each head: no cross-rank sum


def test_the_norm_sums_its_squares_over_the_attention_tp_ranks():
    spec, one = decode_ops("minimax-m2.5", 1)
    _, two = decode_ops("minimax-m2.5", 2)
    norms = [o for o in one if o.role == OpRole.QK_NORM]
    assert len(norms) == 1 and norms[0].count == spec.num_layers
    assert not [o for o in one if o.role == OpRole.QK_NORM_ALLREDUCE]
    (reduce,) = [o for o in two if o.role == OpRole.QK_NORM_ALLREDUCE]
    assert reduce.shape.gpus == 2 and reduce.shape.bytes == 8 * 2 * 4.0   # 8 tokens x q, k x fp32
    _, qwen = decode_ops("qwen3-32b", 2)
    assert not {OpRole.QK_NORM, OpRole.QK_NORM_ALLREDUCE} & {o.role for o in qwen}
