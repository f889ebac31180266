"""Which replica of a pool takes a request: round-robin, least outstanding requests, prefix-aware
(requests of one prefix id stick to the replica that took the first, so its prefix cache hits), or random
(uniform, seeded: an attention-DP rank chosen by a random key, rank_group.py)."""
from __future__ import annotations

import random


class Router:
    def __init__(self, policy: str, replicas: list, seed: str = ""):
        self.policy = policy
        self.replicas = replicas
        self.turn = 0
        self.sticky: dict[str, object] = {}
        self.rng = random.Random(seed) if policy == "random" else None

    def pick(self, prefix_id: str | None = None):
        if len(self.replicas) == 1:
            return self.replicas[0]
        if self.policy == "round-robin":
            replica = self.replicas[self.turn % len(self.replicas)]
            self.turn += 1
            return replica
        if self.rng is not None:
            return self.replicas[self.rng.randrange(len(self.replicas))]
        if self.policy == "prefix-aware" and prefix_id is not None:
            if prefix_id not in self.sticky:
                self.sticky[prefix_id] = self._least_outstanding()
            return self.sticky[prefix_id]
        return self._least_outstanding()

    def _least_outstanding(self):
        return min(self.replicas, key=lambda r: r.outstanding)
