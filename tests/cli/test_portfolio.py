"""``alphadesk portfolio`` keeps its promises: a followed CSP run cannot sell puts the cash
does not secure, orders carry their trade date, prices are checked against that day,
accounts are opened explicitly, and money reads "-$159.86"."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.money import usd
from alphadesk.portfolio import PaperPortfolio
from alphadesk.store import RunStore
from tests.cli.test_ask import _csp_run

pytestmark = pytest.mark.slow


def _close(symbol: str, day: str) -> float:
    """The day's close as the provider the CLI uses has it."""
    bars = build_provider(Settings()).daily_bars(symbol, session_close(date.fromisoformat(day)))
    return float(bars.frame.iloc[-1][bars.price_field()])


def test_following_a_csp_run_cannot_sell_unsecured_puts(cli: CliRunner, tmp_path: Path) -> None:
    run_id = _csp_run(RunStore(tmp_path / "alphadesk.sqlite"))  # NVDA 130 puts at 2.03
    refused = cli.invoke(app, ["portfolio", "follow", run_id, "--quantity", "500"])
    assert refused.exit_code == 1, refused.output
    assert "not enough free cash" in refused.output and "$100,000.00 free" in refused.output
    assert "at most 7 contracts" in refused.output  # 7 x (13,000 - 203) <= 100,000
    assert PaperPortfolio(tmp_path / "alphadesk.sqlite").orders() == []
    placed = cli.invoke(app, ["portfolio", "follow", run_id, "--quantity", "7"])
    assert placed.exit_code == 0 and "on 2024-11-29" in placed.output, placed.output
    shown = json.loads(cli.invoke(app, ["portfolio", "--as-of", "2024-11-29", "--json"]).output)
    assert shown["collateral"] == pytest.approx(7 * 130 * 100)


def test_orders_are_dated_and_the_valuation_is_point_in_time(cli: CliRunner) -> None:
    assert cli.invoke(app, ["portfolio", "buy", "KO", "100", "--date", "2022-06-30"]).exit_code == 0
    assert cli.invoke(app, ["portfolio", "sell", "KO", "40", "--date", "2022-09-30"]).exit_code == 0
    before = json.loads(cli.invoke(app, ["portfolio", "--as-of", "2021-06-30", "--json"]).output)
    assert before["positions"] == [] and before["orders"] == 0
    old = cli.invoke(app, ["portfolio", "sell", "KO", "10", "--date", "2015-06-30"])
    assert old.exit_code == 1 and "the account held 0 then" in old.output, old.output

    listed = cli.invoke(app, ["portfolio", "orders"]).output
    header = next(line for line in listed.splitlines() if "traded" in line)
    assert header.split()[0] == "traded" and header.index("traded") < header.index("recorded")
    assert "2022-06-30" in listed and "2022-09-30" in listed

    shown = cli.invoke(app, ["portfolio", "--as-of", "2022-12-28"]).output
    report = json.loads(cli.invoke(app, ["portfolio", "--as-of", "2022-12-28", "--json"]).output)
    assert report["total_pnl"] < 0  # KO bought high, partly sold lower
    assert f"P&L {usd(report['total_pnl'])}" in shown and "$-" not in shown


def test_prices_are_checked_against_the_trade_date(cli: CliRunner) -> None:
    zero = cli.invoke(app, ["portfolio", "buy", "KO", "0"])
    assert zero.exit_code == 1 and "the quantity must be above 0" in zero.output
    assert "pydantic" not in zero.output
    free = cli.invoke(app, ["portfolio", "buy", "KO", "1", "--price", "0", "--date", "2021-06-30"])
    assert free.exit_code == 1 and "a price must be above 0" in free.output, free.output
    assert "pydantic" not in free.output

    high = round(_close("KO", "2021-06-30") * 1.2, 2)
    off = ["portfolio", "buy", "KO", "1", "--price", str(high), "--date", "2021-06-30"]
    refused = cli.invoke(app, off)
    assert refused.exit_code == 1 and "above KO's 2021-06-30" in refused.output
    assert "--force" in refused.output
    unknown = ["portfolio", "buy", "ZZZQ", "1", "--price", "5", "--date", "2021-06-30"]
    assert cli.invoke(app, unknown).exit_code == 1
    forced = cli.invoke(app, [*unknown, "--force"])
    assert forced.exit_code == 0 and "[FORCED]" in forced.output, forced.output
    listed = cli.invoke(app, ["portfolio", "orders"]).output
    row = next(line for line in listed.splitlines() if "ZZZQ" in line)
    assert "FORCED" in row
    stored = [
        json.loads(line)
        for line in cli.invoke(app, ["portfolio", "orders", "--json"]).output.splitlines()
    ]
    assert stored[0]["forced"] is True and stored[0]["price_check"].startswith("forced: no data")


def test_accounts_are_opened_explicitly(cli: CliRunner) -> None:
    typo = cli.invoke(
        app, ["portfolio", "buy", "KO", "1", "--date", "2021-06-30", "--account", "iar"]
    )
    assert typo.exit_code == 1 and "no paper account named 'iar'" in typo.output
    assert "alphadesk portfolio open iar" in typo.output
    assert cli.invoke(app, ["portfolio", "--account", "iar"]).exit_code == 1
    opened = cli.invoke(app, ["portfolio", "open", "ira", "--cash", "5000"])
    assert opened.exit_code == 0 and "$5,000.00" in opened.output
    again = cli.invoke(app, ["portfolio", "open", "ira"])
    assert again.exit_code == 1 and "already open" in again.output
    bad = cli.invoke(app, ["portfolio", "open", "a b"])
    assert bad.exit_code == 1 and "not an account name" in bad.output
    listed = cli.invoke(app, ["portfolio", "accounts"]).output
    assert "ira" in listed and "$5,000.00" in listed
    shown = json.loads(cli.invoke(app, ["portfolio", "--account", "ira", "--json"]).output)
    assert shown["cash"] == 5_000
