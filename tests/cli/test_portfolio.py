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
from tests.support.old_rows import write_account, write_order

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


def test_impossible_orders_and_amounts_are_refused_with_the_reason(
    cli: CliRunner, tmp_path: Path
) -> None:
    infinite = cli.invoke(app, ["portfolio", "open", "x", "--cash", "inf"])
    assert infinite.exit_code == 1, infinite.output
    assert "starting cash must be an amount from $0 to $1,000,000,000,000" in infinite.output
    assert cli.invoke(app, ["portfolio", "open", "small", "--cash", "1000"]).exit_code == 0
    put = ["--put", "--strike", "5", "--expiration"]
    refusals = [
        (["buy", "KO", "inf"], "quantity: Input should be a finite number"),
        (["buy", "KO", "1e308", "--price", "1e-308", "--force"],
         "quantity: Input should be less than or equal to 1000000000"),
        (["buy", "KO", "1", "--price", "inf", "--force"], "price: Input should be a finite"),
        (["sell", "KO", "5", *put, "2021-06-18", "--price", "4.90"],
         "KO 2021-06-18 5P expired on 2021-06-18, before the trade date 2021-06-30"),
        (["buy", "KO", "1", *put, "2021-07-17", "--price", "0.05", "--force"],
         "2021-07-17 is not an XNYS trading day"),
        (["buy", "KO", "1", *put, "1990-01-01", "--price", "0.05", "--force"],
         "1990-01-01 is not an XNYS trading day"),
    ]  # fmt: skip
    for args, words in refusals:
        result = cli.invoke(app, ["portfolio", *args, "--date", "2021-06-30", "--account", "small"])
        assert result.exit_code == 1 and words in result.output, (args, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)
    book = PaperPortfolio(tmp_path / "alphadesk.sqlite")
    assert book.orders("small") == [] and "x" not in [a.name for a in book.accounts()]


def test_an_account_with_rows_an_older_version_accepted_still_shows(
    cli: CliRunner, tmp_path: Path
) -> None:
    path = tmp_path / "alphadesk.sqlite"
    write_account(path, "old", 1_000)
    saturday = {"contract": {"symbol": "KO", "right": "put", "strike": 60,
                             "expiration": "2021-07-17"},
                "side": "buy", "quantity": 1, "price": 5.5}  # fmt: skip
    write_order(path, "old", "2021-06-30", saturday)
    expired = write_order(path, "old", "2021-06-30", {
        "contract": {"symbol": "KO", "right": "put", "strike": 5, "expiration": "2021-06-18"},
        "side": "sell", "quantity": 5, "price": 4.9})  # fmt: skip
    shown = cli.invoke(app, ["portfolio", "--account", "old", "--as-of", "2021-07-30", "--json"])
    assert shown.exit_code == 0, shown.output
    report = json.loads(shown.stdout)
    (held,) = report["positions"]
    assert "settled at the close of 2021-07-16" in held["mark_basis"]
    assert report["cash"] == 450 and report["account_value"] == pytest.approx(
        450 + 100 * (60 - _close("KO", "2021-07-16")), abs=0.01
    )
    assert any(f"order {expired} left out" in note for note in report["missing"])
    listed = cli.invoke(app, ["portfolio", "orders", "--account", "old"])
    assert listed.exit_code == 0 and f"order {expired} left out" in listed.output

    write_account(path, "broken", float("inf"))
    broken = cli.invoke(app, ["portfolio", "--account", "broken"])
    assert broken.exit_code == 1 and "stored starting cash of inf" in broken.output
    assert "alphadesk portfolio reset --account broken" in broken.output


def test_a_dividend_is_credited_and_listed(cli: CliRunner) -> None:
    # JPM paid $1.40 a share ex 2025-04-04 (bundled Polygon record): 100 shares, $140.
    bought = cli.invoke(app, ["portfolio", "buy", "JPM", "100", "--date", "2025-04-01"])
    assert bought.exit_code == 0, bought.output
    shown = cli.invoke(app, ["portfolio", "--as-of", "2025-04-04"]).output
    assert "dividends credited" in shown and "$140.00" in shown
    report = json.loads(cli.invoke(app, ["portfolio", "--as-of", "2025-04-04", "--json"]).output)
    assert report["cash"] == pytest.approx(100_000 - 100 * _close("JPM", "2025-04-01") + 140)
    listed = cli.invoke(app, ["portfolio", "orders"]).output
    assert "dividends credited" in listed and "2025-04-04" in listed and "2025-07-03" in listed
