"""The API's JSON as a person reads it in the UI: human headers, percentages and money
formatted, a dash for what is missing, long texts kept out of the tables. Plain pandas,
so every piece is tested without a browser."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

__all__ = [
    "MISSING",
    "day",
    "eval_table",
    "inert",
    "mark_label",
    "money",
    "orders_table",
    "positions_table",
    "report_parts",
    "runs_table",
    "tool_calls_table",
]

MISSING = "–"
_DESK_ROWS = ("desk", "csp_desk")  # an evaluation's rows of the desk; the others: baselines
_COUNTS = {"buy": "B", "hold": "H", "sell": "S", "select": "sel", "reject": "rej",
           "filtered": "filt", "failed": "fail", "puts": "puts", "assigned": "ITM",
           "skipped": "skip"}  # fmt: skip
_LABEL_CHARS = 32  # a mark basis longer than this goes to the notes under the table
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
# The "!" that makes "[...]" an image, inline ("![a](url)") or by reference ("![a][ref]").
_IMAGE_MARK = re.compile(r"!(?=\[)")


def inert(text: str) -> str:
    """``text`` (stored, or written by a model, a tool or a user) as Markdown that loads
    nothing by itself. An image's "!" becomes an entity, which Markdown shows as the
    character and never reads as syntax: ``![chart](http://elsewhere/x.png)`` shows as
    ``!`` and a link, and no browser that draws it calls that address unless clicked.
    Raw HTML (``<img src=...>``) Streamlit draws as text already. Every text the UI draws
    as Markdown (``st.markdown``, alerts, captions, labels) goes through here."""
    return _IMAGE_MARK.sub("&#33;", text)


def money(value: float | None, digits: int = 2) -> str:
    """``-$159.86``, not ``$-159.86``."""
    if value is None:
        return MISSING
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value):,.{digits}f}"


def _number(value: float | None, digits: int = 2) -> str:
    """At most ``digits`` decimals, no trailing zeros (``10``, ``2.5``, ``0.07``)."""
    if value is None:
        return MISSING
    text = f"{value:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def day(stamp: str | None) -> str:
    """The date of an ISO timestamp (``2021-06-30T20:00:00Z`` -> ``2021-06-30``)."""
    return stamp[:10] if stamp else MISSING


def _percent(fraction: float | None) -> str:
    return MISSING if fraction is None else f"{fraction:.2%}"


def _decisions(row: dict[str, Any]) -> str:
    parts = [f"{short} {row[key]}" for key, short in _COUNTS.items() if row.get(key) is not None]
    return " / ".join(parts) or MISSING


def eval_table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """An evaluation's table with the columns and formats of its Markdown file
    (``table.md``): percentages, two decimals, a dash for what a baseline has not."""
    shown = []
    for row in rows:
        ours = row["strategy"] in _DESK_ROWS
        shown.append(
            {
                "strategy": row["strategy"],
                "symbol": row["symbol"],
                "cum. return": _percent(row.get("cumulative_return")),
                "ann. return": _percent(row.get("annualized_return")),
                "Sharpe": _fixed(row.get("sharpe")),
                "max DD": _percent(row.get("max_drawdown")),
                "win rate": _percent(row.get("win_rate")),
                "trades": _fixed(row.get("trades"), 0),
                "turnover/yr": _fixed(row.get("turnover")),
                "costs": _fixed(row.get("costs")),
                "decisions": _decisions(row),
                "model calls": _fixed(row.get("model_calls"), 0) if ours else MISSING,
                "model $": _fixed(row.get("model_cost_usd"), 4) if ours else MISSING,
            }
        )
    return pd.DataFrame(shown)


def _fixed(value: float | None, digits: int = 2) -> str:
    return MISSING if value is None else f"{value:,.{digits}f}"


def runs_table(runs: Sequence[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "run": r["id"],
                "kind": r["kind"],
                "title": r["title"],
                "status": r["status"],
                "as of": day(r.get("as_of")),
                "model": r.get("model") or MISSING,
                "model calls": r["requests"],
                "cost": money(r.get("cost_usd"), 4),
            }
            for r in runs
        ]
    )


def mark_label(position: dict[str, Any]) -> tuple[str, str | None]:
    """A mark basis short enough for a table cell, and the detail it leaves out (if any)."""
    basis = str(position.get("mark_basis") or "")
    if position.get("mark") is None or basis.startswith("no price"):
        detail = basis.partition(":")[2].strip() or basis
        return "no price at this date", detail or None
    if len(basis) > _LABEL_CHARS:
        return basis[: _LABEL_CHARS - 1].rstrip() + "…", basis
    return basis, None


def positions_table(positions: Sequence[dict[str, Any]]) -> tuple[pd.DataFrame, list[str]]:
    """The positions, and a note per position whose mark needs more words than a cell."""
    rows, notes = [], []
    for p in positions:
        label, detail = mark_label(p)
        if detail:
            notes.append(f"{p['position']}: {detail}")
        rows.append(
            {
                "position": p["position"],
                "quantity": _number(p["quantity"], 4),
                "average cost": money(p["average_cost"]),
                "mark": money(p.get("mark")),
                "mark basis": label,
                "market value": money(p["market_value"]),
                "unrealised P&L": money(p["unrealized_pnl"]),
                "realised P&L": money(p["realized_pnl"]),
            }
        )
    return pd.DataFrame(rows), notes


def _contract(contract: dict[str, Any]) -> str:
    if not contract.get("right"):
        return str(contract["symbol"])
    return (
        f"{contract['symbol']} {contract['expiration']} "
        f"{contract['strike']:g}{contract['right'][0].upper()}"
    )


def orders_table(orders: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The orders by trade date (the market instant of the fill), newest first."""
    rows = [
        {
            "trade date": day(o.get("as_of")),
            "side": o["side"],
            "quantity": _number(o["quantity"], 4),
            "contract": _contract(o["contract"]),
            "price": money(o["price"]),
            "source": o.get("source") or MISSING,
            "order": o["id"],
        }
        for o in orders
    ]
    return pd.DataFrame(rows[::-1])


def tool_calls_table(calls: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """An assistant run's tool calls: which, with what, how long, and how it ended."""
    return pd.DataFrame(
        [
            {
                "tool": c["tool"],
                "arguments": c.get("arguments") or "",
                "seconds": _number(c.get("seconds")),
                "result": "ok" if c.get("ok") else f"failed: {c.get('error') or 'no reason'}",
            }
            for c in calls
        ]
    )


def report_parts(markdown: str) -> list[str]:
    """A report split where it shows an image: the image's path is one on the API's machine
    that no browser can load, so the UI draws the run's chart there instead."""
    return _IMAGE.split(markdown)
