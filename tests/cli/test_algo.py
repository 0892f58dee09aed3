"""``alphadesk algo`` from the command line: the same pipeline, a JSON result, clear refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app


def _env(tmp_path: Path) -> dict[str, str]:
    return {"ALPHADESK_DATA_DIR": str(tmp_path / "alphadesk"), "COLUMNS": "120"}


def test_a_goal_without_a_number_is_refused_with_an_example(tmp_path: Path) -> None:
    shown = CliRunner().invoke(
        app, ["algo", "AAPL", "--goal", "make money", "--to", "2012-12-31"], env=_env(tmp_path)
    )
    assert shown.exit_code == 2
    assert "Sharpe above 1" in shown.output


def test_too_short_a_window_says_how_to_widen_it(tmp_path: Path) -> None:
    args = [
        "algo",
        "AAPL",
        "--goal",
        "Sharpe above 1",
        "--from",
        "2012-10-01",
        "--to",
        "2012-12-31",
    ]
    shown = CliRunner().invoke(app, args, env=_env(tmp_path))
    assert shown.exit_code == 2
    assert "--from" in shown.output


@pytest.mark.slow
def test_one_iteration_prints_json_and_saves_the_strategy(tmp_path: Path, sandbox: None) -> None:
    saved = tmp_path / "best.py"
    args = [
        "algo",
        "AAPL",
        "--goal",
        "Sharpe above 3",
        "--variants",
        "1",
        "--iterations",
        "1",
        "--to",
        "2012-12-31",
        "--no-memory",
        "--json",
        "--save",
        str(saved),
    ]
    shown = CliRunner().invoke(app, args, env=_env(tmp_path))
    assert shown.exit_code == 0, shown.output
    result = json.loads(shown.stdout)
    assert result["decision"] == "BUDGET_EXHAUSTED"
    assert result["budget"] == "the iteration limit (1) was reached"
    assert saved.read_text() == Path(result["strategy_file"]).read_text()
    assert "class SmaCross(bt.Strategy)" in saved.read_text()


@pytest.mark.parametrize("option", ["--variants", "--iterations"])
def test_counts_are_bounded(tmp_path: Path, option: str) -> None:
    shown = CliRunner().invoke(app, ["algo", "AAPL", "--goal", "Sharpe above 1", option, "0"])
    assert shown.exit_code == 2
