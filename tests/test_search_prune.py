"""`--prune` (config_search/prune.py): the frontier, the best and the re-check's candidates are those of the
search without it, the rule's assumption holds on the space, and it really skips batches."""
from __future__ import annotations

import pytest

import whatif
from whatif.config_search.backends import evaluate
from whatif.config_search.configs import OK, Config
from whatif.config_search.prune import Dominators
from whatif.config_search.recheck import candidates
from whatif.config_search.result import sampled_frontier
from whatif.config_search.space import replica_setups

# 70B on 8 H100: fp8 weights, both KV formats, TP 1-4 x PP 1-2: a pp2 layout's middle batches are dominated
SPACE = dict(model="llama-3.1-70b", hardware="dgx-h100", gpus=8, prompt=4000, output=1000, tp=(1, 2, 4),
             pp=(1, 2), weight_dtypes=("fp8",), kv_dtypes=("bf16", "fp8"), batches=(1, 8, 64, 256), jobs=1)


@pytest.fixture(scope="module")
def both():
    return whatif.search(**SPACE), whatif.search(**SPACE, prune=True)


def test_pruning_keeps_the_frontier_and_the_best(both):
    full, pruned = both
    assert pruned.pruned >= 1 and len(pruned.configs) < len(full.configs)   # it did skip batches
    assert pruned.frontier == full.frontier              # every frontier configuration, every figure
    assert pruned.best == full.best
    assert candidates(full.space, pruned.ranked, sampled_frontier(pruned.frontier), 1) == \
        candidates(full.space, full.ranked, sampled_frontier(full.frontier), 1)   # what --simulate-top 1 runs
    kept = {c.label() for c in pruned.configs}
    assert all(c in full.configs for c in pruned.configs) and kept <= {c.label() for c in full.configs}
    assert "dominated batches not priced (--prune)" in pruned.text()


def _rising(space_kw: dict) -> None:
    """The rule's assumption: a batch's e2e and TPOT are no shorter than a smaller batch's, for every replica
    setup and chunk of the space (priced whole, without pruning)."""
    space = whatif.search(**{**space_kw, "batches": (1,)}).space   # (the SearchSpace, its batches set below)
    from dataclasses import replace
    space = replace(space, batches=space_kw["batches"])
    profiles = evaluate(space, replica_setups(space, False), jobs=1)
    pairs = [(a, b) for p in profiles for a, b in zip(p.points, p.points[1:])]
    assert len(pairs) >= 4
    assert all(b.e2e_s >= a.e2e_s and b.tpot_s >= a.tpot_s for a, b in pairs)


def test_step_times_rise_with_the_batch():
    _rising({**SPACE, "tp": (2,), "pp": (1, 2), "kv_dtypes": ("fp8",)})


@pytest.mark.slow
def test_step_times_rise_with_the_batch_on_the_whole_space():
    _rising(SPACE)


def _config(mode, user, per_gpu, batch):
    from whatif.config_search.space import ReplicaSetup
    key = ReplicaSetup("dgx-h100", 8, 1, 1, "bf16", "bf16")
    return Config(mode, "dgx-h100", key, batch, 1, 8, tok_s_per_user=user, tok_s_per_gpu=per_gpu, status=OK)


def test_dominators_beat_strictly_and_count_distinct_shapes():
    d = Dominators([_config("aggregated", 50.0, 100.0, 8), _config("aggregated", 20.0, 300.0, 64)])
    assert d.beat("aggregated", 40.0, 90.0)
    assert not d.beat("aggregated", 50.0, 90.0)           # a tie on one axis does not beat
    assert not d.beat("aggregated", 40.0, 300.0)
    assert not d.beat("disaggregated", 1.0, 1.0)          # another mode's configurations do not count
    one = [_config("aggregated", 50.0, 100.0, 8)]
    assert not Dominators(one, need=2).beat("aggregated", 1.0, 1.0)     # K = 2 needs two distinct shapes
    assert Dominators(one + [_config("aggregated", 60.0, 200.0, 16)], need=2).beat("aggregated", 1.0, 1.0)


class _FakeRay:
    """Just enough of ray's API for backends.evaluate_on_ray, each task run when submitted (this process)."""

    class _Ref:
        def __init__(self, value):
            self.value = value

    def is_initialized(self):
        return True

    def put(self, x):
        return x

    def remote(self, fn):
        return type("Task", (), {"remote": staticmethod(lambda *a: self._Ref(fn(*a)))})

    def wait(self, refs, num_returns=1):
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        return ref.value


def test_pruning_on_the_ray_backend_answers_as_in_process(monkeypatch):
    import sys
    kw = dict(model="llama-3.1-8b", hardware="dgx-h100", gpus=4, prompt=2000, output=200, ttft=0.3, tpot=0.02,
              tp=(1, 2), pp=(1, 2), batches=(1, 16, 128), prune=True)
    local = whatif.search(**kw, jobs=1)
    monkeypatch.setitem(sys.modules, "ray", _FakeRay())
    remote = whatif.search(**kw, backend="ray")
    assert remote.configs == local.configs and remote.pruned == local.pruned
    assert remote.frontier == local.frontier and remote.best == local.best


def test_cli_prune_flag_reaches_the_search(capsys, monkeypatch):
    import json
    from whatif.cli import main
    from whatif.config_search import prune
    waves = []
    real = prune.complete_replica
    monkeypatch.setattr(prune, "complete_replica", lambda *a: waves.append(a[1]) or real(*a))
    argv = ["search", "--model", "llama-3.1-8b", "--hardware", "dgx-h100", "--gpus", "4", "--prompt", "2000",
            "--output", "200", "--tp", "1,2", "--pp", "1,2", "--batches", "1,16,128", "--no-progress", "--json",
            "--jobs", "1"]
    assert main(argv) == 0
    plain = json.loads(capsys.readouterr().out)
    assert not waves
    assert main([*argv, "--prune"]) == 0
    pruned = json.loads(capsys.readouterr().out)
    assert waves                                        # the second wave ran
    assert pruned["frontier"] == plain["frontier"] and pruned["best"] == plain["best"]
    assert pruned["configurations"] <= plain["configurations"]
