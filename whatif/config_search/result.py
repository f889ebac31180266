"""A search's answer: every configuration with its verdict, the Pareto frontier, the best under the SLOs, and
the same as a table a person reads, JSON, a pandas frame, CSV or Parquet."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field

from ..specs import units
from ..specs.checkpoint_quant import alias_note
from .checkpoint_scheme import CHECKPOINT, checkpoint_note, kv_note, own_scheme_labels
from .configs import DOES_NOT_FIT, INVALID, MISSES_SLO, OK, Config
from .recompile import warmup_note
from .space import SearchSpace, budget_notes

FRONTIER_ROWS = 12       # frontier rows the text shows (the frame and JSON hold all)
REASON_ROWS = 6          # rejection reasons the text shows


def _seconds(x: float) -> str:
    return units.seconds(x) if x == x else "-"


def _tok(x: float) -> str:
    return f"{x:,.1f}" if x < 100 else f"{x:,.0f}"


def sampled_frontier(frontier: list[Config]) -> list[Config]:
    """The frontier rows the text shows: all, or an even sample of a long frontier (the best is added to it)."""
    step = max(1, -(-len(frontier) // FRONTIER_ROWS))
    return [c for i, c in enumerate(frontier) if i % step == 0]


def _goodput(r: dict, key: str = "goodput_per_gpu_tok_s") -> str:
    """A re-check's goodput; '>= x' where every run passed (the capacity search's top: a lower bound)."""
    if not r["runs"]:
        return "not simulated"
    return (">= " if r.get("capped") else "") + (_tok(r[key]) if key != "goodput_req_s" else
                                                 units.rate(r[key], "req/s"))


def _predicted(r: dict) -> str:
    """A re-check's predicted rate: a frontier row the steady-state model already finds missing the SLOs is
    re-checked to be shown, and its rate is its full load, not a goodput to set beside the simulator's."""
    rate = units.rate(r["predicted_req_s"], "req/s")
    return rate if r["config"].status == OK else f"{rate}, misses SLO"


def _caveat_lines(rechecked: list[dict]) -> list[str]:
    """Each distinct caveat once, with the rows it applies to (the first named, the others counted)."""
    rows: dict[str, list[str]] = {}
    for r in rechecked:
        if r.get("caveat"):
            rows.setdefault(r["caveat"], []).append(r["config"].label())
    return [f"  {labels[0]}" + (f" (and {len(labels) - 1} more)" if len(labels) > 1 else "") + f": {caveat}"
            for caveat, labels in rows.items()]


def unpaired_note(space: SearchSpace, profiles: list, configs: list[Config]) -> str:
    """'' unless the disaggregated mode was searched and no prefill + decode cluster fits the GPU budget while a
    replica alone does: then the smallest replica that holds the model and the GPUs one pool of each needs (a
    reader of 'nothing fits' would otherwise shrink the batch of a replica that was never the obstacle)."""
    if "disaggregated" not in space.modes or space.output < 2 or any(c.prefill is not None for c in configs):
        return ""
    ready = [p for p in profiles if not p.error and p.points]
    if not ready:
        return ""
    p = min(ready, key=lambda x: (x.gpus, x.key.pp, x.key.label()))   # (TP before PP, as listed)
    return (f"disaggregated: no prefill + decode pair fits within {space.gpu_budget} GPUs: the smallest replica "
            f"that holds the model, [{p.key.label()}] ({p.gpus} GPUs), needs {2 * p.gpus} for one pool of each "
            "(more --gpus or --nodes" + (", or --modes aggregated)" if "aggregated" not in space.modes else ")"))


@dataclass
class SearchResult:
    space: SearchSpace
    configs: list[Config]                  # every configuration, in enumeration order
    frontier: list[Config]                 # Pareto-optimal feasible ones, by falling per-user throughput
    ranked: list[Config]                   # those meeting the SLOs, best first
    replica_setups: int = 0                # replica setups priced
    estimates: int = 0                     # roofline estimates run
    pruned: int = 0                        # --prune: batches of a replica setup and chunk not priced (prune.py)
    rechecked: list[dict] = field(default_factory=list)   # --simulate-top: simulator figures, best first
    unpaired: str = ""                     # why no disaggregated cluster fits where a replica does (unpaired_note)

    @property
    def best(self) -> Config | None:
        """The best configuration under the SLOs: when re-checked, best_recheck's (None when no re-checked
        configuration meets the SLOs in the simulator); else the steady-state model's best, or None."""
        if self.rechecked:
            top = self.best_recheck()
            return top["config"] if top else None
        return self.ranked[0] if self.ranked else None

    def best_recheck(self) -> dict | None:
        """The re-check of the best: the highest simulated goodput among those the steady-state model also
        finds meeting the SLOs (a frontier row that misses them is re-checked to be shown, not proposed)."""
        return next((r for r in self.rechecked if r["goodput_req_s"] > 0 and r["config"].status == OK), None)

    def shown_frontier(self) -> list[Config]:
        """The frontier rows the text prints: sampled_frontier, plus the best where the sample (or the frontier,
        for a best the simulator picked off it) lacks it, in order of falling per-user throughput."""
        shown, best = sampled_frontier(self.frontier), self.best
        if best is not None and not any(c is best for c in shown):
            at = next((i for i, c in enumerate(shown) if c.tok_s_per_user < best.tok_s_per_user), len(shown))
            shown.insert(at, best)
        return shown

    def counts(self) -> dict[str, int]:
        c = Counter(x.status for x in self.configs)
        return {s: c.get(s, 0) for s in (OK, MISSES_SLO, DOES_NOT_FIT, INVALID)}

    def reasons(self) -> list[tuple[str, int, str]]:
        """(reason kind, how many configurations, one example's full reason), most frequent first."""
        kinds: Counter = Counter()
        example: dict[str, str] = {}
        width: dict[str, tuple] = {}
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
            near = (_width(c), -_needs(c))
            if kind not in example or kind.endswith("weights and one sequence") and near > width[kind]:
                example[kind], width[kind] = f"{c.label()}: {c.reason}", near   # (no fit: the nearest)
        return [(k, n, example[k]) for k, n in kinds.most_common()]

    def none_fits(self) -> str:
        """'' unless no configuration fits at all: then the widest replica's shortfall, the nearest to fitting."""
        if not self.configs or any(c.status != DOES_NOT_FIT for c in self.configs):
            return ""
        if self.unpaired and "aggregated" not in self.space.modes:   # the replicas fit; the pair does not
            return f"best: nothing fits; {self.unpaired}"
        c = max(self.configs, key=lambda x: (_width(x), -_needs(x)))
        return (f"best: nothing fits within {self.space.gpu_budget} GPUs; the widest, {c.label()}, {c.reason} "
                "(more --gpus or --nodes, a smaller format: --quantizations / --kv-dtypes, or a shorter workload)")

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
                "estimates": self.estimates, "pruned": self.pruned, "best": best.row() if best else None,
                "frontier": [c.row() for c in self.frontier],
                "rejections": [{"reason": k, "configurations": n, "example": e} for k, n, e in self.reasons()],
                "best_by": ("simulator" if self.rechecked else "steady-state model") if best else None,
                "rechecked": [{k: (v.row() if k == "config" else v) for k, v in r.items()} for r in self.rechecked],
                "notes": budget_notes(self.space) + ([self.unpaired] if self.unpaired else []),
                "configurations": len(self.configs)}

    def write_csv(self, path: str) -> None:
        self.to_frame().to_csv(path, index=False)

    def write_parquet(self, path: str) -> None:
        self.to_frame().to_parquet(path, index=False)

    def _pruned_words(self) -> str:
        return f", {self.pruned:,} dominated batches not priced (--prune)" if self.pruned else ""

    def text(self) -> str:
        s = self.space
        c = self.counts()
        slo = ", ".join(f"{n} <= {units.seconds(v)}" for n, v in (("TTFT", s.slo.ttft_s), ("TPOT", s.slo.tpot_s),
                                                                   ("E2E", s.slo.e2e_s)) if v is not None)
        pool = ", ".join(f"{s.nodes}x {hw}" if s.nodes and s.nodes > 1 else hw for hw in s.hardware)
        lines = [f"{s.model} on {pool}, up to {s.gpu_budget} GPUs; prompt {s.prompt:,} / output "
                 f"{s.output:,} tokens; SLO {slo or 'none'}",
                 f"searched {len(self.configs):,} configurations ({self.replica_setups} replica setups, "
                 f"{self.estimates} roofline estimates{self._pruned_words()}): {c[OK]:,} meet the SLOs, "
                 f"{c[MISSES_SLO]:,} miss them, "
                 f"{c[DOES_NOT_FIT]:,} do not fit, {c[INVALID]:,} invalid"]
        lines += budget_notes(s)
        if self.unpaired and "aggregated" in s.modes:   # (disaggregated only: the best line says it)
            lines.append(self.unpaired)
        if CHECKPOINT in s.quantizations:
            lines.append(checkpoint_note(s.model))
        elif not s.quantizations and (note := alias_note(s.model)):
            lines.append(f"weights as --weight-dtypes says: {note} (--quantizations sets a scheme)")
        lines += [checkpoint_note(s.model, q) for q in own_scheme_labels(s.model, s.quantizations)]
        if note := kv_note(s.model, s.engine, s.kv_dtypes):
            lines.append(note)
        if note := warmup_note(s.prefill_recompile_s):
            lines.append(note)
        lines.append(self._best_line())
        if self.rechecked:
            lines += ["", "simulator re-check (goodput: the highest rate at which 90% of requests meet the SLOs; "
                          ">= where every run passed, a lower bound):",
                      units.table(["configuration", "GPUs", "predicted", "goodput", "goodput tok/s/GPU", "runs"],
                                  [[r["config"].label(), str(r["config"].gpus),
                                    _predicted(r), _goodput(r, "goodput_req_s"),
                                    _goodput(r) if r["runs"] else "0.0", str(r["runs"])] for r in self.rechecked],
                                  right={1, 2, 3, 4, 5})]
            lines += [f"  {r['config'].label()}: {r['note']}" for r in self.rechecked if not r["runs"]]
            lines += _caveat_lines(self.rechecked)
            if any(r.get("capped") for r in self.rechecked) and s.slo.ttft_s is None:
                lines.append("  >=: with no TTFT target a growing queue never fails the SLOs, so the rate is "
                             "unbounded; give --slo-ttft")
        lines += ["", f"Pareto frontier (tok/s per GPU against tok/s per user; {len(self.frontier)} configurations):",
                  self._frontier_table()]
        reasons = self.reasons()
        if reasons:
            lines += ["", "rejected:"] + [f"  {n:,} {k} (e.g. {e})" for k, n, e in reasons[:REASON_ROWS]]
        return "\n".join(lines)

    def _best_line(self) -> str:
        best = self.best
        if best is None and self.rechecked:
            return (f"best: none of the {len(self.rechecked)} configurations re-checked meets the SLOs under "
                    f"simulated traffic (see the re-check)")
        if best is None:
            return self.none_fits() or "best: no configuration meets the SLOs (see the frontier and the rejections)"
        line = (f"best: {best.mode} {best.label()} on {best.hardware}: {_tok(best.tok_s_per_gpu)} tok/s/GPU, "
                f"{_tok(best.tok_s_per_user)} tok/s/user, TTFT {_seconds(best.ttft_s)}, TPOT "
                f"{_seconds(best.tpot_s)}, {best.gpus} GPUs serving {_tok(best.tok_s)} tok/s "
                f"({best.request_rate:.3g} req/s)")
        if self.rechecked:
            r = self.best_recheck()
            return line + (f"; simulated goodput {_goodput(r, 'goodput_req_s')} = {_goodput(r)} tok/s/GPU "
                           f"(the best re-checked)")
        return line + "; by the steady-state model (--simulate-top K re-checks it in the simulator)"

    def _frontier_table(self) -> str:
        shown, best = self.shown_frontier(), self.best
        sims = {id(r["config"]): r for r in self.rechecked}
        on = {id(c) for c in self.frontier}
        rows = []
        for c in shown:
            mode = ("*" if c is best else "") + ("agg" if c.mode == "aggregated" else "disagg")
            row = [mode, c.label() + ("" if id(c) in on else " (off the frontier)"), str(c.gpus),
                   _seconds(c.ttft_s), _seconds(c.tpot_s), _tok(c.tok_s_per_user), _tok(c.tok_s_per_gpu),
                   _tok(c.tok_s)]
            if self.rechecked:
                row.append(_goodput(sims[id(c)]) if id(c) in sims else "-")
            rows.append(row + ["yes" if c.status == OK else c.reason])
        heads = ["mode", "configuration", "GPUs", "TTFT", "TPOT", "tok/s/user", "tok/s/GPU", "tok/s"]
        heads += ["simulated tok/s/GPU"] * bool(self.rechecked) + ["meets SLO"]
        table = units.table(heads, rows, right=set(range(2, len(heads) - 1)))
        more = len(self.frontier) - sum(id(c) in on for c in shown)
        notes = ([f"{more} more frontier configurations in --json/--csv"] if more else []) + \
            (["* = best"] if best is not None else [])
        return table + (f"\n({'; '.join(notes)})" if notes else "")


def _width(c) -> int:
    """GPUs of one (decode) replica: among layouts that do not fit, the widest is the nearest to fitting."""
    return c.replica.tp * c.replica.pp


def _needs(c) -> float:
    """Bytes a GPU needs in a 'does not fit: hbm needs 173 GB per GPU' reason (0 when it names none)."""
    m = re.search(r"needs ([\d.]+) ([kMGT]?)B per GPU", c.reason)
    return float(m.group(1)) * 1e3 ** " kMGT".index(m.group(2) or " ") if m else 0.0
