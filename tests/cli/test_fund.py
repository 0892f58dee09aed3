"""``alphadesk fund`` on the bundled data, offline: a report whose orders ``portfolio follow``
places (once) in the paper account, which then holds what the report said; bad input is a
clear error with exit code 2 and no run recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app
from alphadesk.config import Settings
from alphadesk.portfolio import PaperPortfolio
from alphadesk.store import RunStore


def test_a_fund_run_is_followed_into_the_paper_account(cli: CliRunner, tmp_path: Path) -> None:
    shown = cli.invoke(app, ["fund", "AAPL", "JPM", "PG", "--as-of", "2025-05-15"])
    assert shown.exit_code == 0, shown.output
    assert "account paper had no order by 2025-05-15: the book is $100,000.00 of cash" in (
        shown.output
    )
    for section in ("The desks", "Weights", "Orders", "Cash after", "What each analyst missed"):
        assert section in shown.output
    done = cli.invoke(app, ["fund", "AAPL", "JPM", "PG", "--as-of", "2025-05-15", "--json"])
    result = json.loads(done.stdout)
    assert result["orders"], "the rules buy something of an empty book on this day"
    followed = cli.invoke(app, ["portfolio", "follow", result["run_id"]])
    assert followed.exit_code == 0, followed.output
    assert followed.output.count(f"(fund run {result['run_id']})") == len(result["orders"])
    book = PaperPortfolio(Settings(data_dir=tmp_path).store_path)
    cash, positions = book.positions()
    assert cash == pytest.approx(result["cash_after"])
    held = {p.contract.symbol: p.quantity for p in positions}
    assert held == {o["contract"]["symbol"]: o["quantity"] for o in result["orders"]}
    again = cli.invoke(app, ["portfolio", "follow", result["run_id"]])
    assert again.exit_code == 1 and "followed in account paper already" in again.output
    quantity = cli.invoke(app, ["portfolio", "follow", result["run_id"], "--quantity", "5"])
    assert quantity.exit_code == 1 and "leave out --quantity" in quantity.output
    # The next run reads the book the orders left.
    after = cli.invoke(app, ["fund", "AAPL", "JPM", "PG", "--as-of", "2025-05-16", "--json"])
    book_after = json.loads(after.stdout)["book"]
    assert {h["symbol"]: h["shares"] for h in book_after["holdings"]} == held
    assert book_after["cash"] == pytest.approx(cash)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["ZZZZQ", "--as-of", "2025-05-15"], "ZZZZQ: no provider had daily bars"),
        (["AAPL", "--as-of", "1995-05-15"], "its first bar closed"),
        (["--universe", "nasdaq100", "--as-of", "1990-01-02"], "no NASDAQ-100 member"),
        (["--universe", "ftse", "--as-of", "2025-05-15"], "unknown index 'ftse'"),
        (["--as-of", "2025-05-15"], "no symbol to decide on"),
        (["AAPL", "--universe", "dow30"], "not both"),
        (["AAPL", "--account", "nobody", "--as-of", "2025-05-15"], "no paper account"),
    ],
)
def test_bad_input_is_a_clear_error_and_records_nothing(
    cli: CliRunner, tmp_path: Path, args: list[str], said: str
) -> None:
    done = cli.invoke(app, ["fund", *args])
    assert done.exit_code == 2, done.output
    assert said in done.output.replace("\n", " ")
    assert RunStore(Settings(data_dir=tmp_path).store_path).recent() == []
