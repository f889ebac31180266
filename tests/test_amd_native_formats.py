"""A 4-bit format on an AMD GPU is priced as the engines run it there (roofline/native_formats.py): NVFP4 has no MMA on
CDNA 3 or CDNA 4 (vLLM ROCm dequantizes it to bf16), Quark's W4A4 MXFP4 runs at CDNA 4's fp4 peak, CDNA 3 has no
fp4 peak at all."""
from __future__ import annotations

import json

import pytest

from whatif.cli import main
from whatif.roofline.config import Precision
from whatif.scenario import Scenario
from whatif.specs import hardware
from whatif.roofline.native_formats import native_precision
from whatif.specs.quantization import scheme

ARGS = ("--tp", "8", "--batch", "8", "--prompt", "512", "--output", "64", "--no-ops")


def _estimate(capsys, *argv) -> str:
    rc = main(["estimate", *argv, *ARGS])
    out, err = capsys.readouterr()
    assert rc == 0 and "Traceback" not in err, (rc, err)
    return out


def _ceiling(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("ceilings:"))


def test_nvfp4_checkpoint_on_mi355x_states_it_runs_dequantized_not_at_the_mxfp4_peak(capsys):
    out = _estimate(capsys, "--model", "nvidia/DeepSeek-R1-NVFP4", "--hardware", "mi355x-8x")
    head = out.splitlines()[0]
    assert "quantization nvfp4-w4a16" in head and "activations bf16" in head
    assert "E8M0 scale per 32" in head and "vllm-project/vllm#35733" in head   # why, and the source
    assert "bf16 (datasheet)" in _ceiling(out) and "fp4" not in _ceiling(out)


def test_nvfp4_bytes_kept_and_math_16_bit_on_both_cdna_generations():
    nv = Precision.of_scheme("nvfp4")
    for arch in ("cdna3", "cdna4"):
        run = native_precision(nv, arch)
        assert (run.quantization, run.weight, run.activation) == ("nvfp4-w4a16", "fp4", "bf16")
        assert run.weight_bytes == nv.weight_bytes == pytest.approx(0.5 + 1 / 16)
    assert native_precision(nv, "blackwell") is nv   # Blackwell has the NVFP4 MMA


def test_nvfp4_experts_only_are_mapped_and_the_rest_kept():
    prec = Precision(expert_quantization="nvfp4", modules=(("attention", "none"),))
    run = native_precision(prec, "cdna4")
    assert run.module("experts").quantization == "nvfp4-w4a16" and run.module("experts").activation == "bf16"
    assert run.module("attention") == prec.module("attention") and run.quantization == ""


def test_nvfp4_on_mi300x_runs_emulated_instead_of_refusing(capsys):
    out = _estimate(capsys, "--model", "qwen3-32b", "--hardware", "mi300x-8x", "-q", "nvfp4")
    assert "quantization nvfp4-w4a16" in out.splitlines()[0] and "CDNA 3 has no FP4" in out.splitlines()[0]
    assert "bf16 (datasheet)" in _ceiling(out)


def test_mxfp4_w4a4_runs_at_the_fp4_peak_on_cdna4_and_dequantized_on_cdna3(capsys):
    out = _estimate(capsys, "--model", "qwen3-32b", "--hardware", "mi355x-8x", "-q", "mxfp4-w4a4")
    assert "quantization mxfp4-w4a4" in out.splitlines()[0] and "fp4 (datasheet)" in _ceiling(out)
    out = _estimate(capsys, "--model", "qwen3-32b", "--hardware", "mi325x-8x", "-q", "mxfp4-w4a4")
    assert "quantization mxfp4 " in out.splitlines()[0] and "bf16 (datasheet)" in _ceiling(out)
    assert scheme("mxfp4-w4a4").scale_bytes_per_weight(128) == pytest.approx(1 / 32)


def test_cdna3_has_no_fp4_peak_and_cdna4_has_one():
    for name in ("mi300x", "mi325x"):
        assert "fp4" not in hardware.load_component(name, "gpu").peak
    for name in ("mi350x", "mi355x"):
        assert "fp4" in hardware.load_component(name, "gpu").peak


def test_nvfp4_price_moves_on_mi355x_and_not_on_b200():
    """The mapping reaches the pricing: MI355X's NVFP4 decode equals the emulated scheme's; B200 keeps the fp4 fit."""
    def tpot(hw, q):
        est = Scenario(model="qwen3-32b", hardware=hw, precision=Precision.of_scheme(q)).run(with_max_batch=False)
        return est.tpot_s
    assert tpot("mi355x", "nvfp4") == pytest.approx(tpot("mi355x", "nvfp4-w4a16"))
    assert tpot("b200", "nvfp4") != pytest.approx(tpot("b200", "nvfp4-w4a16"))


def _quark_config(tmp_path, weight, inputs, exclude=()):
    """A DeepSeek-V3 config.json with a Quark quantization_config of Quark's exported layout (QConfig.to_dict)."""
    from tests.test_checkpoint_quant import DATA
    cfg = json.loads((DATA / "deepseek-ai--DeepSeek-R1_config.json").read_text())
    spec = {"dtype": "fp4", "qscheme": "per_group", "group_size": 32, "scale_format": "e8m0"}
    cfg["quantization_config"] = {
        "quant_method": "quark", "exclude": list(exclude), "layer_quant_config": {}, "layer_type_quant_config": {},
        "global_quant_config": {"weight": {**spec, "dtype": weight},
                                "input_tensors": inputs and {**spec, "dtype": inputs},
                                "output_tensors": None, "bias": None}}
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "config.json"   # (checkpoint_quant caches by path: one folder a config)
    path.write_text(json.dumps(cfg))
    return path


def test_a_quark_mxfp4_checkpoint_reads_as_mxfp4_w4a4_and_its_exclude_list(tmp_path):
    from whatif.specs.checkpoint_quant import checkpoint_quant
    from whatif.specs.models import load_model
    ds = load_model("deepseek-v3")
    q = checkpoint_quant(str(_quark_config(tmp_path, "fp4", "fp4", ["lm_head", "*self_attn*"])), ds)
    assert q.quantization == "mxfp4-w4a4" and dict(q.modules)["attention"] == "none" and "Quark" in q.source
    assert checkpoint_quant(str(_quark_config(tmp_path / "weight_only", "fp4", None)), ds).quantization == "mxfp4"


def test_a_quark_config_it_cannot_read_is_one_line(tmp_path, capsys):
    rc = main(["estimate", "--model", str(_quark_config(tmp_path, "int4", "fp8_e4m3")), "--hardware", "mi355x"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "global_quant_config: weights int4" in err
