"""A disaggregated cluster's pools as their own deployments: the prefill pool's scenario (its layout and GPU type
over the decode pool's), the GPUs each pool takes of its system, and the path the KV crosses between them.

Each replica must fit one system profile (a node, a rack, a multi-node profile). Aggregated replicas share the
one system; disaggregated pools are deployments of whole systems each, so a cluster larger than one system runs
on several of them. The KV goes over the system's GPU link (NVLink) when both pools fit one NVLink domain of one
system of one type, else over the nodes' NICs: the system's node link, or a 400 Gb/s RDMA NIC per GPU (assumed,
the DGX/HGX H100 and B200 compute fabric) where the profile names none; `--kv-link` names another."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace

from ..errors import WhatifError
from ..roofline.context import HostPath
from ..scenario import Scenario
from ..specs.hardware import System, load_component
from .config import SimConfig
from .iteration_time import kv_link_path

CROSS_NODE_KV_LINK = "rdma-400g"   # (config_search.evaluate prices the search's cross-node hand-off with the same)


def prefill_scenario(cfg: SimConfig) -> Scenario:
    """The prefill pool's scenario: the decode pool's, with the prefill layout, GPU type and MoE kernels over it."""
    sc, cl = cfg.scenario, cfg.cluster
    if cl.prefill_hardware is not None:
        _system(cl.prefill_hardware, "--prefill-hardware")   # (an unknown name is reported as this flag)
    with prefill_flags():
        par = cl.prefill_parallel(sc.parallelism())
    hardware = cl.prefill_hardware or sc.hardware
    kernels = cl.prefill_moe_kernels or sc.moe_kernels   # (a ctx worker may run other MoE kernels than the gen one)
    if par == sc.parallel and hardware == sc.hardware:
        return sc if kernels == sc.moe_kernels else replace(sc, moe_kernels=kernels)
    return replace(sc, parallel=par, gpus=None, hardware=hardware, moe_kernels=kernels)


@contextmanager
def prefill_flags():
    """Report a layout error of the prefill pool under its own flags (--ep -> --prefill-ep)."""
    try:
        yield
    except WhatifError as exc:
        text = str(exc)
        for flag in ("--dp-attention", "--tp", "--pp", "--ep"):
            if text.startswith(flag):
                raise WhatifError("--prefill-" + text[2:]) from None
        raise


def _system(hardware: str, flag: str = "--hardware") -> System | None:
    system = load_component(hardware, None, flag)
    return system if isinstance(system, System) else None


def _domain(system: System) -> int:
    """GPUs of one NVLink domain of the system (a node, or the whole rack)."""
    return system.gpus_per_node or system.gpu_count


def check_fits(cfg: SimConfig) -> None:
    """Every replica must fit its system profile (a bare GPU profile has as many GPUs as asked for); aggregated
    replicas must fit it together. The commands check it; the configuration search's re-check simulates
    aggregated clusters of several such nodes on purpose."""
    sc, cl = cfg.scenario, cfg.cluster
    system = sc.system_profile()   # (--nodes composed)
    par = sc.parallelism()   # (--gpus may set tp)
    if cl.disaggregated:
        pre = prefill_scenario(cfg)
        for flag, scenario, gpus in (("--prefill-hardware", pre, pre.parallelism().gpus), ("--hardware", sc, par.gpus)):
            s = scenario.system_profile()
            if s is not None and gpus > s.gpu_count:
                pool = "prefill" if flag == "--prefill-hardware" else "decode"
                raise WhatifError(f"{flag}: a {pool} replica of {gpus} GPUs is more than the {s.gpu_count} GPUs of "
                                  f"system '{s.name}'; use fewer GPUs per replica, or a larger system")
        return
    if system is None:
        return
    need = cl.replicas * par.gpus
    if need > system.gpu_count:
        raise WhatifError(f"--replicas {cl.replicas} x {par.gpus} GPUs (tp {par.tp} x pp {par.pp}) = {need} GPUs, "
                          f"more than the {system.gpu_count} GPUs of system '{system.name}'; use fewer replicas or "
                          f"GPUs per replica, or a larger system (--nodes N)")


def kv_path(cfg: SimConfig, prefill_system: System, prefill_gpus: int, decode_gpus: int) -> HostPath:
    """The path a prompt's KV takes from a prefill replica to a decode replica (module docstring)."""
    cl = cfg.cluster
    if cl.kv_link is not None:
        return kv_link_path(prefill_system, cl.kv_link)
    same = (cl.prefill_hardware or cfg.scenario.hardware) == cfg.scenario.hardware
    profile = (_system(cl.prefill_hardware) if cl.prefill_hardware else cfg.scenario.system_profile())   # (all of it)
    one_domain = cl.prefill_replicas * prefill_gpus + cl.replicas * decode_gpus <= _domain(profile or prefill_system)
    if (same and one_domain) or (prefill_system.gpu_link is None and prefill_system.node_link is None):
        return kv_link_path(prefill_system, None)   # (a bare GPU profile names no link: the error says so)
    return kv_link_path(prefill_system, prefill_system.node_link.name if prefill_system.node_link is not None
                        else CROSS_NODE_KV_LINK)


def systems_used(cfg: SimConfig, prefill_gpus: int, decode_gpus: int) -> str:
    """'' when the cluster fits one system; else how many systems of each pool's type it takes (for the report)."""
    cl = cfg.cluster
    pools = (("prefill", cl.prefill_hardware or cfg.scenario.hardware, cl.prefill_replicas, prefill_gpus),
             ("decode", cfg.scenario.hardware, cl.replicas, decode_gpus))
    systems = [_system(hardware) for _, hardware, _, _ in pools]
    if None in systems or (systems[0].name == systems[1].name
                           and sum(n * g for _, _, n, g in pools) <= systems[0].gpu_count):
        return ""
    # each pool its own systems, a replica never split over two (one larger than a system spans whole ones: --nodes)
    return " + ".join(f"{role} on {_systems_for(n, g, s.gpu_count)} x {s.name}"
                      for (role, _, n, g), s in zip(pools, systems))


def _systems_for(replicas: int, gpus: int, per_system: int) -> int:
    """Systems of `per_system` GPUs that `replicas` replicas of `gpus` GPUs take, none split over two systems
    unless it is larger than one (then it takes whole systems of its own)."""
    if gpus > per_system:
        return replicas * -(-gpus // per_system)
    return -(-replicas // (per_system // gpus))
