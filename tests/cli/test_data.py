"""`alphadesk data ...` through typer's CliRunner, offline (bundled data)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def _private_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")


def test_list_shows_the_bundled_universe() -> None:
    result = runner.invoke(app, ["data", "list"])
    assert result.exit_code == 0, result.output
    for text in ("^VIX", "^GSPC", "AAPL", "adj_close", "2022-12-28", "bokeh_sampledata"):
        assert text in result.output


def test_bars_as_of_a_date() -> None:
    result = runner.invoke(app, ["data", "bars", "aapl", "--as-of", "2012-06-01", "-n", "2"])
    assert result.exit_code == 0, result.output
    assert "2012-06-01 16:00" in result.output and "2012-05-31 16:00" in result.output
    assert "560.9900" in result.output  # the 1 June 2012 close
    assert "bundled (observed)" in result.output


def test_bars_before_a_split_read_as_traded_and_say_so() -> None:
    result = runner.invoke(app, ["data", "bars", "NVDA", "--as-of", "2021-06-30", "-n", "1"])
    assert result.exit_code == 0, result.output
    assert "800.1000" in result.output  # before the 4:1 of 2021-07-20 and the 10:1 of 2024
    assert "prices as traded on 2021-06-30; earlier bars adjusted" in result.output


def test_close_only_bars_say_what_is_missing() -> None:
    result = runner.invoke(app, ["data", "bars", "^VIX", "--as-of", "2016-01-05"])
    assert result.exit_code == 0, result.output
    assert "missing at the source: open, high, low, adj_close, volume" in result.output


def test_chain_is_modeled_offline() -> None:
    result = runner.invoke(
        app,
        ["data", "chain", "AAPL", "--as-of", "2012-06-01", "--min-dte", "10", "--max-dte", "30"],
    )
    assert result.exit_code == 0, result.output
    assert "modeled" in result.output and "puts 2012-06-15" in result.output


def test_unknown_symbol_fails_with_a_suggestion() -> None:
    result = runner.invoke(app, ["data", "bars", "APPL", "--as-of", "2012-06-01"])
    assert result.exit_code == 1
    assert "did you mean AAPL" in result.output


def test_bad_input_fails_clearly() -> None:
    naive = runner.invoke(app, ["data", "bars", "AAPL", "--as-of", "2012-06-01T10:00:00"])
    assert naive.exit_code == 1 and "time zone" in naive.output
    bad = runner.invoke(app, ["data", "bars", "AAPL;ls", "--as-of", "2012-06-01"])
    assert bad.exit_code == 1 and "ticker" in bad.output


def test_news_without_a_news_provider_says_how_to_fix_it() -> None:
    # The bundled news covers the 2025 Dow stocks only: not KO.
    result = runner.invoke(app, ["data", "news", "KO", "--as-of", "2012-06-01"])
    assert result.exit_code == 1
    assert "ALPHADESK_DATA__PROVIDERS" in result.output


def test_help_starts_without_heavy_imports() -> None:
    """Fast help is a matter of what is imported (bench/engine.py times the cold start)."""
    heavy = ("pandas", "yfinance", "alphadesk.data", "litellm", "chromadb", "langgraph")
    code = (
        "import sys, runpy; sys.argv = ['alphadesk', 'data', '--help']\n"
        "try:\n    runpy.run_module('alphadesk', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    out = (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    assert out == "[]"
