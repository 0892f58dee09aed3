"""The trading desk run as one book over many names, scored beside the book baselines:
the one book walker of both protocols (``eval --benchmark stockbench`` and
``eval --portfolio``).

At every ``every``-th session of the window the desk decides each name at the previous
close (the evaluation's walk, journal and workers); a :class:`Weighting` turns that
day's decisions and the book into target weights, traded at that session's open. The
default, :data:`EQUAL_LONGS`, is a plain rule labelled as such wherever it is shown: the
names the desk then holds long (BUY, or HOLD after a BUY; SELL and a failed decision as
the walk keeps positions) get equal weights and the rest is cash; while the set of names
held is unchanged the book is left to drift (no trade, no cost). Scored as every book is
(:mod:`.book`), beside the book baselines (and, under StockBench's protocol, its passive
baseline), with intervals against equal weight held.

With ``depth="triage"`` the desk is asked only where :mod:`.triage` finds something
material for a name since its last full decision; elsewhere the name carries that
decision, its reason saying so (same decisions where the desk is asked: the same desk on
the same inputs). The row and the folder name the depth.

Files in the folder: ``decisions.jsonl`` (the journal: an interrupted run continues
from it), ``book.json`` and ``book.md`` (the same bytes for the same run), and
``manifest.json`` (times and model calls, the only file that varies); with the triage,
``triage.jsonl``: each name's call on each day, asked or carried, and why.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from alphadesk.config import RULES_MODEL, Settings
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import session_close
from alphadesk.llm.base import Model
from alphadesk.pipelines.base import Pipeline, pipeline_class

from .book import Book, Session, equal_weight, run_book
from .deciding import Heard
from .evaluate import Asked, cache_mode, decide_at, run_manifest
from .models import DecisionRecord, EvalSpec
from .stockbench import (
    HOLD,
    PROTOCOL,
    Protocol,
    Row,
    baseline_books,
    markdown,
    market_frames,
    paper_rows,
    scored_rows,
    snapshot,
)
from .triage import UPDATE, Call, TriageRules, carried, triage
from .walk import ModelWrap, fill_positions

__all__ = [
    "DEPTHS",
    "DESK_ROW",
    "EQUAL_LONGS",
    "Depth",
    "DeskBook",
    "Weighting",
    "desk_book_spec",
    "equal_longs",
    "evaluate_desk_book",
    "reusing_desk",
]

DESK_ROW = "desk ({model}): {weighting}"
Depth = Literal["full", "triage"]  # how deep each name is decided
DEPTHS: tuple[Depth, ...] = ("full", "triage")


@dataclass(frozen=True)
class Weighting:
    """How a day's decisions become the book's target weights: ``weights(decisions,
    session)`` gets the desk's decisions of the close before ``session`` (one per name,
    their ``position`` filled) and the book at its open (``session.weights``), and returns
    target weights (none negative, at most 1 in all) or ``None`` to leave the book as it
    is. ``label`` names the book's row."""

    label: str
    weights: Callable[[Sequence[DecisionRecord], Session], Mapping[str, float] | None]


def equal_longs(decisions: Sequence[DecisionRecord], session: Session) -> dict[str, float] | None:
    """Equal weights over the names held long after ``decisions``; ``None`` (drift) while
    they are the names the book holds."""
    longs = sorted(r.symbol for r in decisions if (r.position or 0) > 0)
    held = sorted(str(s) for s in session.weights.index[session.weights > 0])
    return None if longs == held else equal_weight(longs)


EQUAL_LONGS = Weighting("equal weight over its longs", equal_longs)


def managed(decisions: Sequence[DecisionRecord], session: Session) -> dict[str, float] | None:
    """The fund's portfolio manager (its ``rules`` policy, :func:`rules_targets`) on the
    day's decisions and the book at the open, with the fund's default limits: at most 25 %
    a name, no shorts or leverage, turnover at most the NAV. The book is walked in weights,
    so the minimum trade is judged on a nominal $100,000 NAV."""
    from alphadesk.agents.fund.manager import rules_targets
    from alphadesk.agents.fund.models import DeskCall, Holding
    from alphadesk.agents.fund.tasks import FundTask
    from alphadesk.portfolio.targets import BookLimits

    if not decisions:
        return None
    nav = 100_000.0
    prices = {s: float(p) for s, p in session.opens.items()}
    held = {str(s): float(w) for s, w in session.weights.items() if w}
    calls = [
        DeskCall(symbol=r.symbol, decision=_call(r.decision), conviction=r.conviction,
                 rationale=r.reason or "", price=prices[r.symbol])
        for r in decisions
    ]  # fmt: skip
    holdings = [
        Holding(symbol=s, shares=w * nav / prices[s], price=prices[s], weight=w)
        for s, w in sorted(held.items())
    ]
    task = FundTask(as_of=decisions[0].as_of, desks=calls, holdings=holdings,
                    cash=nav * (1 - sum(held.values())), nav=nav, limits=BookLimits())  # fmt: skip
    return {t.symbol: t.weight for t in rules_targets(task).targets} | {
        s: w for s, w in held.items() if s not in {c.symbol for c in calls}
    }


def _call(decision: str) -> Literal["BUY", "HOLD", "SELL", "failed"]:
    return decision if decision in ("BUY", "HOLD", "SELL") else "failed"  # type: ignore[return-value]


MANAGED = Weighting("the fund's portfolio manager", managed)


@dataclass
class DeskBook:
    """A finished book evaluation: its rows (the paper's first), decisions and files."""

    protocol: Protocol
    spec: EvalSpec
    folder: Path
    rows: list[Row]
    decisions: list[DecisionRecord]
    manifest: dict[str, Any]


def _decision_sessions(opens: pd.DataFrame, protocol: Protocol, every: int) -> list[int]:
    """Rows of ``opens`` traded after a decision: every ``every``-th of the window."""
    return list(range(protocol.warmup, len(opens), every))


def desk_book_spec(protocol: Protocol, every: int, model: str, opens: pd.DataFrame) -> EvalSpec:
    """The walk's spec: the first decision at the close before the window's first open."""
    first = opens.index[protocol.warmup - 1].date()
    return EvalSpec(
        symbols=list(protocol.symbols),
        start=first,
        end=protocol.end,
        every=every,
        model=model,
        cash=protocol.cash,
        commission=protocol.commission_bps / 1e4,
        slippage=0.0,
        fraction=1.0,
    )


async def evaluate_desk_book(
    settings: Settings,
    protocol: Protocol = PROTOCOL,
    *,
    every: int = 1,
    model: str = RULES_MODEL,
    out: Path | None = None,
    workers: int | None = None,
    fresh: bool = False,
    paper: bool = True,
    weightings: Sequence[Weighting] = (EQUAL_LONGS, MANAGED),
    reuse: bool = False,
    depth: Depth = "full",
    triage_rules: TriageRules | None = None,
    memory: bool = False,
    wrap_model: ModelWrap | None = None,
    on_start: Callable[[int], None] | None = None,
    on_decision: Callable[[DecisionRecord], None] | None = None,
    on_resume: Callable[[int], None] | None = None,
) -> DeskBook:
    """Walk the desk over ``protocol``'s names and window as one book, its decisions
    weighted by each of ``weightings`` (a row each, from the same decisions), and score
    it. StockBench's protocol reads the bundled data; a portfolio's, the settings' market.
    With ``reuse`` each desk (one per worker) reuses an analyst's report while what it
    reads is unchanged (:mod:`alphadesk.pipelines.desk.reuse`). With ``depth="triage"``
    each name is decided at the depth :func:`.triage.triage` (by ``triage_rules``) calls:
    the whole desk, its update, or its last decision carried. With ``memory`` the desk
    learns from the outcomes of its decisions as each day knows them
    (:mod:`.reflecting`), deciding day by day in this process. ``wrap_model`` wraps each
    agent's model (e.g. to count what it is sent); the decisions are then made in this
    process unless ``workers`` says otherwise.

    Raises:
        EvaluationError: Too few sessions before the window, a journal of another run.
        ValueError: Bars missing on a session of the window.
    """
    started, wall = datetime.now(UTC), time.monotonic()
    from alphadesk.data import build_provider

    market: MarketData = build_provider(settings) if protocol.kind == "portfolio" else snapshot()
    opens, closes, dividends = market_frames(protocol, market)
    spec = desk_book_spec(protocol, every, model, opens)
    prefix = "book" if protocol.kind == "stockbench" else "portfolio"
    prefix += ("" if depth == "full" else f"-{depth}") + ("-memory" if memory else "")
    folder = out if out is not None else settings.data_dir / "evals" / f"{prefix}-{spec.name}"
    traded = _decision_sessions(opens, protocol, every)
    dates = [session_close(opens.index[i - 1].date()) for i in traded]
    mode = cache_mode(settings, folder, spec)
    factory = reusing_desk if reuse else None
    if reuse and wrap_model is None and workers is None:  # the factory travels to workers
        workers = os.cpu_count() or 1
    how = Asked(
        desk_factory=factory, wrap_model=wrap_model, workers=workers, fresh=fresh, memory=memory
    )
    heard = Heard(on_start, on_resume, on_decision)
    calls: list[Call] = []
    if depth == "triage":
        calls = triage(market, spec.symbols, dates, triage_rules)
        only = {(c.symbol, c.as_of) for c in calls if c.ask != "carry"}
        updates = {(c.symbol, c.as_of): UPDATE for c in calls if c.ask == "update"}
        how = replace(how, desks=updates, depth=depth)
        desk, asked, made = await decide_at(settings, spec, dates, folder, mode, how, heard, only)
        records = _with_carried(asked, calls, dates, spec.symbols)
    else:
        desk, records, made = await decide_at(settings, spec, dates, folder, mode, how, heard)
    by_row = _by_row(records, dates, traded)
    books = baseline_books(protocol, opens, closes, dividends)
    label = ", ".join(
        [model] + ([depth] if depth != "full" else []) + (["memory"] if memory else [])
    )
    for weighting in weightings:
        row = DESK_ROW.format(model=label, weighting=weighting.label)
        books[row] = _desk_book(protocol, (opens, closes, dividends), by_row, weighting)
    rows = (paper_rows() if paper else []) + scored_rows(books, HOLD)
    manifest = run_manifest(spec, mode, records, made, started, time.monotonic() - wall, desk)
    carry = sum(1 for c in calls if c.ask == "carry")
    manifest |= {"depth": depth, "memory": memory, "resumed": manifest["resumed"] - carry}
    manifest |= {"update calls": sum(1 for c in calls if c.ask == "update"), "carry calls": carry}
    _write(folder, protocol, spec, rows, books)
    if calls:
        lines = "".join(c.model_dump_json() + "\n" for c in calls)
        (folder / "triage.jsonl").write_text(lines, "utf-8")
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    return DeskBook(protocol, spec, folder, rows, records, manifest)


def reusing_desk(
    settings: Settings, market: MarketData, models: Mapping[str, Model]
) -> Pipeline[Any, Any]:
    """The trading desk with its own :class:`AnalystReports` (built where it decides)."""
    from alphadesk.pipelines.desk.reuse import AnalystReports

    desk: Pipeline[Any, Any] = pipeline_class("desk")(
        settings, market, models=models, reports=AnalystReports()
    )
    return desk


def _with_carried(
    full: list[DecisionRecord],
    calls: Sequence[Call],
    dates: list[datetime],
    symbols: Sequence[str],
) -> list[DecisionRecord]:
    """The full decisions and, on every other day, the name's last one carried, in
    (date, symbol) order with the positions they leave."""
    decided = {(r.symbol, r.as_of): r for r in full}
    by_key = {(c.symbol, c.as_of): c for c in calls}
    records = []
    for day in dates:
        for symbol in symbols:
            call = by_key[(symbol, day)]
            if call.ask != "carry" or call.since is None:
                records.append(decided[(symbol, day)])
            else:
                records.append(carried(call, decided[(symbol, call.since)]))
    fill_positions(records, long_short=False)
    return records


def _by_row(
    records: list[DecisionRecord], dates: list[datetime], traded: list[int]
) -> dict[int, list[DecisionRecord]]:
    """Each decision date's decisions, by the row of the open they trade at."""
    by_date: dict[datetime, list[DecisionRecord]] = {d: [] for d in dates}
    for record in records:
        by_date[record.as_of].append(record)
    return {row: by_date[d] for row, d in zip(traded, dates, strict=True)}


def _desk_book(
    protocol: Protocol,
    frames: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
    by_row: dict[int, list[DecisionRecord]],
    weighting: Weighting,
) -> Book:
    def policy(session: Session) -> Mapping[str, float] | None:
        decisions = by_row.get(session.i)
        return None if decisions is None else weighting.weights(decisions, session)

    return run_book(
        *frames,
        policy,
        first=protocol.warmup,
        cash=protocol.cash,
        commission=protocol.commission_bps / 1e4,
    )


def _write(
    folder: Path, protocol: Protocol, spec: EvalSpec, rows: list[Row], books: dict[str, Book]
) -> None:
    """``book.json`` (rows and each book's marked values) and ``book.md``: a pure function
    of the run, so a rerun writes the same bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    curves = {name: [round(v, 6) for v in book.nav] for name, book in books.items()}
    days = [d.date().isoformat() for d in next(iter(books.values())).nav.index]
    payload = {
        "protocol": protocol.model_dump(mode="json"),
        "spec": spec.model_dump(mode="json"),
        "rows": [r.model_dump() for r in rows],
        "sessions": days,
        "nav": curves,
    }
    (folder / "book.json").write_text(json.dumps(payload, indent=2) + "\n", "utf-8")
    (folder / "book.md").write_text(markdown(rows, protocol), "utf-8")
