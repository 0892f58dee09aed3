"""Benchmark of the strategy lab: one offline run, and variant backtests in parallel.

    .venv/bin/python bench/algo.py [--symbol AAPL] [--to 2012-12-31] [--variants 3]
                                   [--iterations 3] [--goal "Sharpe above 1.2 ..."]
                                   [--quick]

1. One whole lab run with the ``rules`` agents on bundled data and the real sandbox:
   iterations, variants, the decision, the wall time, and how much of it each stage took
   (research swarm, strategist, backtests, gate); its periods, its trials with the deflated
   Sharpe ratio and PBO per iteration, and the chosen strategy's holdout figures.
2. The first iteration's variants backtested in and out of sample through the sandbox,
   all at once (``asyncio.gather``, as the lab's map-reduce node does) and one at a time;
   the figures of both must agree.

Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import defaultdict
from datetime import date
from pathlib import Path
from typing import Any

from alphadesk.agents.algo.models import StrategyVariant
from alphadesk.agents.algo.templates import TEMPLATES
from alphadesk.analytics.fuzzy import parse_goal
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.pipelines.algo.backtests import backtest_variants
from alphadesk.pipelines.algo.models import AlgoRequest
from alphadesk.pipelines.algo.pipeline import LAB_CONFIG, StrategyLab
from alphadesk.pipelines.runner import PipelineRunner


class _Stages:
    """Wall time per stage, from the step events (overlapping steps counted once)."""

    def __init__(self) -> None:
        self.started: dict[str, float] = {}
        self.spans: dict[str, list[tuple[float, float]]] = defaultdict(list)

    def on_event(self, event: Any) -> None:
        if event.kind == "step_started":
            self.started[event.agent] = time.perf_counter()
        elif event.kind == "step_finished" and event.agent in self.started:
            stage = _stage(event.agent)
            self.spans[stage].append((self.started.pop(event.agent), time.perf_counter()))

    def seconds(self) -> dict[str, float]:
        out = {}
        for stage, spans in self.spans.items():
            total, end = 0.0, 0.0
            for a, b in sorted(spans):
                total += max(0.0, b - max(a, end))
                end = max(end, b)
            out[stage] = total
        return out


def _stage(agent: str) -> str:
    if agent.startswith("backtest"):
        return "backtests"
    if agent in ("strategist",):
        return "strategist"
    if agent in ("failure_analyst", "trajectory_analyst", "quality_gate"):
        return "gate"
    return "research"


async def _lab(args: argparse.Namespace, settings: Settings) -> None:
    market = build_provider(settings)
    request = AlgoRequest(
        symbol=args.symbol,
        as_of=session_close(args.to),
        goal=args.goal,
        variants=args.variants,
        iterations=args.iterations,
        memory=False,
    )
    stages = _Stages()
    runner = PipelineRunner(settings, StrategyLab(settings, market), on_event=stages.on_event)
    start = time.perf_counter()
    result = await runner.analyze(request)
    wall = time.perf_counter() - start
    assert result is not None
    print(f"lab {args.symbol} to {args.to}: goal {args.goal!r}")
    print(
        f"  decision {result.decision}, {len(result.iterations)} iteration(s), "
        f"{len(result.variants)} variants, best {result.best.name if result.best else '-'} "
        f"(score {result.best.score if result.best else 0:.2f})"
    )
    print(
        f"  wall {wall:.1f} s; stages: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in sorted(stages.seconds().items()))
    )
    print(f"  decisions: {' -> '.join(e.gate.decision for e in result.iterations)}")
    _trial_figures(result)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _trial_figures(result: Any) -> None:
    """Periods, the trial figures after each iteration and at the end, and the holdout."""
    if result.in_sample and result.out_of_sample and result.holdout_period:
        print(
            f"  periods: search {result.in_sample[0]}..{result.in_sample[1]}, validation "
            f"{result.out_of_sample[0]}..{result.out_of_sample[1]}, holdout "
            f"{result.holdout_period[0]}..{result.holdout_period[1]}"
        )
    for entry in result.iterations:
        t = entry.trials
        if t is not None:
            print(
                f"  iteration {entry.iteration}: {t.trials} trials, best {t.best_variant}, "
                f"deflated Sharpe {_share(t.deflated_sharpe)}, PBO {_share(t.pbo)} "
                f"-> {entry.gate.decision}"
            )
    t, bar = result.trials, result.trial_bar
    if t is not None and bar is not None:
        print(
            f"  trials {t.trials}: deflated Sharpe {_share(t.deflated_sharpe)} (needs > "
            f"{bar.min_deflated_sharpe:.0%}), PBO {_share(t.pbo)} (needs < {bar.max_pbo:.0%})"
        )
    holdout = result.holdout
    if holdout is None or holdout.run is None:
        print(f"  holdout: not run ({holdout.reason if holdout else 'no holdout'})")
        return
    m = holdout.run.metrics
    print(
        f"  holdout {holdout.start}..{holdout.end} ({holdout.variant_id}, run once): "
        f"{'passed' if holdout.passed else 'failed'}; Sharpe {m.get('sharpe') or 0:.2f}, "
        f"drawdown {m.get('max_drawdown') or 0:.1%}, annual return "
        f"{m.get('annualized_return') or 0:.1%}, trades {m.get('trades')}, "
        f"score {holdout.run.score:.2f}"
    )


async def _parallel(args: argparse.Namespace, settings: Settings) -> None:
    market = build_provider(settings)
    request = AlgoRequest(
        symbol=args.symbol, as_of=session_close(args.to), goal=args.goal, memory=False
    )
    split = StrategyLab(settings, market, memory=None).split(request)
    variants = [
        StrategyVariant(
            variant_id=f"b{i}",
            name=t.name,
            description=t.description,
            template=t.name,
            approach=t.approach,
            parameters=t.params(),
            code=t.render(),
        )
        for i, t in enumerate(list(TEMPLATES.values())[: args.variants], 1)
    ]
    criteria = parse_goal(args.goal)
    start = time.perf_counter()
    together = await backtest_variants(variants, split, LAB_CONFIG, criteria, iteration=1)
    parallel = time.perf_counter() - start
    start = time.perf_counter()
    alone = [
        (await backtest_variants([v], split, LAB_CONFIG, criteria, iteration=1))[0]
        for v in variants
    ]
    serial = time.perf_counter() - start
    same = sum(
        a.in_sample.metrics == b.in_sample.metrics
        and (a.out_of_sample and a.out_of_sample.metrics)
        == (b.out_of_sample and b.out_of_sample.metrics)
        for a, b in zip(together, alone, strict=True)
    )
    runs = sum(1 + (r.out_of_sample is not None) for r in together)
    print(f"backtests of {len(variants)} variants ({runs} sandboxed runs, in and out of sample):")
    print(
        f"  all at once {parallel:.1f} s, one at a time {serial:.1f} s "
        f"({serial / parallel:.2f}x); figures identical for {same}/{len(variants)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--symbol", default="AAPL")
    parser.add_argument("--to", type=date.fromisoformat, default=date(2012, 12, 31))
    parser.add_argument("--variants", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--goal", default="Sharpe above 1.2 with drawdown under 15%")
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    args = parser.parse_args()
    if args.quick:  # explicit options still win
        parser.set_defaults(variants=1, iterations=1)
        args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp) / "alphadesk")
        asyncio.run(_lab(args, settings))
        asyncio.run(_parallel(args, settings))


if __name__ == "__main__":
    main()
