"""Everything a forward pass's cost depends on, checked and resolved once per scenario.

The estimate and the serving simulator both time passes (forward_pass.time_pass) and plan memory
(memory.plan_memory) from a PassSetup, so they share one set of checks (techniques, parallelism,
tiers) and one source of cost. A PassSetup is data: the functions that price it import it, never
the other way round.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import WhatifError
from ..specs.engines import EngineSpec
from ..specs.hardware import System
from ..specs.models import ModelSpec
from .native_formats import native_precision
from .config import Parallelism, Precision
from .efficiency import Efficiency
from .graph import check_expert_precision, check_parallelism
from .placement import NO_PLACEMENT, Placement, resolved
from .context import HostPath
from .techniques.compose import NONE, TechniqueSet
from ..specs.op_kinds import OpClass
from .tiers import pageable_paths, resolve_tier, tier_paths


@dataclass(frozen=True)
class PassSetup:
    """Everything a forward pass is priced from: the model and precision as run, system, layout."""

    user_model: ModelSpec      # before techniques transform it
    user_precision: Precision
    model: ModelSpec           # as the techniques run it
    precision: Precision
    system: System
    parallel: Parallelism
    efficiency: Efficiency
    techniques: TechniqueSet
    placement: Placement       # resolved to the system's tier names, techniques' shares included
    paths: dict[str, HostPath]
    utilization: float
    shared_prefix: int = 0
    engine_spec: EngineSpec | None = None   # serving loop: memory accounting, CUDA graphs, CPU per step

    @property
    def tier_capacity(self) -> dict[str, float]:
        """Bytes of each slower tier one GPU may use, by tier name."""
        return {name: path.capacity for name, path in self.paths.items()}


def pass_setup(model: ModelSpec, system: System, par: Parallelism, prec: Precision, eff: Efficiency,
               utilization: float, techs: TechniqueSet = NONE, placement: Placement = NO_PLACEMENT,
               shared_prefix: int = 0, engine_spec: EngineSpec | None = None) -> PassSetup:
    """Check a scenario's model, system, parallelism and techniques together and resolve its placement."""
    user_placement = placement
    placement = resolved(user_placement, lambda name, where: resolve_tier(name, system, where))
    placed_by_user = placement
    for t in techs.items:   # shares a technique adds are resolved in its name, so an error says which
        placement = resolved(t.transform_placement(placement), lambda name, where: resolve_tier(name, system, where),
                             f"--technique {t.name} placing")
    techs.check(model, shared_prefix)
    for t in techs.items:
        if t.needs_peak and t.needs_peak not in system.gpu.peak:
            raise WhatifError(f"--technique {t.name}: needs {t.needs_peak} tensor cores, which {system.gpu.name} "
                              f"does not have; its tensor-core dtypes: {', '.join(system.gpu.peak)}")
    # an NVFP4 checkpoint on a GPU with no NVFP4 MMA runs as the engines run it there (roofline/native_formats.py)
    run_model, run_prec = techs.model(model), native_precision(techs.precision(prec), system.gpu.arch)
    check_parallelism(run_model, par)
    check_expert_precision(run_model, run_prec)
    group_priced = [t for t in techs.items if not t.per_rank]   # they price ops on the group's batch, not a rank's
    if par.dp_attention and group_priced:
        raise WhatifError(f"--dp-attention: not modelled together with --technique {group_priced[0].name}; "
                          f"valid: --dp-attention without techniques (or with mtp / eagle3), or techniques "
                          f"without --dp-attention")
    if par.gpus > system.gpu_count:
        raise WhatifError(f"--tp x --pp = {par.gpus} GPUs, but {system.name} has {system.gpu_count}")
    if not 0 < utilization <= 1:
        raise WhatifError(f"--memory-utilization: {utilization} must be in (0, 1]")
    paths = tier_paths(system, par.gpus)
    # An engine's own offload (the shares a user places) may copy from pageable host memory; a technique that
    # places shares itself (ZeRO-Inference, FlexGen) copies from its own pinned buffers.
    if engine_spec is not None and engine_spec.pageable_host_copies and placement == placed_by_user:
        paths = pageable_paths(paths, eff.params(OpClass.TRANSFER).memory_eff)
    return PassSetup(user_model=model, user_precision=prec, model=run_model, precision=run_prec, system=system,
                     parallel=par, efficiency=eff, techniques=techs, placement=placement,
                     paths=paths, utilization=utilization, shared_prefix=shared_prefix,
                     engine_spec=engine_spec)
