"""What the simulator records as it runs: one row per iteration per replica, and each replica's setup."""
from __future__ import annotations

from dataclasses import dataclass, field

ITERATION_COLUMNS = ("replica", "start_s", "duration_s", "decode_seqs", "prefill_seqs", "prefill_tokens",
                     "kv_blocks_used", "waiting", "running", "preempted", "swap_s")


@dataclass(frozen=True)
class ReplicaInfo:
    index: int
    role: str                  # mixed | prefill | decode
    gpus: int                  # tp x pp
    kv_blocks: int             # KV blocks the replica's memory holds
    block_size: int            # tokens per block
    kv_bytes_per_token: float  # per GPU (the most loaded pipeline stage)
    engines: int = 1           # virtual engines (pp micro-batches in flight); busy fraction divides by it
    kv_blocks_held_end: int = 0  # blocks still held by sequences when the run stopped


@dataclass
class IterationLog:
    """Columns of equal length, one entry per iteration (appended by the replicas as they run).

    start_s / duration_s: when the iteration ran, seconds (swap time included); decode_seqs /
    prefill_seqs / prefill_tokens: its batch; kv_blocks_used: blocks in use after it; waiting /
    running: queue lengths when it was formed; preempted: sequences it preempted; swap_s: seconds of
    it spent swapping KV to or from host memory."""

    columns: dict[str, list] = field(default_factory=lambda: {c: [] for c in ITERATION_COLUMNS})

    def append(self, *values) -> None:
        for column, value in zip(self.columns.values(), values):
            column.append(value)

    def __len__(self) -> int:
        return len(self.columns["start_s"])
