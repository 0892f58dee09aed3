"""One evaluation from spec to files: the walk, the scoring, the table, the manifest."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from alphadesk import __version__
from alphadesk.backtest import BacktestConfig, Costs, Sizing, frame_from_bars
from alphadesk.cluster import RayCluster
from alphadesk.config import CacheMode, MemorySettings, Settings
from alphadesk.data.actions import dividend_cash
from alphadesk.data.bars import Bars
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import session_close, sessions_between
from alphadesk.data.disguise import Disguise
from alphadesk.data.disguised import disguised_provider
from alphadesk.data.errors import DataError
from alphadesk.data.models import Coverage
from alphadesk.llm.base import Model
from alphadesk.pipelines.base import Pipeline, build_pipeline
from alphadesk.store import RunStore

from .deciding import Heard, Where, continue_decisions, in_order
from .files import write_files
from .journal import DecisionJournal
from .lookahead import guard
from .models import DecisionRecord, EvalSpec, EvaluationError
from .positions import ShortPut
from .reflecting import Reflections
from .scoring import Scored, score_csp, score_desk, table_rows
from .statistics import statistics
from .walk import BeforeDay, DeskFactory, Desks, ModelWrap, Pair, agent_models

__all__ = [
    "WARM_UP",
    "Asked",
    "Evaluation",
    "EvaluationError",
    "cache_mode",
    "decide_at",
    "eval_folder",
    "evaluate",
    "run_manifest",
    "universe",
]

# History a symbol needs before --from: the baselines' indicators (and the trend rule's
# 200-session average) warm up on it.
WARM_UP = timedelta(days=365)


@dataclass
class Evaluation:
    """A finished evaluation: the table rows, every decision, and where the files are."""

    spec: EvalSpec
    folder: Path
    rows: list[dict[str, Any]]
    decisions: list[DecisionRecord]
    scored: list[Scored]
    files: list[Path]
    manifest: dict[str, Any]


def eval_folder(settings: Settings, spec: EvalSpec, out: Path | None = None) -> Path:
    """Where an evaluation's files go: ``out``, else ``data_dir/evals/<spec name>``."""
    return out if out is not None else settings.data_dir / "evals" / spec.name


def universe(
    coverage: Sequence[Coverage], start: date, end: date, warm_up: timedelta = WARM_UP
) -> list[str]:
    """The symbols an evaluation from ``start`` to ``end`` can take: daily bars on every
    session of the window and ``warm_up`` before it."""
    from alphadesk.data.universe import covering

    return covering(coverage, start - warm_up, end)


def config_of(spec: EvalSpec) -> BacktestConfig:
    """The backtest engine's settings an evaluation trades with."""
    return BacktestConfig(
        cash=spec.cash,
        costs=Costs(spec.commission, "percent", spec.slippage),
        sizing=Sizing("fraction", fraction=spec.fraction),
        long_short=spec.long_short,
    )


async def evaluate(
    settings: Settings,
    spec: EvalSpec,
    *,
    out: Path | None = None,
    market: MarketData | None = None,
    desk_factory: DeskFactory | None = None,
    wrap_model: ModelWrap | None = None,
    on_start: Callable[[int], None] | None = None,
    on_decision: Callable[[DecisionRecord], None] | None = None,
    cluster: RayCluster | None = None,
    workers: int | None = None,
    fresh: bool = False,
    on_resume: Callable[[int], None] | None = None,
    disguise: Disguise | None = None,
) -> Evaluation:
    """Walk ``spec``'s desk forward, score it beside the baselines, write the files.

    Each decision is appended to ``<folder>/decisions.jsonl`` as it is made; an evaluation
    whose folder holds that file for the same spec continues from it (``on_resume`` hears
    how many were recorded; failed ones are asked again), ``fresh`` starts over. The
    desk's runs and the response cache live in ``<folder>/store``: the first evaluation
    records every model answer, one whose folder holds a finished one of the same spec
    with no failed decision replays them. The decisions are made in ``workers`` processes
    (default: one per core; here when a ``desk_factory`` or ``wrap_model`` is given and no
    ``workers``) or on Ray actors with ``cluster``; the decisions and files are the same.

    With ``disguise`` the desk decides on the disguised market (the same decisions asked
    under other names, price levels and years, see :mod:`.anonymize`), wherever it runs;
    the records, the journal and the scoring are in the real ones.

    Raises:
        EvaluationError: No data or no session in the range, an unknown symbol, a folder
            holding another evaluation's decisions.
        LookAheadError: The desk read data past a decision instant.
        CacheMiss: Replaying asked something the first evaluation did not.
    """
    started, wall = datetime.now(UTC), time.monotonic()
    folder = eval_folder(settings, spec, out)
    mode = cache_mode(settings, folder, spec)
    given = market is not None
    if market is None:
        from alphadesk.data import build_provider

        market = build_provider(settings)
    dates = _dates(spec)
    frames, closes, priced = _frames(market, spec, dates)
    how = Asked(
        market if given else None, desk_factory, wrap_model, cluster, workers, fresh, disguise
    )
    desk, records, made = await decide_at(
        settings, spec, dates, folder, mode, how, Heard(on_start, on_resume, on_decision)
    )
    scored = _scored(spec, market, frames, closes, records, dates)
    try:
        extra = statistics(spec, scored, records, frames)
    except ValueError as exc:  # the trend rule's average needs 200 sessions before --from
        raise EvaluationError(f"{exc}; start the evaluation later") from None
    rows = [row | extra[(row["strategy"], row["symbol"])] for row in table_rows(scored)]
    manifest = run_manifest(spec, mode, records, made, started, time.monotonic() - wall, desk)
    manifest["prices"] = priced
    files = write_files(folder, spec, rows, records, scored, manifest)
    return Evaluation(spec, folder, rows, records, scored, files, manifest)


@dataclass(frozen=True)
class Asked:
    """How an evaluation's desk is built and where it decides (see :func:`evaluate`)."""

    market: MarketData | None = None  # None: built from the settings, here and in workers
    desk_factory: DeskFactory | None = None
    wrap_model: ModelWrap | None = None
    cluster: RayCluster | None = None
    workers: int | None = None
    fresh: bool = False
    disguise: Disguise | None = None
    desks: Desks | None = None  # the trading desk a pair is asked of, if not the settings'
    depth: str = "full"  # a book's (``triage``: the desks above)
    memory: bool = False  # the desk learns day by day from its outcomes (:mod:`.reflecting`)

    def walk(self) -> dict[str, object]:
        """What, besides the spec, decides the decisions a journal holds."""
        return ({"depth": self.depth} if self.depth != "full" else {}) | (
            {"memory": True} if self.memory else {}
        )


async def decide_at(
    settings: Settings,
    spec: EvalSpec,
    dates: Sequence[datetime],
    folder: Path,
    mode: CacheMode,
    how: Asked,
    heard: Heard,
    only: Collection[Pair] | None = None,
) -> tuple[Pipeline[Any, Any], list[DecisionRecord], list[DecisionRecord]]:
    """``spec``'s desk asked at ``dates`` (only the symbol-dates of ``only``, if given),
    continuing ``folder``'s journal: the desk, every decision in (date, symbol) order, and
    those made in this call. With ``how.memory`` the desk recalls the lessons the walk
    writes between its days, in ``<folder>/store/memory``, and decides here, day by day.

    Raises:
        EvaluationError: A model the desk cannot build, a journal of another spec, memory
            asked of a desk that has none or of a disguised walk.
    """
    if how.memory and how.disguise is not None:
        raise EvaluationError("a disguised walk cannot learn: run it without memory")
    local = settings.model_copy(
        update={
            "data_dir": folder / "store",
            "cache": mode,
            # A walk's desk reflects only between its days (:mod:`.reflecting`).
            "memory": MemorySettings(enabled=how.memory, reflect=False),
        }
    )
    market = how.market
    if market is None:
        from alphadesk.data import build_provider

        market = build_provider(settings)
    factory, wrap = how.desk_factory, how.wrap_model
    try:
        desk = _desk(spec, local, _seen(market, how.disguise), factory, wrap, mode)
    except ValueError as exc:  # e.g. a model string LiteLLM cannot read
        raise EvaluationError(str(exc)) from None
    # Each worker builds its own desk: from the settings, or from ``market`` if given.
    args = (spec, local, settings, how.market, factory, wrap, mode)
    make = partial(_remote_desk, *args, how.disguise)
    objects = factory is not None or wrap is not None  # objects stay here
    workers = how.workers or (1 if objects else None)
    journal = DecisionJournal.open(
        folder, spec, fresh=how.fresh, disguise=how.disguise, walk=how.walk()
    )
    before_day = None
    if how.memory:
        heard, before_day = _learning(desk, local, market, dates, journal, heard, how.fresh)
    where = Where(desk, make, workers, how.cluster, how.disguise, how.desks, before_day)
    made = await continue_decisions(spec, local, dates, journal, where, heard, only)
    return desk, in_order(spec, dates, journal.recorded, made, only), made


def _learning(
    desk: Pipeline[Any, Any],
    local: Settings,
    market: MarketData,
    dates: Sequence[datetime],
    journal: DecisionJournal,
    heard: Heard,
    fresh: bool,
) -> tuple[Heard, BeforeDay]:
    """The walk's reflections, told of the decisions its journal holds and of each one
    made: who hears of the decisions, and what to await before each day."""
    memory = getattr(desk, "memory", None)
    if memory is None:
        raise EvaluationError(f"the {desk.kind} has no memory to learn with: run it without")
    if fresh:  # the lessons of the walk started over go with its decisions
        memory.forget()
    learning = Reflections(memory, RunStore(local.store_path), market, dates)
    for record in sorted(journal.recorded.values(), key=lambda r: (r.as_of, r.symbol)):
        learning.heard(record)
    told = heard.on_decision

    def on_decision(record: DecisionRecord) -> None:
        learning.heard(record)
        if told is not None:
            told(record)

    return replace(heard, on_decision=on_decision), learning.before


def _scored(
    spec: EvalSpec,
    market: MarketData,
    frames: dict[str, pd.DataFrame],
    closes: dict[str, pd.Series],
    records: list[DecisionRecord],
    dates: list[datetime],
) -> list[Scored]:
    config = config_of(spec)
    try:
        if spec.desk == "desk":
            return score_desk(spec, config, frames, records, dates)
        mechanical = {s: _mechanical_puts(market, s, dates) for s in spec.symbols}
        on_basis = partial(_on_end_basis, market, closes)
        return score_csp(spec, config, frames, closes, records, mechanical, dates, on_basis)
    except ValueError as exc:  # e.g. too little history before --from for an indicator
        raise EvaluationError(f"{exc}; start the evaluation later") from None


def _seen(market: MarketData, disguise: Disguise | None) -> MarketData:
    """What the desk reads: ``market``, or its disguise, behind the look-ahead guard."""
    return guard(market if disguise is None else disguised_provider(market, disguise))


def cache_mode(settings: Settings, folder: Path, spec: EvalSpec) -> CacheMode:
    """Replay when a finished evaluation of this spec is in the folder, else record."""
    if settings.cache is CacheMode.REPLAY:
        return CacheMode.REPLAY
    try:
        before = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return CacheMode.RECORD
    same = before.get("fingerprint") == spec.fingerprint()
    # Failed decisions are asked again (in record mode the recorded answers still replay).
    whole = before.get("status") == "complete" and before.get("failed") == 0
    return CacheMode.REPLAY if same and whole else CacheMode.RECORD


def _dates(spec: EvalSpec) -> list[datetime]:
    from alphadesk.pipelines.screen.pipeline import rebalancing_dates

    try:
        dates = rebalancing_dates(spec.start, spec.end, spec.every)
    except ValueError as exc:
        raise EvaluationError(f"{exc}; pick a range with trading sessions") from None
    if len(sessions_between(spec.start, spec.end)) < 2:
        raise EvaluationError(
            f"{spec.start}..{spec.end} has fewer than 2 sessions; widen the range"
        )
    return dates


def _last_close(spec: EvalSpec) -> datetime:
    earlier = sessions_between(spec.end - timedelta(days=10), spec.end)
    return session_close(earlier[-1])


def _frames(
    market: MarketData, spec: EvalSpec, dates: list[datetime]
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.Series], dict[str, str]]:
    """Each symbol's bars known at the last close (the harness's own read, not the desk's):
    OHLCV for the backtests (see :func:`_priced`), raw closes to settle puts, and the basis
    of each symbol's prices.

    Raises:
        EvaluationError: Symbols without bars over the whole window, all of them named,
            before any decision is made (an evaluation of fewer symbols than asked would
            answer another question).
    """
    frames, closes, priced, problems = {}, {}, {}, []
    end = _last_close(spec)
    for symbol in spec.symbols:
        try:
            bars = market.daily_bars(symbol, end)
            frame, priced[symbol] = _priced(market, bars, end)
            raw, _ = frame_from_bars(bars, adjust=False)
        except (DataError, ValueError) as exc:
            problems.append(str(exc) if symbol in str(exc) else f"{symbol}: {exc}")
            continue
        problem = _gap(symbol, frame, pd.Timestamp(dates[0]), pd.Timestamp(end), spec)
        if problem:
            problems.append(problem)
            continue
        frames[symbol], closes[symbol] = frame, raw["close"]
    if problems:
        raise EvaluationError(
            f"no daily bars over the window {spec.start} to {spec.end} for "
            f"{len(problems)} of {len(spec.symbols)} symbols, so nothing was decided: "
            + "; ".join(problems)
            + ". Drop them, move the window (`alphadesk data list` shows each symbol's "
            "range), or take --universe all"
        )
    return frames, closes, priced


def _priced(market: MarketData, bars: Bars, end: datetime) -> tuple[pd.DataFrame, str]:
    """Prices as traded with each dividend credited as cash on its ex-date to the position
    held, where the data has dividend records (and as-traded closes); else adjusted for
    splits and dividends, as a symbol without records always was. With the basis."""
    try:
        dividends = market.dividends(bars.symbol, end)
    except DataError as exc:
        frame, notes = frame_from_bars(bars)
        return frame, "; ".join([*notes, f"no dividend credited ({exc})"])
    if "close" not in bars.fields:
        frame, notes = frame_from_bars(bars)
        return frame, "; ".join([*notes, "no dividend credited (no as-traded close)"])
    cash = dividend_cash(bars.frame.index, dividends, end)
    frame, notes = frame_from_bars(bars, adjust=False, dividends=cash)
    return frame, "; ".join([*notes, f"{dividends.provenance.provider} dividend records"])


def _gap(
    symbol: str, frame: pd.DataFrame, first: pd.Timestamp, last: pd.Timestamp, spec: EvalSpec
) -> str | None:
    """What keeps ``frame`` from covering the window from ``first`` to ``last``, if any."""
    first, last = first.tz_convert(frame.index.tz), last.tz_convert(frame.index.tz)
    if frame.index[0] > first:
        return f"{symbol}'s data starts {frame.index[0].date()}, after --from {spec.start}"
    if frame.index[-1].date() < last.date():
        return f"{symbol}'s data ends {frame.index[-1].date()}, before --to {spec.end}"
    if int(frame.index.searchsorted(first)) >= len(frame) - 1:
        return f"{symbol} has fewer than 2 bars from {spec.start} to {spec.end}"
    return None


def _desk(
    spec: EvalSpec,
    settings: Settings,
    market: MarketData,
    factory: DeskFactory | None,
    wrap: ModelWrap | None,
    mode: CacheMode,
) -> Pipeline[Any, Any]:
    specs = _agent_specs(spec.desk)
    models: Mapping[str, Model] = agent_models(specs, settings, spec.model, mode, wrap)
    if factory is not None:
        return factory(settings, market, models)
    # The evaluation is one tier above the pipeline it evaluates: built through the registry.
    return build_pipeline(spec.desk, settings, market, model=spec.model, models=models)


def _remote_desk(
    spec: EvalSpec,
    local: Settings,
    settings: Settings,
    market: MarketData | None,
    factory: DeskFactory | None,
    wrap: ModelWrap | None,
    mode: CacheMode,
    disguise: Disguise | None,
) -> Pipeline[Any, Any]:
    """The evaluation's desk, built where it runs (a worker process or a Ray actor), on
    the market seen through ``disguise`` if any."""
    if market is None:
        from alphadesk.data import build_provider

        market = build_provider(settings)
    return _desk(spec, local, _seen(market, disguise), factory, wrap, mode)


def _agent_specs(kind: str) -> list[Any]:
    if kind == "desk":
        from alphadesk.agents.desk import default_agents

        return list(default_agents().all)
    from alphadesk.agents.csp import default_agents as csp_agents

    agents = csp_agents()
    return [*(agents.by_name(n) for n in agents.names), agents.narrator]


def _on_end_basis(market: MarketData, closes: dict[str, pd.Series], put: ShortPut) -> ShortPut:
    """``put``, struck at the price as it traded when sold, on the basis of the closes it is
    settled on (the end's): the ratio of the sale's close as read then to the same close as
    read at the end is the product of the splits in between."""
    settled = closes[put.symbol]
    at = int(settled.index.searchsorted(pd.Timestamp(put.sold_at), side="right")) - 1
    if at < 0:
        return put
    traded = float(market.daily_bars(put.symbol, put.sold_at).prices().iloc[-1])
    ratio = round(traded / float(settled.iloc[at]), 6)
    return put.on_basis(ratio)


def _mechanical_puts(market: MarketData, symbol: str, dates: list[datetime]) -> list[ShortPut]:
    """The baseline put: at each date, the put nearest the middle of the constraints' delta
    band at the expiration nearest the middle of their DTE window, sold at the bid."""
    from alphadesk.agents.csp.models import CspConstraints
    from alphadesk.tools.options.models import nearest_expiration

    rules = CspConstraints()
    band = (rules.delta_min + rules.delta_max) / 2
    puts = []
    for instant in dates:
        try:
            chain = market.option_chain(
                symbol, instant, min_dte=rules.dte_min, max_dte=rules.dte_max
            )
        except DataError:
            continue
        expiration = nearest_expiration(chain, (rules.dte_min + rules.dte_max) // 2)
        fits = [
            c
            for c in chain.select("put", expiration)
            if c.delta is not None
            and rules.delta_min <= abs(c.delta) <= rules.delta_max
            and (c.bid or c.mid or c.last)
        ]
        if not fits:
            continue
        best = min(fits, key=lambda c: (abs(abs(c.delta or 0) - band), -c.strike))
        premium = float(best.bid or best.mid or best.last or 0.0)
        puts.append(ShortPut(symbol, instant, best.expiration, best.strike, premium))
    return puts


def run_manifest(
    spec: EvalSpec,
    mode: CacheMode,
    records: list[DecisionRecord],
    made: list[DecisionRecord],
    started: datetime,
    seconds: float,
    desk: Pipeline[Any, Any],
) -> dict[str, Any]:
    """What varies between two runs of one evaluation: ids, times, live model calls (of
    the decisions made in this run; the others were recorded by an earlier one)."""
    return {
        "status": "complete",
        "fingerprint": spec.fingerprint(),
        "alphadesk": __version__,
        "desk": desk.kind,
        "models": desk.model_label,
        "cache_mode": mode.value,
        "started_at": started.isoformat(),
        "wall_seconds": round(seconds, 3),
        "decisions": len(records),
        "decided_now": len(made),
        "resumed": len(records) - len(made),
        "failed": sum(r.decision == "failed" for r in records),
        "model_calls": sum(r.model_calls for r in records),
        "live_model_calls": sum(r.live_calls for r in made),
        "live_cost_usd": sum(r.model_cost_usd for r in made if r.live_calls),
        "run_ids": [r.run_id for r in records if r.run_id],
    }
