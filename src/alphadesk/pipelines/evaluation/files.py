"""The evaluation's files: the table as Markdown, CSV and JSON, the decisions, two charts,
and a manifest. Everything but the manifest is a pure function of the spec and the data,
so the same evaluation twice writes the same bytes; run ids, times and live model calls
go in ``manifest.json`` alone."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .models import DecisionRecord, EvalSpec
from .scoring import POOLED, Scored
from .statistics import METHOD

__all__ = [
    "COLUMNS",
    "DESK_ROWS",
    "INTERVAL_COLUMNS",
    "MIX_COLUMNS",
    "TABLE_FILES",
    "cells",
    "decision_counts",
    "has_mix",
    "interval_cells",
    "markdown_table",
    "mix_cells",
    "statistics_markdown",
    "write_files",
]

TABLE_FILES = ("table.md", "table.csv", "table.json", "decisions.csv")
_COUNTS = {
    "buy": "B",
    "hold": "H",
    "sell": "S",
    "select": "sel",
    "reject": "rej",
    "filtered": "filt",
    "failed": "fail",
    "puts": "puts",
    "assigned": "ITM",
    "skipped": "skip",
}


def _pct(value: Any) -> str:
    return "-" if value is None else f"{value:.2%}"


def _num(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def decision_counts(row: dict[str, Any]) -> str:
    """The decisions (and puts) of a row in a few characters, e.g. ``B 3 / H 5 / S 2``."""
    parts = [f"{short} {row[key]}" for key, short in _COUNTS.items() if row.get(key) is not None]
    return " / ".join(parts) or "-"


# The table's columns, as read by a person (Markdown file and terminal alike).
COLUMNS = (
    "strategy",
    "symbol",
    "cum. return",
    "ann. return",
    "Sharpe",
    "max DD",
    "win rate",
    "trades",
    "turnover/yr",
    "costs",
    "decisions",
    "model calls",
    "model $",
)
DESK_ROWS = ("desk", "csp_desk")  # the rows of the desk evaluated (the others are baselines)


def cells(row: dict[str, Any]) -> list[str]:
    """One row formatted for reading, a cell per column of ``COLUMNS``."""
    ours = row["strategy"] in DESK_ROWS
    return [
        row["strategy"],
        row["symbol"],
        _pct(row["cumulative_return"]),
        _pct(row["annualized_return"]),
        _num(row["sharpe"]),
        _pct(row["max_drawdown"]),
        _pct(row["win_rate"]),
        str(row["trades"]),
        _num(row["turnover"]),
        _num(row["costs"]),
        decision_counts(row),
        str(row["model_calls"]) if ours else "-",
        _num(row["model_cost_usd"], 4) if ours else "-",
    ]


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """The table as GitHub Markdown (percentages and money formatted for reading)."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for row in rows:
        shown = cells(row)
        if row["symbol"] == POOLED:
            shown[1] = f"**{shown[1]}**"
        lines.append("| " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def _interval(row: dict[str, Any], key: str, show: Any, estimate: str | None = None) -> str:
    """``value [low, high]``, e.g. ``12.10% [-3.20%, 27.00%]``."""
    value = row.get(estimate or key)
    low, high = row.get(f"{key}_low"), row.get(f"{key}_high")
    if value is None:
        return "-"
    if low is None or high is None:
        return show(value)
    return f"{show(value)} [{show(low)}, {show(high)}]"


INTERVAL_COLUMNS = (
    "strategy",
    "symbol",
    "ann. return [95% CI]",
    "Sharpe [95% CI]",
    "ann. return − buy & hold [95% CI]",
    "Sharpe − buy & hold [95% CI]",
)
MIX_COLUMNS = ("symbol", "desk B / H / S", "trend rule B / H / S", "χ² p", "flag")


def interval_cells(row: dict[str, Any]) -> list[str]:
    """One row of the intervals table, a cell per column of ``INTERVAL_COLUMNS``."""
    return [
        row["strategy"],
        row["symbol"],
        _interval(row, "ann_return", _pct, "annualized_return"),
        _interval(row, "sharpe", _num, "sharpe"),
        _interval(row, "excess_ann_return", _pct),
        _interval(row, "excess_sharpe", _num),
    ]


def mix_cells(row: dict[str, Any]) -> list[str]:
    """One desk row's decision mix beside the trend rule's, a cell per ``MIX_COLUMNS``."""

    def shares(prefix: str) -> str:
        return " / ".join(f"{row[f'{prefix}{a}_share']:.0%}" for a in ("buy", "hold", "sell"))

    p = row["mix_p_value"]
    dominant = row["dominant"]
    flag = f"{dominant} {row[f'{dominant.lower()}_share']:.0%}: dominates" if dominant else ""
    shown_p = "-" if p is None else "< 0.001" if p < 0.001 else f"{p:.3f}"
    return [row["symbol"], shares(""), shares("trend_"), shown_p, flag]


def has_mix(row: dict[str, Any]) -> bool:
    return row.get("buy_share") is not None


def _markdown(columns: Sequence[str], lines: Sequence[list[str]]) -> str:
    head = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    return "\n".join([*head, *("| " + " | ".join(cells) + " |" for cells in lines)]) + "\n"


def statistics_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The intervals of every row and the desk's decision mix, as Markdown sections."""
    text = f"\n## How sure: {METHOD['intervals']}\n\n"
    text += _markdown(INTERVAL_COLUMNS, [interval_cells(r) for r in rows])
    mixes = [r for r in rows if has_mix(r)]
    if mixes:
        text += f"\n## Decision mix beside a trend rule: {METHOD['trend_rule']}\n\n"
        text += _markdown(MIX_COLUMNS, [mix_cells(r) for r in mixes])
    return text


def _csv(rows: Sequence[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _decisions_csv(records: Sequence[DecisionRecord]) -> str:
    rows = [
        {
            "as_of": r.as_of.isoformat(),
            "symbol": r.symbol,
            "decision": r.decision,
            "position": r.position,
            "expiration": r.put.expiration.isoformat() if r.put else None,
            "strike": r.put.strike if r.put else None,
            "premium": r.put.premium if r.put else None,
            "contracts": r.put.contracts if r.put else None,
            "model_calls": r.model_calls,
            "reason": r.reason,
        }
        for r in sorted(records, key=lambda r: (r.as_of, r.symbol))
    ]
    return _csv(rows) if rows else ""


def write_files(
    folder: Path,
    spec: EvalSpec,
    rows: Sequence[dict[str, Any]],
    records: Sequence[DecisionRecord],
    scored: Sequence[Scored],
    manifest: dict[str, Any],
) -> list[Path]:
    """Write every file of the evaluation into ``folder``; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = {
        "table.md": _title(spec) + "\n" + markdown_table(rows) + statistics_markdown(rows),
        "table.csv": _csv(rows),
        "table.json": json.dumps(
            {
                "spec": spec.model_dump(mode="json", exclude={"concurrency"}),
                "method": METHOD,
                "rows": list(rows),
            },
            indent=2,
        )
        + "\n",
        "decisions.csv": _decisions_csv(records),
        "manifest.json": json.dumps(manifest, indent=2, default=str) + "\n",
    }
    paths = []
    for name, text in texts.items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    pooled = [s for s in scored if s.symbol == POOLED]
    for name, draw in (("equity.png", _equity_png), ("drawdown.png", _drawdown_png)):
        path = folder / name
        path.write_bytes(draw(pooled, spec))
        paths.append(path)
    return paths


def _title(spec: EvalSpec) -> str:
    return (
        f"# {spec.desk} ({spec.model}) on {', '.join(spec.symbols)}, {spec.start} to "
        f"{spec.end}, every {spec.every} sessions\n"
    )


def _figure(draw: Any, title: str) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.0, 4.0), dpi=90)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    draw(ax)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _naive(series: pd.Series) -> pd.Series:
    index = series.index
    if isinstance(index, pd.DatetimeIndex) and index.tz is not None:
        return series.set_axis(index.tz_localize(None))
    return series


def _equity_png(pooled: Sequence[Scored], spec: EvalSpec) -> bytes:
    def draw(ax: Any) -> None:
        for s in pooled:
            curve = _naive(s.equity)
            wide = s.strategy in ("desk", "csp_desk")
            ax.plot(curve.index, curve.to_numpy(), lw=1.8 if wide else 0.9, label=s.strategy)
        ax.set_ylabel("pooled value", fontsize=8)

    return _figure(draw, f"{spec.desk} vs baselines, pooled equity ({len(spec.symbols)} symbols)")


def _drawdown_png(pooled: Sequence[Scored], spec: EvalSpec) -> bytes:
    def draw(ax: Any) -> None:
        for s in pooled:
            curve = _naive(s.equity)
            drawdown = (curve / curve.cummax() - 1.0) * 100
            wide = s.strategy in ("desk", "csp_desk")
            ax.plot(drawdown.index, drawdown.to_numpy(), lw=1.8 if wide else 0.9, label=s.strategy)
        ax.set_ylabel("drawdown %", fontsize=8)

    return _figure(draw, f"{spec.desk} vs baselines, pooled drawdown")


CHARTS = ("equity.png", "drawdown.png")


def saved_evaluations(root: Path) -> list[dict[str, Any]]:
    """The evaluations saved under ``root`` (``data_dir/evals``), newest first: each one's
    folder name and spec, as its ``table.json`` holds them."""
    found = []
    for table in root.glob("*/table.json"):
        try:
            spec = json.loads(table.read_text(encoding="utf-8"))["spec"]
        except (OSError, ValueError, KeyError):
            continue  # a folder being written, or not an evaluation's
        found.append((table.stat().st_mtime, {"name": table.parent.name, "spec": spec}))
    return [entry for _, entry in sorted(found, key=lambda f: f[0], reverse=True)]
