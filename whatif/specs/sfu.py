"""A GPU's special-function-unit (SFU / MUFU) exp2 rate: results an SM a clock, by architecture where the profile
does not give its own (`sfu_exp2` in a GPU profile).

The softmax exponentials of attention run on the SFUs (SASS MUFU.EX2), not the tensor cores; the kernel models
price them at this rate (prefill_attention.exp_seconds, encoder_attention.softmax_exp_seconds, linear_attention).

- 16 an SM a clock on every NVIDIA architecture whatif models, compute capability 7.5 (Turing) through 10.0
  (B200 / GB200) and 12.0 (RTX PRO 6000, RTX 50): CUDA C++ Programming Guide, "Arithmetic Instructions",
  throughput of native arithmetic instructions (32-bit floating-point reciprocal, reciprocal square root, base-2
  logarithm, base-2 exponential exp2f, sine, cosine), the rate the kernel models have always used.
- Blackwell Ultra (compute capability 10.3: B300, GB300) doubles it. It shares the 'blackwell' architecture key
  with B200 (the fitted efficiencies), so its profiles set `sfu_exp2: 32` themselves (b300.yaml, gb300.yaml;
  sources there). The reciprocal (MUFU.RCP) is not said to change: quantize.py and linear_attention.py keep 16.
- Which GPU is which compute capability: NVIDIA's "CUDA GPU Compute Capability" table (developer.nvidia.com/cuda-gpus):
  10.3 GB300, B300; 10.0 GB200, B200; 12.0 RTX PRO 6000 Blackwell, GeForce RTX 50; 9.0 H100/H200; 8.9 L40S, L4.
- AMD CDNA 3 / 4: no source read here gives an exp2 rate per CU a clock; 16 is assumed (today's constant), so
  nothing moves for them.
"""
from __future__ import annotations

from .quantity import Quantity

UNIT = "1/clk/SM"
_GUIDE = ("CUDA C++ Programming Guide, 'Arithmetic Instructions': throughput of native arithmetic instructions, "
          "32-bit base-2 exponential (exp2f) 16 results a clock a multiprocessor, compute capability {cc}")
ARCH_EXP2_PER_SM_CLOCK = {
    "turing": Quantity(16.0, UNIT, "datasheet", _GUIDE.format(cc="7.5")),
    "ampere": Quantity(16.0, UNIT, "datasheet", _GUIDE.format(cc="8.0 / 8.6")),
    "ada": Quantity(16.0, UNIT, "datasheet", _GUIDE.format(cc="8.9")),
    "hopper": Quantity(16.0, UNIT, "datasheet", _GUIDE.format(cc="9.0")),
    "blackwell": Quantity(16.0, UNIT, "datasheet", _GUIDE.format(cc="10.0 (B200, GB200) and 12.0 (RTX PRO "
                                                                   "6000); Blackwell Ultra (10.3) sets its own")),
    "cdna3": Quantity(16.0, UNIT, "assumed", "no AMD source read for the transcendental rate; NVIDIA's 16 kept"),
    "cdna4": Quantity(16.0, UNIT, "assumed", "no AMD source read for the transcendental rate; NVIDIA's 16 kept"),
}
DEFAULT_EXP2_PER_SM_CLOCK = 16.0   # what a Ceilings built without a profile (fitters' columns, tests) assumes
# SFU reciprocals (MUFU.RCP) an SM a clock, compute capability 5.x-10.x (the same Guide table); Blackwell Ultra's
# doubled rate is stated for exp2 only, so every GPU keeps 16 (quantize.py's x / scale, linear_attention.py's SiLU)
RCP_PER_SM_CLOCK = 16.0


def default_sfu_exp2(arch: str) -> Quantity:
    """The architecture's exp2 rate (results an SM a clock) for a profile that does not set `sfu_exp2`."""
    return ARCH_EXP2_PER_SM_CLOCK[arch]
