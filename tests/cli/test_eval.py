"""``alphadesk eval`` end to end on a tiny range, and its refusals of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app

TINY = ["eval", "--symbols", "ibm", "--from", "2011-01-03", "--to", "2011-01-31", "--every", "20"]


@pytest.mark.slow
def test_eval_prints_the_table_writes_the_files_and_replays(tmp_path: Path) -> None:
    env = {"ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    out = tmp_path / "tiny"
    shown = CliRunner().invoke(app, [*TINY, "--out", str(out)], env=env)
    assert shown.exit_code == 0, shown.output
    assert "desk (rules) on IBM, 2011-01-03 to 2011-01-31, every 20 sessions" in shown.output
    for name in ("desk", "buy_hold", "sma_cross", "macd", "kdj_rsi", "zmr", "pooled"):
        assert name in shown.output
    for name in ("table.md", "table.csv", "table.json", "equity.png", "drawdown.png"):
        assert (out / name).stat().st_size > 0
    again = CliRunner().invoke(app, [*TINY, "--out", str(out), "--json"], env=env)
    assert again.exit_code == 0, again.output
    payload = json.loads(again.stdout)
    assert payload["manifest"]["cache_mode"] == "replay"
    assert payload["manifest"]["live_model_calls"] == 0
    assert payload["rows"] == json.loads((out / "table.json").read_text())["rows"]
    assert payload["rows"][0]["decisions"] == 1


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--from", "2011-02-01", "--to", "2011-01-01"], "after end"),
        (["--from", "2011-13-01"], "is not a date"),
        (["--symbols", "NOPE", "--from", "2011-01-03", "--to", "2011-01-31"], "NOPE"),
        (["--symbols", "IBM", "--from", "1999-06-01", "--to", "2000-06-30"], "starts 2000"),
        (["--desk", "fund"], "fund"),
        (["--symbols", "IBM", "--from", "1990-01-02", "--to", "1990-02-01"], "no 1d bar"),
        (["--every", "0"], "--every"),
        (["--symbols", "IBM", "--model", "nonsense"], "unknown model 'nonsense'"),
        (["--universe", "all", "--symbols", "IBM"], "exclude each other"),
        (["--universe", "all", "--from", "1985-01-02", "--to", "1986-01-02"], "no symbol has"),
        (
            ["--symbols", "KO,MSFT,TSLA", "--from", "2012-06-01", "--to", "2013-03-08"],
            "for 2 of 3 symbols, so nothing was decided: MSFT's data ends 2013-03-01",
        ),
    ],
)
def test_bad_input_is_a_clear_error(tmp_path: Path, args: list[str], said: str) -> None:
    env = {"ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    shown = CliRunner().invoke(app, ["eval", *args], env=env)
    assert shown.exit_code == 2, shown.output
    assert said in shown.output
    assert "Traceback" not in shown.output
