"""The universe evaluation's speed: a stated fraction of it, and the projected whole.

    python bench/eval.py [--symbols AAPL,KO] [--years 1] [--workers N] [--ray] [--full] [--quick]

The universe evaluation is ``alphadesk eval --universe all --from 2001-03-01 --to
2013-02-28 --every 5``: every bundled symbol with daily bars over those twelve years and
the year before (25 symbols), weekly, 15,100 decisions of the rules trading desk.
This runs ``--symbols`` over the first ``--years`` of that window with the same options
(``--full``: the whole thing) in a fresh folder, and prints:

- decisions, wall time, the time to the first decision (process start-up included), the
  decision rate over the decision phase, and the machine's load average before and after;
- the scoring of the whole universe, measured: its decisions file filled with a trend
  rule's decisions (no desk), then the evaluation run on it, which reads them back and
  scores (baselines, bootstrap intervals, decision mix, files);
- the projected wall time of the whole universe: start-up, the decisions at the measured
  rate, and that scoring, beside the 20-minute goal; and, independent of what else the
  machine is running, the CPU seconds a decision costs and the time the universe would
  take with every core free;
- where a worker's wall time goes, per decision (the kernel's scheduler counters of each
  worker, Linux): on a CPU, waiting for a CPU behind other processes, or neither (the
  disk, its own threads); and its other threads' CPU seconds.

``--harness`` also times the evaluation around the desk: two symbols over two years with a
desk that answers BUY at once, in this process (recording, journal, scoring, files).
``--ray`` runs the fraction on a local Ray cluster too (start-up included) for comparison
with the process pool. Figures only: nothing here asserts a time.

Measured on 2 cores, the default fraction (AAPL and KO over 2001-03-01..2002-02-28, 100
decisions). On idle cores, with the desk's own work cut to 0.08 s: 22.5 decisions a
second, 0.11 CPU seconds a decision, the universe projected at 11.4 minutes; the whole
universe then ran in 13 min 56 s (18.2 a second, 0.10 CPU seconds a decision). With the
desk's own work at 0.16 s: 11.7 a second, the universe projected at 21.6 minutes and run
in 21 min 47 s. At 0.27 s, at load average 1.7: 8.7 decisions a second, 0.22 CPU seconds
a decision, the universe projected at 29 minutes (28 on idle cores); a worker's 0.25 s a
decision were 0.18 s on a CPU, 0.04 s waiting for one and 0.04 s neither, its other threads 0.03 CPU
seconds. At load average 7 (other work on both cores): 3.6 a second, 71 minutes; a
worker's 0.60 s were 0.19 s on a CPU, 0.35 s waiting for one behind the other processes
and 0.06 s neither. The harness: 0.007 to 0.010 CPU seconds a decision (0.016 before the
response cache kept its connection and the evaluation's runs dropped their checkpoint
files; 7.3 decisions a second then at load 1.8, 2.9 at load 7).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd

from alphadesk.cluster import RayCluster
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.pipelines.evaluation import EvalSpec, evaluate, universe
from alphadesk.pipelines.evaluation.spread import BATCH

START, END, EVERY = date(2001, 3, 1), date(2013, 2, 28), 5
GOAL_S = 20 * 60


@dataclass
class Timing:
    decisions: int
    wall: float
    first: float  # seconds to the first decision
    deciding: float  # first decision to last
    scoring: float  # last decision to the end
    cpu: float | None  # CPU seconds of the workers (this process's if it decided itself)
    split: tuple[float, ...] | None = None  # a worker's seconds a decision (_Workers)


class _Workers:
    """Where the worker processes' time goes while they decide, from the kernel's
    scheduler counters (``/proc/PID/schedstat``: time on a CPU, time runnable but waiting
    for one), sampled at each decision: per decision, the seconds a worker's main thread
    spent on a CPU, waiting for a CPU (other processes' load), and neither (waiting on the
    disk, on its own threads, or for work); and the CPU seconds of its other threads."""

    def __init__(self) -> None:
        self.first: dict[int, tuple[float, ...]] = {}
        self.last: dict[int, tuple[float, ...]] = {}

    def sample(self) -> None:
        now = time.perf_counter()
        for pid in _children():
            try:
                on_cpu, waiting, _slices = Path(f"/proc/{pid}/schedstat").read_text().split()
                threads = sum(
                    int(t.read_text().split()[0])
                    for t in Path(f"/proc/{pid}/task").glob("*/schedstat")
                )
            except (OSError, ValueError):
                continue  # ended, or no scheduler statistics on this system
            seen = (now, int(on_cpu) / 1e9, int(waiting) / 1e9, threads / 1e9)
            self.first.setdefault(pid, seen)
            self.last[pid] = seen

    def split(self, decisions: int) -> tuple[float, ...] | None:
        """Per decision: seconds on a CPU, waiting for one, neither; the other threads'
        CPU seconds (the workers' seconds summed, over the decisions made in them: all but
        about a first batch each, decided before the first sample)."""
        spent = [
            [end - start for end, start in zip(self.last[p], self.first[p], strict=True)]
            for p in self.first
        ]
        counted = decisions - BATCH * len(spent)
        if not any(wall for wall, *_ in spent) or counted < 1:
            return None
        wall, on_cpu, waiting, threads = (sum(c) / counted for c in zip(*spent, strict=True))
        return on_cpu, waiting, wall - on_cpu - waiting, threads - on_cpu


def _children() -> list[int]:
    """This process's child processes (the workers, when forked from it)."""
    pids: list[int] = []
    for task in Path("/proc/self/task").glob("*"):
        try:
            pids += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return pids


async def _timed(spec: EvalSpec, root: Path, workers: int | None, ray: bool) -> Timing:
    marks: dict[str, float] = {}
    sampled = _Workers()

    def decided(_record: Any) -> None:
        now = time.perf_counter()
        marks.setdefault("first", now)
        marks["last"] = now
        sampled.sample()

    began, mine, workers_cpu = time.perf_counter(), _cpu(), _cpu(resource.RUSAGE_CHILDREN)
    cluster = RayCluster() if ray else None
    done = await evaluate(
        Settings(data_dir=root), spec, workers=workers, cluster=cluster, on_decision=decided
    )
    ended = time.perf_counter()
    return Timing(
        decisions=len(done.decisions),
        wall=ended - began,
        first=marks["first"] - began,
        deciding=marks["last"] - marks["first"],
        scoring=ended - marks["last"],
        cpu=None if ray else _cpu(resource.RUSAGE_CHILDREN) - workers_cpu or _cpu() - mine,
        split=None if ray else sampled.split(len(done.decisions)),
    )


class _InstantDesk:
    """A trading desk that answers BUY at once: what is left is the harness's cost."""

    kind = "desk"
    model_label = "instant"

    def __init__(self, market: Any) -> None:
        from alphadesk.pipelines.desk.models import DeskRequest, DeskResult

        self.market, self.request_type, self.result_type = market, DeskRequest, DeskResult

    def title(self, request: Any) -> str:
        return f"instant {request.symbol}"

    def report(self, result: Any) -> str:
        return str(result.decision)

    @staticmethod
    def graph_shape(request: Any) -> Any:
        return ()

    @staticmethod
    def graph(request: Any, node: Any) -> Any:
        from langgraph.graph import END, START, StateGraph

        graph = StateGraph(dict)
        graph.add_node("decide", node("decide"))
        graph.add_edge(START, "decide")
        graph.add_edge("decide", END)
        return graph

    def nodes(self, request: Any, run: Any) -> Any:
        async def decide(state: dict[str, Any]) -> dict[str, Any]:
            made = self.result_type(symbol=request.symbol, as_of=request.as_of, decision="BUY")
            return {"result": made.model_dump(mode="json")}

        return lambda _name: decide


def _harness(root: Path) -> None:
    spec = EvalSpec(symbols=["KO", "JNJ"], start=date(2005, 1, 1), end=date(2006, 12, 31))
    spec = spec.model_copy(update={"every": EVERY, "concurrency": 1})
    began, cpu = time.perf_counter(), _cpu()
    done = asyncio.run(
        evaluate(
            Settings(data_dir=root),
            spec,
            workers=1,
            desk_factory=lambda _s, market, _m: _InstantDesk(market),
        )
    )
    n = len(done.decisions)
    print(
        f"harness ({n} decisions of an instant desk, in this process): "
        f"{(_cpu() - cpu) / n:.3f} CPU seconds and {(time.perf_counter() - began) / n:.3f}s "
        "wall a decision, scoring and files included"
    )


def _cpu(who: int = resource.RUSAGE_SELF) -> float:
    """CPU seconds of this process, or of its children that have ended (the workers)."""
    used = resource.getrusage(who)
    return used.ru_utime + used.ru_stime


def _clock(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def _scoring(full: EvalSpec, root: Path) -> tuple[float, float]:
    """Seconds (wall and CPU) to score the whole universe from a decisions file of
    trend-rule decisions."""
    from alphadesk.analytics.decision_mix import trend_actions
    from alphadesk.pipelines.evaluation import DecisionRecord
    from alphadesk.pipelines.evaluation.journal import DecisionJournal

    market, dates = build_provider(Settings()), _dates(full)
    journal = DecisionJournal.open(root, full)
    for symbol in full.symbols:
        closes = market.daily_bars(symbol, dates[-1]).prices()
        at = [pd.Timestamp(d).tz_convert(closes.index.tz) for d in dates]
        actions = trend_actions(closes, at)
        journal.append(
            DecisionRecord(symbol=symbol, as_of=d, decision=a)
            for d, a in zip(dates, actions, strict=True)
        )
    journal.close()
    began, cpu = time.perf_counter(), _cpu()
    asyncio.run(evaluate(Settings(data_dir=root), full, out=root))
    return time.perf_counter() - began, _cpu() - cpu


def _report(
    label: str, t: Timing, scoring: tuple[float, float], full: EvalSpec, full_count: int
) -> None:
    scoring, scoring_cpu = scoring
    rate = (t.decisions - 1) / t.deciding if t.deciding > 0 else float("nan")
    print(
        f"{label}: {t.decisions} decisions in {t.wall:.1f}s wall; first after {t.first:.1f}s; "
        f"{rate:.2f} decisions/s while deciding; scoring and files {t.scoring:.1f}s"
    )
    projected = t.first + full_count / rate + scoring
    print(
        f"  projected universe ({len(full.symbols)} symbols, {full_count:,} decisions) at "
        f"this load: {_clock(projected)} (m:ss) beside the 20:00 goal: {_verdict(projected)}"
    )
    if t.split is not None:
        on_cpu, waiting, other, threads = t.split
        print(
            f"  a worker's wall time a decision: {on_cpu + waiting + other:.3f}s = "
            f"{on_cpu:.3f}s on a CPU + {waiting:.3f}s waiting for a CPU (the machine's "
            f"load) + {other:.3f}s neither (disk, its threads, waiting for work); its "
            f"other threads {threads:.3f} CPU seconds"
        )
    if t.cpu is None:  # Ray's workers are not this process's children: no CPU figure
        return
    # Load-independent: the CPU a decision costs, on every core with nothing else running.
    each = t.cpu / t.decisions
    idle = full_count * each / (os.cpu_count() or 1) + scoring_cpu
    print(
        f"  {each:.2f} CPU seconds a decision; on {os.cpu_count()} idle cores the universe "
        f"would take {_clock(idle)} (m:ss): {_verdict(idle)}"
    )


def _verdict(seconds: float) -> str:
    return "within the goal" if seconds <= GOAL_S else f"{seconds / GOAL_S:.1f}x the goal"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--symbols", default="AAPL,KO", help="The fraction's symbols.")
    parser.add_argument("--years", type=float, default=1.0, help="The fraction's years.")
    parser.add_argument("--workers", type=int, default=None, help="Default: one per core.")
    parser.add_argument("--ray", action="store_true", help="Also on a local Ray cluster.")
    parser.add_argument("--full", action="store_true", help="Run the whole universe.")
    parser.add_argument("--harness", action="store_true", help="Time the harness alone.")
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    args = parser.parse_args()
    if args.quick:  # explicit options still win
        parser.set_defaults(symbols="AAPL", years=0.1)
        args = parser.parse_args()

    symbols = universe(build_provider(Settings()).coverage(), START, END)
    full = EvalSpec(symbols=symbols, start=START, end=END, every=EVERY, concurrency=2)
    full_count = len(_dates(full)) * len(symbols)
    if args.full:
        spec = full
    else:
        end = date.fromordinal(START.toordinal() + round(args.years * 365.25) - 1)
        spec = full.model_copy(update={"symbols": args.symbols.split(","), "end": end})
    print(
        f"{os.cpu_count()} cores, load average before {_load()}; fraction: "
        f"{', '.join(spec.symbols)} from {spec.start} to {spec.end}, every {EVERY} sessions"
    )
    scored = spec if args.quick else full  # --quick: the fraction's own scoring
    with tempfile.TemporaryDirectory() as tmp:
        scoring = (0.0, 0.0) if args.full else _scoring(scored, Path(tmp) / "scoring")
    print(
        f"scoring {'the fraction' if args.quick else 'the whole universe'} from its decisions: "
        f"{scoring[0]:.1f}s wall, {scoring[1]:.1f} CPU seconds"
    )
    with tempfile.TemporaryDirectory() as tmp:
        local = asyncio.run(_timed(spec, Path(tmp) / "pool", args.workers, ray=False))
    workers = args.workers or os.cpu_count()
    _report(f"processes ({workers})", local, _or(scoring, local), full, full_count)
    if args.ray:
        with tempfile.TemporaryDirectory() as tmp:
            on_ray = asyncio.run(_timed(spec, Path(tmp) / "ray", None, ray=True))
        _report("ray (local cluster)", on_ray, _or(scoring, on_ray), full, full_count)
    if args.harness:
        with tempfile.TemporaryDirectory() as tmp:
            _harness(Path(tmp))
    print(f"load average after {_load()}")


def _or(scoring: tuple[float, float], run: Timing) -> tuple[float, float]:
    """The universe's scoring as measured, or (with --full) the run's own."""
    return scoring if scoring[0] else (run.scoring, 0.0)


def _dates(spec: EvalSpec) -> list[Any]:
    from alphadesk.pipelines.screen.pipeline import rebalancing_dates

    return rebalancing_dates(spec.start, spec.end, spec.every)


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
