"""Screening a universe, and the csp / screen / runs commands end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.agents.csp.models import CspConstraints
from alphadesk.cli.app import app
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.pipelines.screen.models import ScreenRequest
from alphadesk.pipelines.screen.pipeline import run_screens
from alphadesk.pipelines.screen.prefilter import prefilter
from alphadesk.store import RunStore
from tests.pipelines.conftest import close_of

pytestmark = pytest.mark.slow


async def test_screen_filters_cheaply_then_ranks_the_survivors(
    settings: Settings, market: MarketData
) -> None:
    symbols = ["AAPL", "AMZN", "IBM", "GOOG", "^GSPC", "NFLX"]
    request = ScreenRequest(symbols=symbols, dates=[close_of("2012-06-29")])
    (result,) = (await run_screens(settings, request, market=market, workers=1)).screens

    checks = {c.symbol: c for c in result.checks}
    assert not checks["^GSPC"].passed and "not an optionable" in checks["^GSPC"].reasons[0]
    assert not checks["GOOG"].passed and "downtrend" in checks["GOOG"].reasons[0]
    assert not checks["NFLX"].passed  # no data in 2012: a reason, not a crash
    survivors = {c.symbol for c in result.checks if c.passed}
    assert survivors == {r.symbol for r in result.results} == {"AAPL", "AMZN", "IBM"}
    # Filtered symbols cost nothing: only survivors were recorded as runs.
    recorded = {run.title for run in RunStore(settings.store_path).recent(kind="csp", limit=50)}
    assert recorded == {f"csp {s}" for s in survivors}
    # Ranked: selections first, by weekly return.
    rocs = [r.options.weekly_roc for r in result.results if r.decision == "select" and r.options]
    assert rocs == sorted(rocs, reverse=True)
    assert result.rejected_share == pytest.approx(3 / 6) and not result.errors


def test_prefilter_reads_trend_and_hv_across_a_split(market: MarketData) -> None:
    check = prefilter(market, "AAPL", close_of("2005-03-15"), CspConstraints())
    assert check.hv is not None and 0.3 < check.hv < 0.5  # 2-for-1 on 28 February 2005
    assert check.iv is not None and check.iv < 0.7
    assert check.trend is not None and "down" not in check.trend


def test_csp_command_prints_saves_and_shows_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "160")
    runner = CliRunner()
    done = runner.invoke(app, ["csp", "NVDA", "--as-of", "2024-11-29", "--json"])
    assert done.exit_code == 0, done.output
    (result,) = json.loads(done.stdout)
    assert result["decision"] == "select"
    run_dir = tmp_path / "runs" / result["run_id"]
    assert {p.name for p in run_dir.iterdir()} == {"report.md", "result.json", "chart_NVDA.png"}
    assert (run_dir / "chart_NVDA.png").read_bytes().startswith(b"\x89PNG")

    shown = runner.invoke(app, ["runs", "show", result["run_id"]])
    assert shown.exit_code == 0, shown.output
    strike = f"{result['options']['best_strike']:g}"
    assert "NVDA: SELECT" in shown.output and f"{strike} put" in shown.output

    listed = runner.invoke(app, ["runs", "list"])
    assert result["run_id"] in listed.output and "select" in listed.output

    replayed = runner.invoke(app, ["runs", "replay", result["run_id"]])
    assert replayed.exit_code == 0, replayed.output
    assert "identical decision (select)" in replayed.output


def test_csp_command_errors_are_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    runner = CliRunner()
    unknown = runner.invoke(app, ["csp", "NVDX", "--as-of", "2024-11-29"])
    assert unknown.exit_code == 1
    assert "NVDA" in unknown.output  # a close match is suggested
    bad_date = runner.invoke(app, ["csp", "NVDA", "--as-of", "29/11/2024"])
    assert bad_date.exit_code == 1 and "YYYY-MM-DD" in bad_date.output
    evil = runner.invoke(app, ["csp", "../etc/passwd", "--as-of", "2024-11-29"])
    assert evil.exit_code == 1 and "Traceback" not in evil.output
    stale = runner.invoke(app, ["csp", "NFLX", "--as-of", "2012-06-29"])
    assert stale.exit_code == 1 and "NFLX" in stale.output


def test_csp_command_constraints_pick_the_put_and_bad_ranges_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    runner = CliRunner()
    base = ["csp", "NVDA", "--as-of", "2024-11-29", "--json"]
    default = runner.invoke(app, base)
    narrow = runner.invoke(app, [*base, "--dte", "20-30", "--delta", "0.10-0.20"])
    assert default.exit_code == narrow.exit_code == 0, narrow.output
    (wide,) = json.loads(default.stdout)
    (chosen,) = json.loads(narrow.stdout)
    put = chosen["synthesis"]["suggested_position"]
    assert 20 <= put["dte"] <= 30 and 0.10 <= abs(put["delta"]) <= 0.20
    assert put != wide["synthesis"]["suggested_position"]  # the constraints changed the pick
    for args, said in (
        (["--dte", "30-20"], "dte_min 30 is above dte_max 20"),
        (["--delta", "0.3"], "--delta '0.3' is not a range"),
        (["--delta", "0.2-1.5"], "delta_max: must be less than 1 (got 1.5)"),
    ):
        refused = runner.invoke(app, [*base, *args])
        assert refused.exit_code == 2 and said in refused.output, refused.output


def test_as_of_dates_without_a_session_and_the_default_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from alphadesk.cli.common import parse_as_of

    assert parse_as_of("2024-11-30") == close_of("2024-11-29")  # a Saturday
    assert parse_as_of("2024-11-29") == close_of("2024-11-29")
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")
    # No date and no current data (only bundled history): the last close the data covers
    # for that symbol, said so, instead of failing on today's date.
    now = CliRunner().invoke(app, ["csp", "NVDA", "--json"])
    assert now.exit_code == 0, now.output
    said = " ".join(now.stderr.split())
    assert "No provider has current data, so this is as of 2025-02-14" in said
    (result,) = json.loads(now.stdout)
    assert result["as_of"].startswith("2025-02-14T")
