"""Tables fit the terminal: at 80 and 120 columns every value a user needs (expiry, id,
decision, cost, date, symbol) is printed whole on one line, and free text wraps at words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from alphadesk.cli.app import app
from alphadesk.cli.tables import Column, FitTable

WIDTHS = [80, 120]
REASON = (
    "trend up; the IV/HV ratio of 1.31 is rich enough and the nearest support sits "
    "well below the strike, so assignment would be at a price worth owning [sic]"
)


def _lines(table: FitTable, width: int) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    console.print(table)
    lines = console.export_text().splitlines()
    assert all(len(line.rstrip()) <= width for line in lines)
    return lines


def _whole(value: str, lines: list[str]) -> bool:
    """``value`` appears on one line, not glued to a neighbour."""
    pattern = re.compile(rf"(?<!\S){re.escape(value)}(?!\S)")
    return any(pattern.search(line) for line in lines)


@pytest.mark.parametrize("width", [50, *WIDTHS])
def test_values_stay_whole_and_reasons_wrap_at_words(width: int) -> None:
    table = FitTable(
        "#", "symbol", "decision", "put", Column("premium", right=True),
        Column("cost $", right=True), Column("why", text=True),
    )  # fmt: skip
    table.add_row("1", "BRK-B", "select", "2012-07-20 540", "12.35", "0.0042", REASON)
    table.add_row("2", "MSFT", "reject", "-", "-", "0.0017", "no put in the delta band")
    lines = _lines(table, width)
    for value in ("BRK-B", "select", "2012-07-20 540", "12.35", "0.0042", "MSFT", "0.0017"):
        assert _whole(value, lines), (value, lines)
    words = " ".join(" ".join(lines).replace("why:", "").split())
    assert REASON in words  # every word, none cut, in order
    assert "…" not in "".join(lines)


def test_free_text_moves_under_its_row_when_the_values_leave_it_no_room() -> None:
    table = FitTable("id", "as of", "status", Column("title", text=True))
    table.add_row("20261124-150259-a8afa0", "2012-06-29", "completed", REASON)
    narrow, wide = _lines(table, 60), _lines(table, 200)
    assert "title" not in narrow[0] and any(line.startswith("    title: ") for line in narrow)
    assert "title" in wide[0] and _whole("20261124-150259-a8afa0", narrow)


@pytest.mark.parametrize("width", WIDTHS)
def test_runs_list_and_data_list_print_ids_names_and_dates_whole(
    tmp_path: Path, width: int
) -> None:
    env = {"ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": str(width)}
    runner = CliRunner()
    ran = runner.invoke(app, ["csp", "AAPL", "--as-of", "2012-06-01", "--json"], env=env)
    assert ran.exit_code == 0, ran.output
    run_id = json.loads(ran.stdout)[0]["run_id"]
    listed = runner.invoke(app, ["runs", "list"], env=env)
    assert listed.exit_code == 0, listed.output
    lines = listed.stdout.splitlines()
    assert _whole(run_id, lines) and _whole("2012-06-01", lines) and _whole("0.0000", lines)

    data = runner.invoke(app, ["data", "list", "--json"], env=env)
    shown = runner.invoke(app, ["data", "list"], env=env).stdout
    lines = shown.splitlines()
    assert all(len(line.rstrip()) <= width for line in lines)
    for entry in json.loads(data.stdout):
        dates = (entry["start"], entry["end"], entry["fundamentals"], entry["earnings"])
        for value in (entry["symbol"], *(str(v) for v in dates if v)):  # SEC-only: no bars
            assert _whole(value, lines), (value, width)
        for word in (entry["name"] or "").split():  # a long name wraps at words, none cut
            assert _whole(word, lines), (word, width)
    assert "…" not in shown


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.slow
def test_the_screen_prints_every_put_whole(tmp_path: Path, width: int) -> None:
    env = {"ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": str(width)}
    args = ["screen", "AMZN", "AAPL", "GOOG", "--as-of", "2012-06-29", "--workers", "1"]
    shown = CliRunner().invoke(app, args, env=env)
    assert shown.exit_code == 0, shown.output
    as_json = CliRunner().invoke(app, [*args, "--json"], env=env)
    (screen,) = json.loads(as_json.stdout)["screens"]
    lines = shown.stdout.splitlines()
    selected = [r for r in screen["results"] if r["decision"] == "select"]
    assert selected  # the check below has something to look at
    for result in selected:
        put = f"{result['options']['best_expiration']} {result['options']['best_strike']:g}"
        assert _whole(put, lines) and _whole(result["symbol"], lines), (put, lines)
    assert "…" not in shown.stdout


def test_the_live_view_never_cuts_a_debate_line_or_a_reason_inside_a_word() -> None:
    from alphadesk.cli.live import LiveView
    from alphadesk.pipelines.events import DebateMessage, StepFinished, StepStarted

    words = [f"point{n}" for n in range(80)]  # a long turn: shortened, at a word
    reasons = [f"reason{n}" for n in range(60)]
    view = LiveView(enabled=False)
    view.on_event(StepStarted(run_id="r1", agent="bull", symbol="AAPL", model="openai/gpt-4o"))
    view.on_event(DebateMessage(
        run_id="r1", agent="bull", symbol="AAPL", debate="investment", round=1,
        text=" ".join(words), conviction=0.83,
    ))  # fmt: skip
    view.on_event(StepFinished(
        run_id="r1", agent="bull", symbol="AAPL", status="rejected", reason=" ".join(reasons)
    ))  # fmt: skip
    console = Console(width=80, record=True, color_system=None)
    console.print(view._render())
    shown = console.export_text()
    tokens = shown.replace("…", " ").split()
    for whole in (words, reasons):
        seen = [t for t in tokens if t.startswith(whole[0][:4])]
        assert len(seen) > 10 and seen == whole[: len(seen)], seen  # whole words, in order
    assert _whole("openai/gpt-4o", shown.splitlines()) and _whole("rejected", shown.splitlines())
