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
                        jobs: int | None = None, fn: Callable = evaluate_replica, extra: list[tuple] | None = None,
                        done: int = 0, total: int | None = None) -> list[ReplicaProfile]:
    """fn(space, key, *extra[i]) of each key (default: evaluate_replica, the key's profiles), in order; over
    min(jobs, len(keys) // MIN_SETUPS_PER_JOB) worker processes when that is more than one (default jobs:
    default_jobs()), the first key priced here before they fork. Each worker prices whole replica setups (all their
    chunks and batches), so the answer is the same as in one process. `progress` gets (done + keys finished, total)."""
    jobs = default_jobs() if jobs is None else jobs
    extra = extra or [()] * len(keys)
    total = len(keys) if total is None else total
    workers = min(jobs, len(keys) // MIN_SETUPS_PER_JOB)
    if workers > 1:   # the first here: the workers fork with the tables and fits it loaded warm (not each its own)
        first = fn(space, keys[0], *extra[0])
        if progress is not None:
            progress(done + 1, total)
        return first + _evaluate_in_pool(space, keys[1:], progress, workers, fn, extra[1:], done + 1, total)
    out = []
    for i, key in enumerate(keys):
        out += fn(space, key, *extra[i])
        if progress is not None:
            progress(done + i + 1, total)
    return out


def _call(args):
    fn, space, key, extra = args
    return fn(space, key, *extra)


def fork_pool(workers: int):
    """A process pool that forks where it can: the workers start with whatif imported and its tables loaded."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method))


def _evaluate_in_pool(space, keys, progress, workers: int, fn, extra, done: int, total: int) -> list[ReplicaProfile]:
    with fork_pool(workers) as pool:
        out = []
        for i, profiles in enumerate(pool.map(_call, [(fn, space, k, e) for k, e in zip(keys, extra)])):
            out += profiles
            if progress is not None:
                progress(done + i + 1, total)
    return out


def _ray():
    try:
        import ray
    except ImportError:
        raise WhatifError("--backend ray needs the ray package: pip install 'whatif[ray]'") from None
    return ray


def evaluate_on_ray(space: SearchSpace, keys: list[ReplicaSetup], address: str | None = None,
                    progress: Callable[[int, int], None] | None = None, fn: Callable = evaluate_replica,
                    waves: int = 1, between: Callable | None = None) -> list[ReplicaProfile]:
    """One Ray task per engine; a local Ray runtime when `address` is None and none is running. With `waves` 2,
    a second wave of prune.complete_replica tasks, their extra arguments from between(first wave's profiles)."""
    ray = _ray()
    started = False
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
        started = True
    try:
        space_ref = ray.put(space)
        extra: list[tuple] = [()] * len(keys)
        out: list[ReplicaProfile] = []
        for wave in range(waves):
            task = ray.remote(fn if wave == 0 else _second_wave())
            pending = {task.remote(space_ref, key, *extra[i]): i for i, key in enumerate(keys)}
            got: list[list[ReplicaProfile]] = [[] for _ in keys]
            remaining = list(pending)
            while remaining:
                finished, remaining = ray.wait(remaining, num_returns=1)
                for ref in finished:
                    got[pending[ref]] = ray.get(ref)
                if progress is not None:
                    progress(wave * len(keys) + len(keys) - len(remaining), waves * len(keys))
            out = [p for profiles in got for p in profiles]
            if wave + 1 < waves:
                extra = between(out)
        return out
    finally:
        if started:
            ray.shutdown()


def _second_wave():
    from .prune import complete_replica
    return complete_replica


def evaluate(space: SearchSpace, keys: list[ReplicaSetup], backend: str = "process", address: str | None = None,
             progress: Callable[[int, int], None] | None = None, jobs: int | None = None,
             prune: int = 0) -> list[ReplicaProfile]:
    """Every key's profiles, in order. `prune` K > 0 (and the per-GPU objective): in two waves, the batches
    between the ends priced only where prune.py cannot rule them out, keeping the K best of each mode."""
    if backend not in BACKENDS:
        raise WhatifError(f"--backend: {backend!r} is not valid; valid: {', '.join(BACKENDS)}")
    from .prune import prunes
    waves = 2 if prune and prunes(space) else 1
    if backend == "ray":
        if jobs is not None:
            raise WhatifError("--jobs: only with --backend process (a Ray cluster runs a task per CPU it has)")
        return evaluate_on_ray(space, keys, address, progress, _first_wave(waves), waves,
                               lambda ends: second_wave_args(space, keys, ends, prune))
    if address is not None:
        raise WhatifError("--address: only with --backend ray")
    if jobs is not None:
        from ..specs.checks import integer
        integer(jobs, "--jobs", high=1024, what="processes")
    if waves == 1:
        return evaluate_in_process(space, keys, progress, jobs)
    ends = evaluate_in_process(space, keys, progress, jobs, _first_wave(2), total=2 * len(keys))
    return evaluate_in_process(space, keys, progress, jobs, _second_wave(), second_wave_args(space, keys, ends, prune),
                               len(keys), 2 * len(keys))


def _first_wave(waves: int) -> Callable:
    return evaluate_replica if waves == 1 else _ends


def _ends(space: SearchSpace, key: ReplicaSetup) -> list[ReplicaProfile]:
    return evaluate_replica(space, key, ends=True)


def second_wave_args(space: SearchSpace, keys: list[ReplicaSetup], ends: list[ReplicaProfile],
                     need: int) -> list[tuple]:
    """Per key: (its first-wave profiles, every profile that can be a prefill pool, the dominators)."""
    from .configs import compose
    from .prune import Dominators
    dominators = Dominators(compose(space, ends), need)
    prefills = [p for p in ends if not p.error]
    per_key: dict[ReplicaSetup, list[ReplicaProfile]] = {}
    for p in ends:
        per_key.setdefault(p.key, []).append(p)
    return [(per_key[k], prefills, dominators) for k in keys]
