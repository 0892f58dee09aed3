"""Rows of the paper account as an older alphadesk wrote them, before amounts and option
expirations were checked: written straight into SQLite, as that version left them."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alphadesk.portfolio import PaperPortfolio

__all__ = ["write_account", "write_order"]


def write_account(path: Path, name: str, cash: float) -> None:
    """An account row with ``cash`` as its starting cash, whatever it is."""
    PaperPortfolio(path)  # the tables
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO portfolio_accounts (name, starting_cash, created_at) VALUES (?, ?, ?)",
            (name, cash, datetime.now(UTC).isoformat()),
        )


def write_order(path: Path, account: str, day: str, body: dict[str, Any] | str) -> int:
    """An order row traded at ``day``'s close (20:00 UTC in summer); ``body`` as the order's
    JSON, or raw text. Returns its id."""
    traded = f"{day}T20:00:00+00:00"
    text = body if isinstance(body, str) else json.dumps(body | {"as_of": traded})
    with sqlite3.connect(path) as db:
        cursor = db.execute(
            "INSERT INTO portfolio_orders (account, placed_at, as_of, trade_at, forced, body)"
            " VALUES (?, ?, ?, ?, 0, ?)",
            (account, datetime.now(UTC).isoformat(), traded, traded, text),
        )
        return int(cursor.lastrowid or 0)
