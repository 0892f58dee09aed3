"""Messages that say what is true: a future date is called one (with the last close), a date
before the calendar asks for a later one, and a missing kind of data names its provider."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app
from alphadesk.data.calendar import close_on_or_before, local_date


def _last_close() -> str:
    now = datetime.now(UTC)
    last = close_on_or_before(local_date(now))
    if last > now:
        last = close_on_or_before(local_date(last) - timedelta(days=1))
    return str(local_date(last))


@pytest.mark.parametrize(
    "args",
    [
        ["csp", "NVDA", "--as-of", "2030-01-02"],
        ["desk", "AAPL", "--as-of", "2027-06-01"],
        ["algo", "AAPL", "--goal", "Sharpe above 1", "--to", "2030-01-02"],
        ["backtest", "sma_cross", "AAPL", "--to", "2030-01-02"],
    ],
    ids=lambda a: a[0],
)
def test_a_future_date_is_called_one_and_the_last_close_named(
    tmp_path: Path, args: list[str]
) -> None:
    done = CliRunner().invoke(app, args, env={"ALPHADESK_DATA_DIR": str(tmp_path)})
    assert done.exit_code == 2, done.output
    option, day = args[-2:]
    last = _last_close()
    assert f"{option} {day} is in the future: the last close is {last}" in done.stderr
    assert f"pick {last} or an earlier date" in done.stderr
    assert "on or before" not in done.stderr and "later" not in done.stderr


def test_a_date_before_the_calendar_asks_for_a_later_one(tmp_path: Path) -> None:
    args = ["backtest", "sma_cross", "AAPL", "--to", "1800-01-02"]
    done = CliRunner().invoke(app, args, env={"ALPHADESK_DATA_DIR": str(tmp_path)})
    assert done.exit_code == 2, done.output
    assert "no trading session on or before 1800-01-02" in done.stderr
    assert "pick a later --to" in done.stderr


def test_missing_filings_name_the_provider_that_serves_them() -> None:
    from alphadesk.data.base import DataKind, Provider
    from alphadesk.data.chain import ProviderChain
    from alphadesk.data.errors import NotSupported

    class BarsOnly(Provider):  # a chain where nothing serves filings, news or fundamentals
        name = "bars-only"
        kinds = frozenset({DataKind.DAILY_BARS})

    chain = ProviderChain([BarsOnly()])
    as_of = close_on_or_before(datetime(2012, 6, 1).date())
    with pytest.raises(NotSupported, match="add sec to") as filings:
        chain.filings("AAPL", as_of)
    assert "yahoo" not in str(filings.value)
    with pytest.raises(NotSupported, match="add sec to"):
        chain.fundamentals("AAPL", as_of)
    with pytest.raises(NotSupported, match="add yahoo to"):
        chain.news("AAPL", as_of)
