"""A search's answer: every configuration with its verdict, the Pareto frontier, the best under the SLOs, and
the same as a table a person reads, JSON, a pandas frame, CSV or Parquet."""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from ..specs import units
from .configs import DOES_NOT_FIT, INVALID, MISSES_SLO, OK, Config
from .space import SearchSpace

FRONTIER_ROWS = 12       # frontier rows the text shows (the frame and JSON hold all)
REASON_ROWS = 6          # rejection reasons the text shows


def _seconds(x: float) -> str:
    return units.seconds(x) if x == x else "-"


def _tok(x: float) -> str:
    return f"{x:,.1f}" if x < 100 else f"{x:,.0f}"


@dataclass
class SearchResult:
    space: SearchSpace
    configs: list[Config]                  # every configuration, in enumeration order
    frontier: list[Config]                 # Pareto-optimal feasible ones, by falling per-user throughput
    ranked: list[Config]                   # those meeting the SLOs, best first
    replica_setups: int = 0                # replica setups priced
    estimates: int = 0                     # roofline estimates run
    rechecked: list[dict] = field(default_factory=list)   # --simulate-top: simulator figures, best first

    @property
    def best(self) -> Config | None:
        """The best configuration under the SLOs (the simulator's when re-checked), or None."""
        if self.rechecked:
            return self.rechecked[0]["config"]
        return self.ranked[0] if self.ranked else None

    def counts(self) -> dict[str, int]:
        c = Counter(x.status for x in self.configs)
        return {s: c.get(s, 0) for s in (OK, MISSES_SLO, DOES_NOT_FIT, INVALID)}

    def reasons(self) -> list[tuple[str, int, str]]:
        """(reason kind, how many configurations, one example's full reason), most frequent first."""
        kinds: Counter = Counter()
        example: dict[str, str] = {}
        for c in self.configs:
            if c.status == OK:
                continue
            kind = c.status + (": " + " and ".join(p.split()[0] for p in c.reason.split("; "))
                               if c.status == MISSES_SLO else "")
            if c.status == DOES_NOT_FIT and "> max batch" in c.reason:
                kind += ": batch above the max batch"
            elif c.status == DOES_NOT_FIT:
                kind += ": weights and one sequence"
            kinds[kind] += 1
            example.setdefault(kind, f"{c.label()}: {c.reason}")
        return [(k, n, example[k]) for k, n in kinds.most_common()]

    def rows(self) -> list[dict]:
        frontier = {id(c) for c in self.frontier}
        best = self.best
        return [{**c.row(), "on_frontier": id(c) in frontier, "best": c is best} for c in self.configs]

    def to_frame(self):
        """Every configuration as a pandas DataFrame (one row each, columns of Config.row())."""
        import pandas as pd
        return pd.DataFrame(self.rows())

    def to_dict(self) -> dict:
        best = self.best
        return {"space": asdict(self.space), "counts": self.counts(), "replica_setups": self.replica_setups,
                "estimates": self.estimates, "best": best.row() if best else None,
                "frontier": [c.row() for c in self.frontier],
                "rejections": [{"reason": k, "configurations": n, "example": e} for k, n, e in self.reasons()],
                "rechecked": [{k: (v.row() if k == "config" else v) for k, v in r.items()} for r in self.rechecked],
                "configurations": len(self.configs)}

    def write_csv(self, path: str) -> None:
        self.to_frame().to_csv(path, index=False)

    def write_parquet(self, path: str) -> None:
        self.to_frame().to_parquet(path, index=False)

    def text(self) -> str:
        s = self.space
        c = self.counts()
        slo = ", ".join(f"{n} <= {units.seconds(v)}" for n, v in (("TTFT", s.slo.ttft_s), ("TPOT", s.slo.tpot_s),
                                                                   ("E2E", s.slo.e2e_s)) if v is not None)
        lines = [f"{s.model} on {', '.join(s.hardware)}, up to {s.gpu_budget} GPUs; prompt {s.prompt:,} / output "
                 f"{s.output:,} tokens; SLO {slo or 'none'}",
                 f"searched {len(self.configs):,} configurations ({self.replica_setups} replica setups, "
                 f"{self.estimates} roofline estimates): {c[OK]:,} meet the SLOs, {c[MISSES_SLO]:,} miss them, "
                 f"{c[DOES_NOT_FIT]:,} do not fit, {c[INVALID]:,} invalid"]
        best = self.best
        if best is None:
            lines.append("best: no configuration meets the SLOs (see the frontier and the rejections)")
        else:
            lines.append(f"best: {best.mode} {best.label()} on {best.hardware}: {_tok(best.tok_s_per_gpu)} tok/s/GPU, "
                         f"{_tok(best.tok_s_per_user)} tok/s/user, TTFT {_seconds(best.ttft_s)}, TPOT "
                         f"{_seconds(best.tpot_s)}, {best.gpus} GPUs serving {_tok(best.tok_s)} tok/s "
                         f"({best.request_rate:.3g} req/s)")
        if self.rechecked:
            lines += ["", "simulator re-check (goodput: the highest rate at which 90% of requests meet the SLOs):",
                      units.table(["configuration", "GPUs", "predicted", "goodput", "goodput tok/s/GPU", "runs"],
                                  [[r["config"].label(), str(r["config"].gpus),
                                    units.rate(r["predicted_req_s"], "req/s"),
                                    units.rate(r["goodput_req_s"], "req/s") if r["runs"] else "not simulated",
                                    _tok(r["goodput_per_gpu_tok_s"]), str(r["runs"])] for r in self.rechecked])]
            lines += [f"  {r['config'].label()}: {r['note']}" for r in self.rechecked if not r["runs"]]
            lines += [f"  {r['config'].label()}: {r['caveat']}" for r in self.rechecked if r.get("caveat")]
        lines += ["", f"Pareto frontier (tok/s per GPU against tok/s per user; {len(self.frontier)} configurations):",
                  self._frontier_table()]
        reasons = self.reasons()
        if reasons:
            lines += ["", "rejected:"] + [f"  {n:,} {k} (e.g. {e})" for k, n, e in reasons[:REASON_ROWS]]
        return "\n".join(lines)

    def _frontier_table(self) -> str:
        step = max(1, -(-len(self.frontier) // FRONTIER_ROWS))   # an even sample of a long frontier, best kept
        shown = [c for i, c in enumerate(self.frontier) if i % step == 0 or c is self.best]
        rows = []
        for c in shown:
            mode = ("*" if c is self.best else "") + ("agg" if c.mode == "aggregated" else "disagg")
            rows.append([mode, c.label(), str(c.gpus), _seconds(c.ttft_s), _seconds(c.tpot_s),
                         _tok(c.tok_s_per_user), _tok(c.tok_s_per_gpu), _tok(c.tok_s),
                         "yes" if c.status == OK else c.reason])
        table = units.table(["mode", "configuration", "GPUs", "TTFT", "TPOT", "tok/s/user", "tok/s/GPU", "tok/s",
                             "meets SLO"], rows, right={2, 3, 4, 5, 6, 7})
        more = len(self.frontier) - len(shown)
        return table + (f"\n({more} more frontier configurations in --json/--csv; * = best)" if more else "")
