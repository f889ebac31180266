"""Host speed of an eagerly timed module: its fitted floor is host launches (CUDA events around one Python call of
the module, no graph), so it scales with the host's time per eager launch, which the engine profile measures per
GPU generation's hosts (kernels.eager_launch_s, eager_launch_by_arch: SGLang's eager custom all-reduce, 31.0 us on
the H100 hosts, 29.3 us on the B200 hosts; benchmarks/eager_host_cost.py, another table than the module's).
A fit's floor_s is at the reference host (the profile's eager_launch_s); host_x scales it to a GPU's hosts."""
from __future__ import annotations

from functools import cache

# Module tables aiconfigurator timed eagerly, whose floor is host time (docs/accuracy.md "Session 74 D"):
# SGLang's MLA context module of the wide-EP table (collector/sglang/collect_wideep_attn.py: start_event.record(),
# attention_module(...), end_event.record(), torch.cuda.synchronize(); no CUDA graph) and its DSA context module
# (collect_mla_module.py, eager: mla_modules.sglang_prefill_eager_launches). vLLM's DSA context module, eager too,
# is left out: its hosts differ by 2% (21.5 / 22.0 us) and its H100 cell got worse (12.5 -> 13.2%).
EAGER_HOST_FAMILIES = {("mla_module_prefill", "sglang"), ("dsa_module_prefill", "sglang")}


@cache
def host_x(engine: str, arch: str) -> float:
    """The engine's eager launch on `arch` GPUs' hosts over its reference host's (1.0 where no figure is measured)."""
    from ...specs.engines import load_engine
    spec = load_engine(engine)
    if not spec.eager_launch_s:   # (vLLM V1's profile carries none)
        return 1.0
    return spec.on_host_of(arch).eager_launch_s / spec.eager_launch_s


def family_host_x(family: str, engine: str, arch: str) -> float:
    """host_x for a family timed eagerly (EAGER_HOST_FAMILIES), 1.0 for any other (its floor is GPU time)."""
    return host_x(engine, arch) if (family, engine) in EAGER_HOST_FAMILIES else 1.0
