"""The memorization control: the same evaluation on the real market and on a disguised one.

A model that remembers the period (it reads ``AAPL`` and ``2012-05-25`` and knows what came
next) scores well on the real market and no better than chance on the disguised one, where
the symbols have invented names, the prices another level and the dates another year (see
:mod:`alphadesk.data.disguise`). A desk that decides from the data alone takes the same
decisions on both. :func:`evaluate_anonymized` runs both evaluations, each in its own
folder with its own recorded answers, maps the disguised decisions back to the real
symbols and dates (the disguise is a bijection), scores both on the real bars and writes
the side-by-side table with the gap: per symbol and pooled, the return, the Sharpe ratio,
the annual-return gap with its 95 % block-bootstrap interval (both desks resampled on the
same days, as in :mod:`.statistics`) and the share of decisions that agree. Each half's
own table (its folder's ``table.md``) carries the intervals and the decision mix.

Both halves are made where a plain evaluation's are (worker processes, in process, or
Ray) and each keeps its own ``decisions.jsonl``: a rerun continues both, ``fresh``
discards both.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from alphadesk.analytics.bootstrap import bootstrap_intervals
from alphadesk.cluster import RayCluster
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.data.disguise import Disguise
from alphadesk.data.disguised import disguise_of

from .evaluate import Evaluation, EvaluationError, eval_folder, evaluate
from .models import DecisionRecord, EvalSpec
from .scoring import DESK, POOLED, Scored
from .statistics import METHOD
from .walk import DeskFactory, ModelWrap

__all__ = ["ANONYMIZED_FILES", "DEFAULT_SEED", "Anonymized", "evaluate_anonymized", "gap_rows"]

DEFAULT_SEED = 1
ANONYMIZED_FILES = ("anonymized.md", "anonymized.csv", "anonymized.json")
# (key in the rows, header for a person)
GAP_COLUMNS = (
    ("symbol", "symbol"),
    ("return", "return"),
    ("return_disguised", "disguised"),
    ("return_gap", "return gap"),
    ("sharpe", "Sharpe"),
    ("sharpe_disguised", "disguised"),
    ("sharpe_gap", "Sharpe gap"),
    ("ann_return_gap", "annual gap [95% CI]"),
    ("agreement", "agree"),
    ("decisions", "decisions"),
)


@dataclass
class Anonymized:
    """Both evaluations, the disguise between them, and the side-by-side rows."""

    spec: EvalSpec
    folder: Path
    original: Evaluation
    disguised: Evaluation
    disguise: Disguise
    rows: list[dict[str, Any]]
    differing: list[dict[str, str]]
    files: list[Path]


async def evaluate_anonymized(
    settings: Settings,
    spec: EvalSpec,
    *,
    seed: int = DEFAULT_SEED,
    out: Path | None = None,
    market: MarketData | None = None,
    desk_factory: DeskFactory | None = None,
    wrap_model: ModelWrap | None = None,
    on_start: Callable[[int], None] | None = None,
    on_decision: Callable[[DecisionRecord], None] | None = None,
    on_resume: Callable[[int], None] | None = None,
    cluster: RayCluster | None = None,
    workers: int | None = None,
    fresh: bool = False,
) -> Anonymized:
    """Evaluate ``spec``'s desk on the real market and on its disguise (from ``seed``),
    each made and resumed as :func:`evaluate` makes and resumes its decisions
    (``on_start`` hears the total of both, ``on_resume`` each half's recorded ones).

    The files: the folder is the plain evaluation's (``alphadesk eval`` of the same spec
    replays it, and the other way round), ``disguised-<seed>/`` in it the disguised one's,
    each with its table, decisions and recorded answers (a rerun replays both);
    ``anonymized.md``/``.csv``/``.json`` the side-by-side table, the JSON also the disguise
    and the decisions that differ.

    Raises:
        EvaluationError: The CSP desk (its puts are priced on modeled chains whose rate is
            the disguised year's, so its decisions could not be the same), or anything
            :func:`evaluate` refuses.
    """
    if spec.desk != "desk":
        raise EvaluationError(
            "--anonymize evaluates the trading desk only: a CSP decision prices puts with "
            "the risk-free rate of its year, which the disguise changes; use --desk desk"
        )
    folder = eval_folder(settings, spec, out)
    # Only a market the caller gave is handed on (to the workers too); else each process
    # builds its own from the settings, as for a plain evaluation.
    if market is None:
        from alphadesk.data import build_provider

        disguise = disguise_of(build_provider(settings), spec.symbols, seed=seed)
    else:
        disguise = disguise_of(market, spec.symbols, seed=seed)
    run = partial(
        evaluate,
        settings,
        spec,
        market=market,
        desk_factory=desk_factory,
        wrap_model=wrap_model,
        on_decision=on_decision,
        on_resume=on_resume,
        cluster=cluster,
        workers=workers,
        fresh=fresh,
    )
    started = (lambda n: on_start(2 * n)) if on_start is not None else None
    original = await run(out=folder, on_start=started)
    disguised = await run(out=folder / f"disguised-{seed}", disguise=disguise)
    rows = gap_rows(spec, original, disguised)
    differing = _differing(original.decisions, disguised.decisions)
    files = _write(folder, spec, disguise, rows, differing)
    return Anonymized(spec, folder, original, disguised, disguise, rows, differing, files)


def gap_rows(spec: EvalSpec, original: Evaluation, disguised: Evaluation) -> list[dict[str, Any]]:
    """Per symbol, then pooled: the desk's return and Sharpe on each market, the gap
    (original minus disguised), the annual-return gap's interval and the share of
    decisions that agree."""
    ours = {r["symbol"]: r for r in original.rows if r["strategy"] == DESK}
    theirs = {r["symbol"]: r for r in disguised.rows if r["strategy"] == DESK}
    pairs = _pairs(original.decisions, disguised.decisions)
    curves = {s.symbol: s for s in original.scored if s.strategy == DESK}
    twins = {s.symbol: s for s in disguised.scored if s.strategy == DESK}
    rows = []
    for symbol in [*spec.symbols, POOLED]:
        mine = [p for p in pairs if symbol in (POOLED, p[0].symbol)]
        agree = sum(a.decision == b.decision for a, b in mine)
        a, b = ours[symbol], theirs[symbol]
        rows.append(
            {
                "symbol": symbol,
                "return": a["cumulative_return"],
                "return_disguised": b["cumulative_return"],
                "return_gap": _gap(a["cumulative_return"], b["cumulative_return"]),
                "sharpe": a["sharpe"],
                "sharpe_disguised": b["sharpe"],
                "sharpe_gap": _gap(a["sharpe"], b["sharpe"]),
                **_gap_interval(curves[symbol], twins[symbol]),
                "agreement": round(agree / len(mine), 6) if mine else None,
                "decisions": len(mine),
            }
        )
    return rows


def _gap(first: float | None, second: float | None) -> float | None:
    return None if first is None or second is None else round(first - second, 6) + 0.0


def _gap_interval(original: Scored, disguised: Scored) -> dict[str, float | None]:
    """The annual return of ``original`` minus that of ``disguised`` and its interval, the
    two curves resampled on the same days (``None`` on fewer than 2 days)."""
    curves = pd.concat({"original": original.equity, "disguised": disguised.equity}, axis=1)
    daily = curves.dropna().pct_change().iloc[1:]
    keys = ("ann_return_gap", "ann_return_gap_low", "ann_return_gap_high")
    if len(daily) < 2:
        return dict.fromkeys(keys)
    found = bootstrap_intervals({n: daily[n].to_numpy() for n in daily}, "disguised")
    gap = found["original"].excess_annual_return
    ends = (None, None, None) if gap is None else (gap.estimate, gap.low, gap.high)
    return {
        k: None if v is None else round(float(v), 6) + 0.0 for k, v in zip(keys, ends, strict=True)
    }


def _pairs(
    original: Sequence[DecisionRecord], disguised: Sequence[DecisionRecord]
) -> list[tuple[DecisionRecord, DecisionRecord]]:
    """Each decision beside its disguised twin (the records are in real symbols and dates)."""
    twins = {(r.symbol, r.as_of): r for r in disguised}
    return [(r, twins[(r.symbol, r.as_of)]) for r in original if (r.symbol, r.as_of) in twins]


def _differing(
    original: Sequence[DecisionRecord], disguised: Sequence[DecisionRecord]
) -> list[dict[str, str]]:
    return [
        {
            "symbol": a.symbol,
            "as_of": a.as_of.isoformat(),
            "original": a.decision,
            "disguised": b.decision,
        }
        for a, b in _pairs(original, disguised)
        if a.decision != b.decision
    ]


def gap_cells(row: dict[str, Any]) -> list[str]:
    """One row formatted for reading, a cell per column of ``GAP_COLUMNS``."""
    cells = [row["symbol"]]
    for key in ("return", "return_disguised", "return_gap"):
        cells.append("-" if row[key] is None else f"{row[key]:+.2%}")
    for key in ("sharpe", "sharpe_disguised", "sharpe_gap"):
        cells.append("-" if row[key] is None else f"{row[key]:+.2f}")
    gap, low, high = (row[f"ann_return_gap{end}"] for end in ("", "_low", "_high"))
    ends = "" if low is None or high is None else f" [{low:+.2%}, {high:+.2%}]"
    cells.append("-" if gap is None else f"{gap:+.2%}{ends}")
    cells.append("-" if row["agreement"] is None else f"{row['agreement']:.0%}")
    cells.append(str(row["decisions"]))
    return cells


def _write(
    folder: Path,
    spec: EvalSpec,
    disguise: Disguise,
    rows: list[dict[str, Any]],
    differing: list[dict[str, str]],
) -> list[Path]:
    """The side-by-side table as Markdown, CSV and JSON (with the disguise): the same
    evaluation twice writes the same bytes."""
    headers = [header for _key, header in GAP_COLUMNS]
    lines = [
        f"# {spec.desk} ({spec.model}) on the real and the disguised market, {spec.start} to "
        f"{spec.end}, every {spec.every} sessions",
        "",
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
        *("| " + " | ".join(gap_cells(row)) + " |" for row in rows),
        "",
        "gap = original minus disguised; agree = share of decisions that are the same; "
        f"annual gap: the annual returns' difference, {METHOD['intervals'].split(';')[0]}.",
        "",
    ]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(rows[0]))  # every figure, bounds too
    writer.writeheader()
    writer.writerows(rows)
    described = {
        "seed": disguise.seed,
        "years": disguise.years,
        "symbols": {s: disguise.names[s] for s in spec.symbols},
        "price_factors": {s: disguise.factors[s] for s in spec.symbols},
    }
    payload = {"rows": rows, "disguise": described, "differing": differing}
    contents = {
        "anonymized.md": "\n".join(lines),
        "anonymized.csv": text.getvalue(),
        "anonymized.json": json.dumps(payload, indent=2) + "\n",
    }
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in ANONYMIZED_FILES:
        path = folder / name
        path.write_text(contents[name], encoding="utf-8")
        paths.append(path)
    return paths
