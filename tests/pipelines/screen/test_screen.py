"""Screens over many dates and over processes: the same outcomes as one process, recorded
as a run with its table of candidates."""

from __future__ import annotations

import asyncio
import json
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from alphadesk.cli.app import app
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import sessions_between
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.pipelines.screen.models import ScreenHistory, ScreenRequest
from alphadesk.pipelines.screen.pipeline import ScreenPipeline, rebalancing_dates, run_screens
from alphadesk.store import RunStore
from tests.pipelines.conftest import close_of

SYMBOLS = ["AAPL", "AMZN", "IBM", "GOOG", "^GSPC"]


def test_rebalancing_dates_take_every_nth_session() -> None:
    sessions = sessions_between(date(2012, 6, 1), date(2012, 6, 29))
    dates = rebalancing_dates(date(2012, 6, 1), date(2012, 6, 29), 5)
    assert [d.date() for d in dates] == sessions[::5]
    assert dates[0] == close_of("2012-06-01")
    assert len(rebalancing_dates(date(2012, 6, 1), date(2012, 6, 29), 1)) == len(sessions)
    with pytest.raises(ValueError, match="no trading session"):
        rebalancing_dates(date(2012, 6, 30), date(2012, 7, 1), 5)  # a weekend
    with pytest.raises(ValueError, match="at least 1"):
        rebalancing_dates(date(2012, 6, 1), date(2012, 6, 29), 0)


def test_a_screen_date_without_a_zone_is_refused_before_anything_runs() -> None:
    with pytest.raises(ValidationError, match="timezone"):
        ScreenRequest(symbols=SYMBOLS, dates=[datetime(2012, 6, 29, 16)])


def _table(history: ScreenHistory) -> pd.DataFrame:
    csv, parquet = history.table
    from_csv = pd.read_csv(csv)
    from_parquet = pd.read_parquet(parquet)
    pd.testing.assert_frame_equal(
        from_csv.drop(columns="run_id"),
        from_parquet.drop(columns="run_id"),
        check_dtype=False,
    )
    return from_parquet


def _decided(history: ScreenHistory) -> list[tuple[str, str, str, object]]:
    table = _table(history)
    return list(
        zip(table.as_of, table.symbol, table.decision, table.strike.fillna(-1), strict=True)
    )


@pytest.mark.slow
async def test_a_screen_in_processes_decides_as_one_process_does(tmp_path: Path) -> None:
    request = ScreenRequest(
        symbols=SYMBOLS, dates=rebalancing_dates(date(2012, 6, 1), date(2012, 6, 28), 10)
    )
    seen: list[tuple[str, str]] = []
    alone = await run_screens(Settings(data_dir=tmp_path / "one"), request, workers=1)
    spread = await run_screens(
        Settings(data_dir=tmp_path / "two"),
        request,
        workers=2,
        on_outcome=lambda o: seen.append((o[1].symbol, o[0].date().isoformat())),
    )
    assert len(request.dates) == 2 and alone.outcomes == spread.outcomes == 10
    assert sorted(seen) == sorted((s, d.date().isoformat()) for d in request.dates for s in SYMBOLS)
    assert _decided(alone) == _decided(spread)
    decisions = set(_table(spread).decision)
    assert "filtered" in decisions and decisions & {"select", "reject"}

    # The screen is a run of its own, with its table; each desk run is recorded too.
    store = RunStore(Settings(data_dir=tmp_path / "two").store_path)
    run = store.get(spread.run_id)
    assert run.kind == "screen" and run.status == "completed"
    assert run.result is not None and run.result["counts"]["symbol_dates"] == 10
    assert {a.name for a in store.artifacts(spread.run_id)} == {
        "report.md",
        "result.json",
        "candidates.csv",
        "candidates.parquet",
    }
    desk_runs = {r.id for r in store.recent(kind="csp", limit=50)}
    assert set(_table(spread).run_id.dropna()) == desk_runs
    # Nobody looks at a chart during a screen, so none is drawn (`alphadesk csp` draws one).
    runs_dir = tmp_path / "two" / "runs"
    assert desk_runs and not [png for run in desk_runs for png in (runs_dir / run).glob("*.png")]


@pytest.mark.slow
def test_screen_command_over_dates_saves_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    args = ["screen", "AAPL", "IBM", "--from", "2012-06-01", "--to", "2012-06-28"]
    done = CliRunner().invoke(app, [*args, "--every", "10", "--workers", "1", "--json"])
    assert done.exit_code == 0, done.output
    history = json.loads(done.stdout)
    assert [s["as_of"][:10] for s in history["screens"]] == ["2012-06-01", "2012-06-15"]
    table = pd.read_csv(history["table"][0])
    assert len(table) == 4 and set(table.symbol) == {"AAPL", "IBM"}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--from", "2012-06-01"], "--from and --to go together"),
        (["--from", "2012-06-01", "--to", "2012-06-29", "--as-of", "2012-06-01"], "exclude"),
        (["--from", "2012-06-30", "--to", "2012-07-01"], "no trading session"),
        (["--from", "June", "--to", "2012-07-01"], "YYYY-MM-DD"),
    ],
)
def test_screen_command_refuses_bad_dates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], said: str
) -> None:
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    refused = CliRunner().invoke(app, ["screen", "AAPL", *args])
    assert refused.exit_code == 1 and said in refused.output
    assert (
        not (tmp_path / "runs.sqlite").exists() or not RunStore(tmp_path / "runs.sqlite").recent()
    )


class _BrokenChains:
    """The bundled data, with one symbol's option chain raising what no provider should (a
    bug, not a DataError the pre-filter turns into a reason)."""

    def __init__(self, market: Any, broken: str) -> None:
        self._market, self._broken = market, broken

    def __getattr__(self, name: str) -> Any:
        return getattr(self._market, name)

    def option_chain(self, symbol: str, *args: Any, **kwargs: Any) -> Any:
        if symbol == self._broken:
            raise RuntimeError(f"chain parser choked on {symbol}")
        return self._market.option_chain(symbol, *args, **kwargs)


@pytest.mark.slow
async def test_a_crash_on_one_symbol_is_an_error_not_a_filtered_symbol(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    market = _BrokenChains(build_provider(settings), "IBM")
    request = ScreenRequest(symbols=SYMBOLS, dates=[close_of("2012-06-29")])
    history = await run_screens(settings, request, market=market, workers=1)

    (screen,) = history.screens
    (error,) = screen.errors
    assert error.symbol == "IBM" and error.error == "RuntimeError: chain parser choked on IBM"
    assert not error.reasons and "IBM" not in {c.symbol for c in screen.filtered}
    assert {c.symbol for c in screen.filtered} == {"GOOG", "^GSPC"}
    assert screen.rejected_share == pytest.approx(2 / 5)  # the error is no rejection
    counts = history.counts
    assert (counts.errors, counts.filtered, counts.analysed) == (1, 2, 2)
    row = _table(history).set_index("symbol").loc["IBM"]
    assert row.decision == "error" and row.error == error.error
    assert pd.isna(row.filtered_because)
    recorded = RunStore(settings.store_path).get(history.run_id)
    assert recorded.result is not None and recorded.result["counts"]["errors"] == 1
    report = (settings.runs_dir / history.run_id / "report.md").read_text()
    assert "- IBM: RuntimeError: chain parser choked on IBM" in report


def test_screen_command_lists_errors_apart_from_filtered_symbols(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from alphadesk.pipelines.screen import prefilter

    checks = prefilter.prefilter

    def crashing(market: Any, symbol: str, *args: Any) -> Any:
        if symbol == "IBM":
            raise KeyError("no such column")
        return checks(market, symbol, *args)

    monkeypatch.setattr(prefilter, "prefilter", crashing)  # in this process: --workers 1
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "160")
    args = ["screen", "AAPL", "IBM", "GOOG", "--as-of", "2012-06-29", "--workers", "1"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    filtered, errors = done.stdout.split("Failed with an error")
    assert "GOOG" in filtered.split("Filtered out before any model call")[1]
    assert "IBM" not in filtered and "IBM     KeyError: 'no such column'" in errors
    assert "3 screened, 1 filtered out (33%), 1 analysed by the desk, 1 failed with an " in errors
    assert "errors 1" in done.stderr  # the progress line counts them too


def test_an_interrupted_screen_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    market = build_provider(settings)
    request = ScreenRequest(symbols=SYMBOLS, dates=[close_of("2012-06-29")])
    pipeline = ScreenPipeline(settings, market, workers=1)
    runner = PipelineRunner(settings, pipeline)
    assert asyncio.run(runner.analyze(request, interrupt_after=["screen"])) is None
    store = RunStore(settings.store_path)
    (stopped,) = store.recent(kind="screen")
    assert stopped.status == "interrupted"
    desk_runs = {r.id for r in store.recent(kind="csp", limit=50)}

    # The command takes the recorded request; the symbols screened before are not redone.
    done = CliRunner(env={"ALPHADESK_DATA_DIR": str(tmp_path)}).invoke(
        app, ["screen", "--resume", stopped.id, "--json"]
    )
    assert done.exit_code == 0, done.output
    history = ScreenHistory.model_validate_json(done.stdout)
    assert history.run_id == stopped.id and store.get(stopped.id).status == "completed"
    assert history.counts.symbol_dates == 5 and {r.id for r in store.recent(kind="csp")} == (
        desk_runs
    )
    again = CliRunner(env={"ALPHADESK_DATA_DIR": str(tmp_path)}).invoke(
        app, ["screen", "--resume", stopped.id]
    )
    assert again.exit_code == 1 and "finished" in again.output
    mixed = CliRunner().invoke(app, ["screen", "AAPL", "--resume", stopped.id])
    assert mixed.exit_code == 1 and "--resume continues the recorded screen" in mixed.output
    desk_run = next(iter(desk_runs))
    not_a_screen = CliRunner(env={"ALPHADESK_DATA_DIR": str(tmp_path)}).invoke(
        app, ["screen", "--resume", desk_run]
    )
    assert not_a_screen.exit_code == 1 and f"run {desk_run} is a csp run" in not_a_screen.output


@pytest.mark.slow
def test_a_screen_run_shows_its_report_and_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "160")
    runner = CliRunner()
    args = ["screen", "AAPL", "GOOG", "IBM", "--as-of", "2012-06-29", "--json"]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    run_id = json.loads(done.stdout)["run_id"]
    shown = runner.invoke(app, ["runs", "show", run_id])
    assert shown.exit_code == 0, shown.output
    assert "3 symbol-dates on 1 date(s): 1 filtered out" in " ".join(shown.output.split())
    # Replayed (here in worker processes): the same checks and desk decisions.
    replayed = runner.invoke(app, ["runs", "replay", run_id])
    assert replayed.exit_code == 0, replayed.output
    assert "identical decision (completed)" in replayed.output
