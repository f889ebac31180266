"""Where replica setups are priced: in this process's CPUs (a pool of `jobs` worker processes, forked, once the
space has enough replica setups to pay for them), or spread over a Ray cluster (`whatif[ray]`, optional).

Both return the profiles in the order of the keys given (each key's prefill chunks in the space's order), so a
search's answer does not depend on the backend. All chunks of an engine are priced in one call (one Ray task),
where they share the kernel-timing memo."""
from __future__ import annotations

import os
from collections.abc import Callable

from ..errors import WhatifError
from .evaluate import ReplicaProfile, evaluate_replica
from .space import ReplicaSetup, SearchSpace

BACKENDS = ("process", "ray")


MIN_SETUPS_PER_JOB = 8   # below this a worker's start-up (~0.05 s forked) outweighs its share (~0.1 s a setup)


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # (not on Linux)
        return os.cpu_count() or 1


def evaluate_in_process(space: SearchSpace, keys: list[ReplicaSetup],
                        progress: Callable[[int, int], None] | None = None,
                        jobs: int | None = None) -> list[ReplicaProfile]:
    """The keys' profiles in order; over min(jobs, len(keys) // MIN_SETUPS_PER_JOB) worker processes when that
    is more than one (default jobs: default_jobs()). Each worker prices whole replica setups (all their chunks
    and batches), so the answer is the same as in one process."""
    jobs = default_jobs() if jobs is None else jobs
    workers = min(jobs, len(keys) // MIN_SETUPS_PER_JOB)
    if workers > 1:
        return _evaluate_in_pool(space, keys, progress, workers)
    out = []
    for i, key in enumerate(keys):
        out += evaluate_replica(space, key)
        if progress is not None:
            progress(i + 1, len(keys))
    return out


def _evaluate_in_pool(space, keys, progress, workers: int) -> list[ReplicaProfile]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    # fork where there is one: the workers start with whatif imported and its tables loaded
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method)) as pool:
        out = []
        for i, profiles in enumerate(pool.map(evaluate_replica, [space] * len(keys), keys)):
            out += profiles
            if progress is not None:
                progress(i + 1, len(keys))
    return out


def _ray():
    try:
        import ray
    except ImportError:
        raise WhatifError("--backend ray needs the ray package: pip install 'whatif[ray]'") from None
    return ray


def evaluate_on_ray(space: SearchSpace, keys: list[ReplicaSetup], address: str | None = None,
                    progress: Callable[[int, int], None] | None = None) -> list[ReplicaProfile]:
    """One Ray task per engine; a local Ray runtime when `address` is None and none is running."""
    ray = _ray()
    started = False
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
        started = True
    try:
        task = ray.remote(evaluate_replica)
        space_ref = ray.put(space)
        pending = {task.remote(space_ref, key): i for i, key in enumerate(keys)}
        out: list[list[ReplicaProfile]] = [[] for _ in keys]
        remaining = list(pending)
        while remaining:
            done, remaining = ray.wait(remaining, num_returns=1)
            for ref in done:
                out[pending[ref]] = ray.get(ref)
            if progress is not None:
                progress(len(keys) - len(remaining), len(keys))
        return [p for profiles in out for p in profiles]
    finally:
        if started:
            ray.shutdown()


def evaluate(space: SearchSpace, keys: list[ReplicaSetup], backend: str = "process", address: str | None = None,
             progress: Callable[[int, int], None] | None = None, jobs: int | None = None) -> list[ReplicaProfile]:
    if backend not in BACKENDS:
        raise WhatifError(f"--backend: {backend!r} is not valid; valid: {', '.join(BACKENDS)}")
    if backend == "ray":
        if jobs is not None:
            raise WhatifError("--jobs: only with --backend process (a Ray cluster runs a task per CPU it has)")
        return evaluate_on_ray(space, keys, address, progress)
    if address is not None:
        raise WhatifError("--address: only with --backend ray")
    if jobs is not None:
        from ..specs.checks import integer
        integer(jobs, "--jobs", high=1024, what="processes")
    return evaluate_in_process(space, keys, progress, jobs)
