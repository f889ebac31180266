"""Which replica of a pool takes a request: round-robin, least outstanding requests, or prefix-aware
(requests of one prefix id stick to the replica that took the first, so its prefix cache hits)."""
from __future__ import annotations


class Router:
    def __init__(self, policy: str, replicas: list):
        self.policy = policy
        self.replicas = replicas
        self.turn = 0
        self.sticky: dict[str, object] = {}

    def pick(self, prefix_id: str | None = None):
        if len(self.replicas) == 1:
            return self.replicas[0]
        if self.policy == "round-robin":
            replica = self.replicas[self.turn % len(self.replicas)]
            self.turn += 1
            return replica
        if self.policy == "prefix-aware" and prefix_id is not None:
            if prefix_id not in self.sticky:
                self.sticky[prefix_id] = self._least_outstanding()
            return self.sticky[prefix_id]
        return self._least_outstanding()

    def _least_outstanding(self):
        return min(self.replicas, key=lambda r: r.outstanding)
