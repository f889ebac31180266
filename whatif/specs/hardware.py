"""Hardware as data: GPUs, links, memory tiers and systems, each read from one YAML file.

Every number is a Quantity (SI value, unit, provenance, source). Nothing GPU-specific lives in
code: a new GPU or expander is a new file in hardware_profiles/.
Long because every component's dataclass and its YAML parser belong together (each field's check beside it).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from ..errors import WhatifError, check_mapping, closest, shown
from .checks import MAX_GPUS, choice, integer, is_file, mapping, string
from .profiles import HARDWARE_DIR, looks_like_path, profile_index, read_yaml
from .quantity import Quantity, parse_quantity
from .scale_out import bridged, nic_share
from .sfu import default_sfu_exp2

KINDS = ("gpu", "link", "memory", "system")
DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp6", "fp4")   # fp6: CDNA 4's peak only
NVIDIA_ARCHS = ("turing", "ampere", "ada", "hopper", "blackwell")   # in generation order
AMD_ARCHS = ("cdna3", "cdna4")   # AMD Instinct MI300X/MI325X, MI350X/MI355X, in generation order
ARCHS = NVIDIA_ARCHS + AMD_ARCHS
LINK_TYPES = ("nvlink", "pcie", "nvlink-c2c", "cxl", "nvme", "network", "xgmi")
MEMORY_TECH = ("ddr4", "ddr5", "lpddr5x", "cxl", "nvme", "hbm")
MAX_BARE_GPUS = 8   # a bare GPU name stands for one NVLink/NVSwitch node
MAX_TIER_DEVICES = 1024   # memory devices of one tier attachment (a rack of CXL cards is tens)


@dataclass(frozen=True)
class Link:
    """A data path. `bandwidth` is per direction; measured directional figures override it."""

    name: str
    description: str
    type: str
    bandwidth: Quantity
    latency: Quantity
    bandwidth_h2d: Quantity | None = None
    bandwidth_d2h: Quantity | None = None
    nvswitch: bool = False   # GPUs meet in an NVSwitch (all-to-all at full rate, NVLS in-switch reduction)
    # A multi-node system's GPU fabric: this link joins `domain_gpus` GPUs (one node); GPUs of different
    # nodes meet over `scale_out`, each GPU's share of its node's NICs (see System.nodes).
    domain_gpus: int | None = None
    scale_out: Link | None = None
    # A switchless full mesh (AMD Infinity Fabric / xGMI): `bandwidth` is ONE point-to-point link and each GPU
    # has `mesh_links` of them, one to each peer; a group of n GPUs reaches its n-1 peers over n-1 links.
    mesh_links: int | None = None

    def group_bandwidth(self, gpus: int) -> float:
        """Per-direction bandwidth (B/s) one GPU of a group of `gpus` has toward the others: the link's own on a
        switch (NVSwitch) or a shared bus, (n-1) direct links on a full mesh (never more than it has)."""
        if not self.mesh_links:
            return self.bandwidth.value
        return self.bandwidth.value * max(1, min(int(gpus) - 1, self.mesh_links))

    def bandwidth_for(self, direction: str = "h2d") -> float:
        q = {"h2d": self.bandwidth_h2d, "d2h": self.bandwidth_d2h}.get(direction)
        return (q or self.bandwidth).value


@dataclass(frozen=True)
class MemoryTier:
    """Memory outside HBM (host DDR, Grace LPDDR5X, CXL expander, NVMe), one device of it."""

    name: str
    description: str
    technology: str
    capacity: Quantity
    bandwidth: Quantity
    latency: Quantity
    device_link: Link | None = None  # the device's own link (e.g. a CXL card's PCIe 5.0 x8)


@dataclass(frozen=True)
class GPU:
    """One GPU model's datasheet (hardware_profiles/<gpu>.yaml): peaks, HBM, caches, clocks, links, each a Quantity
    with its provenance. (A docstring also spares dataclass() an inspect.signature call at every cold start.)"""

    name: str
    description: str
    arch: str
    peak: dict[str, Quantity]  # dense peak per dtype, FLOP/s (OP/s for integers)
    hbm_capacity: Quantity
    hbm_bandwidth: Quantity
    l2_size: Quantity
    sm_count: Quantity
    boost_clock: Quantity
    smem_per_sm: Quantity
    launch_overhead: Quantity
    host_link: Link
    interconnect: Link | None
    achievable: dict[str, Quantity] = field(default_factory=dict)  # measured ceilings
    tdp: Quantity | None = None
    price_per_hour: Quantity | None = None
    l2_bandwidth: Quantity | None = None   # L2 read bandwidth, where a source gives it (None: L2 is not timed)
    # The total the CUDA runtime reports (cudaMemGetInfo / torch total_memory), which serving engines size their KV
    # pool from; below nvidia-smi's total (hbm_capacity) by what the driver keeps. None: not sourced for this GPU.
    runtime_capacity: Quantity | None = None
    # exp2 results an SM's special-function units give a clock (softmax exponentials); None: the architecture's
    # (specs/sfu.py). Blackwell Ultra's profiles set 32.
    sfu_exp2: Quantity | None = None

    @property
    def exp2_per_sm_clock(self) -> float:
        """exp2 results an SM a clock on the special-function units: the profile's, else its architecture's."""
        return (self.sfu_exp2 or default_sfu_exp2(self.arch)).value

    @property
    def engine_capacity_bytes(self) -> float:
        """Bytes a serving engine's memory accounting starts from: the CUDA runtime's total where sourced, else
        hbm_capacity."""
        return (self.runtime_capacity or self.hbm_capacity).value

    @property
    def vendor(self) -> str:
        """'amd' for a CDNA GPU (ROCm engines, RCCL), else 'nvidia'."""
        return "amd" if self.arch in AMD_ARCHS else "nvidia"

    def peak_flops(self, dtype: str) -> float:
        q = self.peak.get(dtype)
        if q is None:
            have = ", ".join(d for d in DTYPES if d in self.peak)
            hint = ("; 4-bit weights run weight-only there (16-bit math): --quantization mxfp4, awq, gptq or w4a16"
                    if dtype == "fp4" else "")
            raise WhatifError(f"dtype '{dtype}' has no tensor-core peak on {self.name}; valid: {have}{hint}")
        return q.value


@dataclass(frozen=True)
class TierAttachment:
    """`count` devices of a memory tier, reached from each GPU through `path` (slowest link wins).

    The devices are one pool shared by the system's GPUs, unless `per_gpu` (each GPU has its own
    `count` devices, as each GH200 has its own Grace LPDDR5X)."""

    tier: MemoryTier
    count: int
    path: tuple[Link, ...]
    per_gpu: bool = False

    @property
    def capacity(self) -> float:
        return self.tier.capacity.value * self.count

    def bandwidth(self, direction: str = "h2d", sharing_gpus: int = 1) -> float:
        """Bandwidth one GPU gets when `sharing_gpus` GPUs stream from the pool at once."""
        device_side = self.tier.bandwidth.value * self.count
        if self.tier.device_link is not None:
            device_side = min(device_side, self.tier.device_link.bandwidth_for(direction) * self.count)
        share = 1 if self.per_gpu else max(1, sharing_gpus)
        return min([device_side / share] + [link.bandwidth_for(direction) for link in self.path])


@dataclass(frozen=True)
class System:
    """`gpu_count` GPUs joined by `gpu_link`, with their memory tiers, and for a multi-node system its nodes and
    NICs (hardware_profiles/<system>.yaml, or a bare GPU as one node)."""

    name: str
    description: str
    gpu: GPU
    gpu_count: int
    gpu_link: Link | None  # GPU-to-GPU interconnect inside the system
    tiers: tuple[TierAttachment, ...] = ()
    price_per_hour: Quantity | None = None
    gpus_per_node: int | None = None   # a multi-node system: nodes of this many GPUs (None: one node of all)
    node_link: Link | None = None      # one NIC of a node (e.g. rdma-400g), nics_per_node of them per node
    nics_per_node: int | None = None

    @property
    def nodes(self) -> int:
        per = self.gpus_per_node or self.gpu_count
        return -(-self.gpu_count // per)


# ---------------------------------------------------------------- parsing


def _require(data: dict, key: str, where: str):
    if key not in data:
        raise WhatifError(f"{where}: missing field '{key}'")
    return data[key]


def _text(data: dict, key: str, where: str) -> str:
    """An optional text field (description): text, not a number or a list."""
    value = data.get(key, "")
    return string(value, f"{where}.{key}", max_len=5000, empty=True) if value is not None else ""


def _q(data: dict, key: str, where: str, unit: str, optional: bool = False) -> Quantity | None:
    if key not in data and optional:
        return None
    return parse_quantity(_require(data, key, where), f"{where}.{key}", unit)


def _parse_link(data: dict, where: str) -> Link:
    check_mapping(data, {"kind", "name", "description", "type", "bandwidth", "latency",
                       "bandwidth_h2d", "bandwidth_d2h", "nvswitch", "mesh_links", "domain_gpus"}, where)
    nvswitch = data.get("nvswitch", False)
    if not isinstance(nvswitch, bool):
        raise WhatifError(f"{where}.nvswitch: {shown(nvswitch)} is not valid; valid: true, false")
    mesh = data.get("mesh_links")
    if mesh is not None:
        mesh = integer(mesh, f"{where}.mesh_links", 1, MAX_GPUS, "direct links per GPU (a full mesh of n GPUs: n-1)")
        if nvswitch:
            raise WhatifError(f"{where}.mesh_links: a full mesh has no switch; drop nvswitch or mesh_links")
    domain = data.get("domain_gpus")   # a bridge joins this many GPUs only (NVLink bridges: pairs)
    if domain is not None:
        domain = integer(domain, f"{where}.domain_gpus", 2, MAX_GPUS, "GPUs one link joins (a bridge: 2)")
    return Link(
        name=data["name"], description=_text(data, "description", where),
        type=choice(_require(data, "type", where), LINK_TYPES, f"{where}.type"), domain_gpus=domain,
        bandwidth=_q(data, "bandwidth", where, "B/s"),
        latency=_q(data, "latency", where, "s"),
        bandwidth_h2d=_q(data, "bandwidth_h2d", where, "B/s", optional=True),
        bandwidth_d2h=_q(data, "bandwidth_d2h", where, "B/s", optional=True),
        nvswitch=nvswitch, mesh_links=mesh,
    )


def _parse_memory(data: dict, where: str) -> MemoryTier:
    check_mapping(data, {"kind", "name", "description", "technology", "capacity", "bandwidth",
                       "latency", "device_link"}, where)
    link = data.get("device_link")
    return MemoryTier(
        name=data["name"], description=_text(data, "description", where),
        technology=choice(_require(data, "technology", where), MEMORY_TECH, f"{where}.technology"),
        capacity=_q(data, "capacity", where, "B"),
        bandwidth=_q(data, "bandwidth", where, "B/s"),
        latency=_q(data, "latency", where, "s"),
        device_link=load_component(link, "link", f"{where}.device_link") if link else None,
    )


def _parse_gpu(data: dict, where: str) -> GPU:
    check_mapping(data, {"kind", "name", "description", "arch", "peak", "hbm_capacity",
                       "hbm_bandwidth", "l2_size", "sm_count", "boost_clock", "smem_per_sm",
                       "launch_overhead", "host_link", "interconnect", "achievable", "tdp",
                       "price_per_hour", "l2_bandwidth", "runtime_capacity", "sfu_exp2"}, where)
    peak_raw = _require(data, "peak", where)
    if not isinstance(peak_raw, dict) or not peak_raw:
        raise WhatifError(f"{where}.peak: expected a mapping dtype -> quantity; valid dtypes: {', '.join(DTYPES)}")
    peak = {}
    for dtype, raw in peak_raw.items():
        choice(dtype, DTYPES, f"{where}.peak")
        peak[dtype] = parse_quantity(raw, f"{where}.peak.{dtype}", "FLOP/s")
    achievable_raw = mapping(data.get("achievable") or {}, f"{where}.achievable",
                             "a mapping of measured ceilings (e.g. hbm_bandwidth: {value, unit, ...})")
    achievable = {}
    for key, raw in achievable_raw.items():
        unit = "B/s" if key.endswith("bandwidth") else "FLOP/s"
        achievable[key] = parse_quantity(raw, f"{where}.achievable.{key}", unit)
    interconnect = data.get("interconnect")
    hbm, runtime = _q(data, "hbm_capacity", where, "B"), _q(data, "runtime_capacity", where, "B", optional=True)
    if runtime is not None and not 0 < runtime.value <= hbm.value:
        raise WhatifError(f"{where}.runtime_capacity: {runtime.value / 2**30:.2f} GiB; valid: above 0 and at most "
                          f"hbm_capacity ({hbm.value / 2**30:.2f} GiB), the driver's total")
    return GPU(
        name=data["name"], description=_text(data, "description", where),
        arch=choice(_require(data, "arch", where), ARCHS, f"{where}.arch"),
        peak=peak,
        hbm_capacity=hbm,
        hbm_bandwidth=_q(data, "hbm_bandwidth", where, "B/s"),
        l2_size=_q(data, "l2_size", where, "B"),
        sm_count=_q(data, "sm_count", where, "1"),
        boost_clock=_q(data, "boost_clock", where, "Hz"),
        smem_per_sm=_q(data, "smem_per_sm", where, "B"),
        launch_overhead=_q(data, "launch_overhead", where, "s"),
        host_link=load_component(_require(data, "host_link", where), "link", f"{where}.host_link"),
        interconnect=load_component(interconnect, "link", f"{where}.interconnect") if interconnect else None,
        achievable=achievable,
        tdp=_q(data, "tdp", where, "W", optional=True),
        price_per_hour=_q(data, "price_per_hour", where, "USD/h", optional=True),
        l2_bandwidth=_q(data, "l2_bandwidth", where, "B/s", optional=True),
        runtime_capacity=runtime,
        sfu_exp2=_q(data, "sfu_exp2", where, "1/clk/SM", optional=True),
    )


def _parse_system(data: dict, where: str) -> System:
    check_mapping(data, {"kind", "name", "description", "gpu", "gpu_count", "gpu_link", "tiers",
                       "price_per_hour", "nodes", "node_link", "nics_per_node"}, where)
    gpu = load_component(_require(data, "gpu", where), "gpu", f"{where}.gpu")
    link_name = data.get("gpu_link")
    tiers = []
    tiers_raw = data.get("tiers") or []
    if not isinstance(tiers_raw, list):
        raise WhatifError(f"{where}.tiers: expected a list of {{memory, count, path}} mappings, got {shown(tiers_raw)}")
    for i, raw in enumerate(tiers_raw):
        w = f"{where}.tiers[{i}]"
        if not isinstance(raw, dict):
            raise WhatifError(f"{w}: expected a mapping with memory, count, path")
        check_mapping(raw, {"memory", "count", "path", "per_gpu"}, w)
        path_names = _require(raw, "path", w)
        if not isinstance(path_names, list) or not path_names:
            raise WhatifError(f"{w}.path: expected a non-empty list of link profile names, GPU side first")
        path = tuple(load_component(n, "link", f"{w}.path") for n in path_names)
        per_gpu = raw.get("per_gpu", False)
        if not isinstance(per_gpu, bool):
            raise WhatifError(f"{w}.per_gpu: {shown(per_gpu)} must be true or false")
        tiers.append(TierAttachment(
            tier=load_component(_require(raw, "memory", w), "memory", f"{w}.memory"),
            count=integer(raw.get("count", 1), f"{w}.count", 1, MAX_TIER_DEVICES, "devices"), path=path,
            per_gpu=per_gpu))
    gpu_count = integer(_require(data, "gpu_count", where), f"{where}.gpu_count", 1, MAX_GPUS, "GPUs")
    gpu_link = load_component(link_name, "link", f"{where}.gpu_link") if link_name else gpu.interconnect
    per_node, node_link, nics = _parse_nodes(data, where, gpu_count)
    if per_node is not None and gpu_link is not None:
        gpu_link = replace(gpu_link, domain_gpus=per_node, scale_out=nic_share(node_link, nics, per_node))
    else:
        gpu_link = bridged(gpu_link, gpu.host_link, gpu_count)
    return System(
        name=data["name"], description=_text(data, "description", where), gpu=gpu,
        gpu_count=gpu_count, gpu_link=gpu_link, tiers=tuple(tiers),
        price_per_hour=_q(data, "price_per_hour", where, "USD/h", optional=True),
        gpus_per_node=per_node, node_link=node_link, nics_per_node=nics,
    )


def _parse_nodes(data: dict, where: str, gpu_count: int) -> tuple[int | None, Link | None, int | None]:
    """(GPUs per node, NIC link, NICs per node) of a multi-node system; for one node (None, its NICs or None,
    their count): the NICs --nodes N joins N of it over (specs/nodes.py)."""
    nodes = integer(data.get("nodes", 1), f"{where}.nodes", 1, MAX_GPUS, "nodes")
    if gpu_count % nodes:
        raise WhatifError(f"{where}.nodes: {nodes} does not divide gpu_count {gpu_count}; "
                          f"valid: a divisor of {gpu_count} (equal nodes)")
    per_node = gpu_count // nodes
    if "node_link" not in data:
        if nodes == 1 and "nics_per_node" not in data:
            return None, None, None
        raise WhatifError(f"{where}.node_link: missing; a system of {nodes} node(s) with NICs needs the link "
                          f"profile of one node's NIC, e.g. rdma-400g")
    nics = integer(data.get("nics_per_node", per_node), f"{where}.nics_per_node", 1, MAX_TIER_DEVICES, "NICs")
    return (per_node if nodes > 1 else None), _nic_link(data, where), nics


def _nic_link(data: dict, where: str) -> Link:
    node_link = load_component(data["node_link"], "link", f"{where}.node_link")
    if node_link.type != "network":
        raise WhatifError(f"{where}.node_link: '{node_link.name}' is a {node_link.type} link; "
                          f"valid: a network link (type: network), e.g. rdma-400g")
    return node_link


_PARSERS = {"gpu": _parse_gpu, "link": _parse_link, "memory": _parse_memory, "system": _parse_system}


def parse_component(data: dict, where: str):
    kind = choice(_require(data, "kind", where), KINDS, f"{where}.kind")
    if "name" not in data:
        raise WhatifError(f"{where}: missing field 'name'")
    string(data["name"], f"{where}.name")
    return _PARSERS[kind](data, where)


@cache
def _load_file(path: str):
    return parse_component(read_yaml(Path(path)), Path(path).name)


def load_component(name: str, kind: str | None = None, where: str = "hardware"):
    """Load a hardware component by profile name or YAML path; `kind` checks what it is."""
    if not isinstance(name, str) or not name.strip():
        raise WhatifError(f"{where}: expected a hardware profile name, got {shown(name)}")
    if looks_like_path(name):
        path = Path(name)
        if not is_file(path, where):
            raise WhatifError(f"{where}: no such file '{name}'")
    else:
        index = profile_index(HARDWARE_DIR)
        name = next((n for n in index if n.lower() == name.lower()), name)   # names match case-insensitively
        if name not in index:
            names = [n for n in index if kind is None or component_kind(n) == kind]
            raise WhatifError(f"{where}: unknown {kind or 'hardware'} {shown(name)}{closest(name, names)}; "
                              f"see `whatif list hardware`")
        path = index[name]
    comp = _load_file(str(path))
    if kind is not None and not isinstance(comp, _CLASSES[kind]):
        raise WhatifError(f"{where}: '{name}' is a {kind_of(comp)}, not a {kind}")
    return comp


_CLASSES = {"gpu": GPU, "link": Link, "memory": MemoryTier, "system": System}


def kind_of(component) -> str:
    return next(k for k, c in _CLASSES.items() if isinstance(component, c))


@cache
def component_kind(name: str) -> str:
    """The `kind:` of a shipped profile, read without parsing the rest."""
    return str(read_yaml(profile_index(HARDWARE_DIR)[name]).get("kind"))


def list_components(kind: str | None = None) -> list[str]:
    return [n for n in profile_index(HARDWARE_DIR) if kind is None or component_kind(n) == kind]


def load_system(name: str, gpus: int | None = None, comp=None) -> System:
    """A system by name; a bare GPU name becomes a one-node system of `gpus` of it. `comp`: the component
    already loaded (or composed of several nodes: specs/nodes.py)."""
    comp = comp or load_component(name, None, "--hardware")
    if isinstance(comp, GPU):
        count = gpus or 1
        if count > MAX_BARE_GPUS:
            raise WhatifError(f"--gpus: {count} GPUs of a bare '{comp.name}' profile; it models one node of at "
                              f"most {MAX_BARE_GPUS} GPUs on its interconnect; name a system for more")
        return System(name=f"{count}x {comp.name}" if count > 1 else comp.name,
                      description=comp.description, gpu=comp, gpu_count=count,
                      gpu_link=bridged(comp.interconnect, comp.host_link, count) or comp.host_link)
    if isinstance(comp, System):
        if gpus is not None and gpus > comp.gpu_count:
            raise WhatifError(f"--gpus: {gpus} is more than the {comp.gpu_count} GPUs of system '{comp.name}'")
        if gpus is not None and gpus != comp.gpu_count:
            return replace(comp, gpu_count=gpus)
        return comp
    raise WhatifError(f"--hardware: '{name}' is a {kind_of(comp)}; name a GPU or a system "
                      f"(valid: {', '.join(list_components('gpu') + list_components('system'))})")
