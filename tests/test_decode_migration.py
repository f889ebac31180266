"""DistServe's hand-off (simulator/decode_migration.py, Replica.first_token): the context stage streams the first
token, the decoding loop moves each KV itself between its steps behind should_accept's gate."""
from types import SimpleNamespace

import pytest

from whatif.claims.family_j import CLAIMS
from whatif.claims.serving import deep_merged, run
from whatif.simulator import replica as R
from whatif.simulator.block_manager import BlockManager
from whatif.simulator.decode_migration import gate_open


def _scheduler(blocks: int, free: int, waiting_prompts: list[int]):
    bm = BlockManager(blocks, 16, 0, False)
    bm.allocate(blocks - free)
    arrived = [SimpleNamespace(req=SimpleNamespace(prompt=p)) for p in waiting_prompts]
    return SimpleNamespace(bm=bm, kv_arrived=arrived)


def test_gate_is_should_accept():
    """Waiting prompts' blocks strictly under gate x blocks, and the prompt's blocks within the free ones."""
    assert gate_open(_scheduler(1000, 1000, []), 800, 0.05)
    assert gate_open(_scheduler(1000, 1000, [49 * 16]), 16, 0.05)          # 49 blocks waiting < 50
    assert not gate_open(_scheduler(1000, 1000, [50 * 16]), 16, 0.05)      # 50 blocks: not < 50
    assert gate_open(_scheduler(1000, 50, []), 50 * 16, 0.05)               # 50 blocks fit 50 free
    assert not gate_open(_scheduler(1000, 50, []), 50 * 16 + 1, 0.05)       # 51 do not


def _distserve_side(requests: int) -> dict:
    (c,) = [c for c in CLAIMS if c.paper.startswith("DistServe sustains 4.6x")]
    side = deep_merged(c.setup, c.variant)
    side["kernel_engine"] = c.system_engine
    return deep_merged(side, {"sim": {"traffic": {"requests": requests}}})


def _run_with(monkeypatch, first: bool, gate: float, requests: int = 40, rate: float = 3.0):
    init = R.Replica.__init__

    def patched(self, *a, **k):
        init(self, *a, **k)
        self.first_token_sent = self.first_token_sent and first
        self.migration_gate = gate if self.role == "decode" else 0.0
    monkeypatch.setattr(R.Replica, "__init__", patched)
    return run(_distserve_side(requests), rate)


def test_first_token_leaves_with_the_prefill_step(monkeypatch):
    """The context stage's first token skips the hand-off: every TTFT is shorter, the token count is unchanged."""
    sent = _run_with(monkeypatch, True, 0.05)
    landed = _run_with(monkeypatch, False, 0.05)
    assert all(a.emitted.count == a.request.output for a in sent.records)
    for a, b in zip(sent.records, landed.records):
        assert a.ttft_s < b.ttft_s
        assert a.finish_s == pytest.approx(b.finish_s)


def test_the_decode_loop_waits_for_each_kv_it_moves(monkeypatch):
    """A KV move stalls the decoding loop (post_process is awaited before the next step): with every send made
    slow, the loop's steps never overlap a move and the requests finish later than with sends beside the steps."""
    monkeypatch.setattr(R.Replica, "send_time", lambda self, seq: 0.05)
    in_loop = _run_with(monkeypatch, True, 0.05, requests=20)
    beside = _run_with(monkeypatch, True, 0.0, requests=20)
    assert max(r.finish_s for r in in_loop.records) > max(r.finish_s for r in beside.records)
    assert all(a.emitted.count == a.request.output for a in in_loop.records)
