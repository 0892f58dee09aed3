"""Progress a log or a pipe can follow: when the output is not a terminal, csp, desk and
eval say on stderr what is going on as it happens, and stdout keeps only the result."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app

pytestmark = pytest.mark.slow


def _env(tmp_path: Path) -> dict[str, str]:
    return {"ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": "100"}


def test_csp_reports_each_agent_as_it_starts_and_finishes(tmp_path: Path) -> None:
    done = CliRunner().invoke(
        app, ["csp", "NVDA", "--as-of", "2024-11-29", "--json"], env=_env(tmp_path)
    )
    assert done.exit_code == 0, done.output
    (result,) = json.loads(done.stdout)  # stdout is pure JSON
    lines = done.stderr.splitlines()
    for agent in ("chart", "options"):
        started = lines.index(f"NVDA {agent}: started (rules)")
        finished = next(
            i for i, line in enumerate(lines) if line.startswith(f"NVDA {agent}: completed in ")
        )
        assert started < finished
    assert result["decision"] == "select"


def test_the_desk_reports_progress_when_its_table_cannot_be_watched(tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["desk", "AAPL", "--as-of", "2012-06-01"], env=_env(tmp_path))
    assert done.exit_code == 0, done.output
    for agent in ("market", "bull", "bear", "judge"):
        assert f"AAPL {agent}: started (rules)" in done.stderr
        assert re.search(rf"^AAPL {agent}: completed in \d+\.\ds$", done.stderr, re.M)
    assert "started" not in done.stdout  # the report alone goes to stdout


def test_eval_prints_progress_lines_with_the_symbol_and_date(tmp_path: Path) -> None:
    args = ["eval", "--symbols", "ibm", "--from", "2011-01-03", "--to", "2011-02-28"]
    done = CliRunner().invoke(app, [*args, "--every", "10", "--json"], env=_env(tmp_path))
    assert done.exit_code == 0, done.output
    decisions = json.loads(done.stdout)["rows"][0]["decisions"]
    progress = re.findall(
        r"^deciding (\d+)/(\d+) · [\d.]+/s · ETA \d+:\d\d:\d\d: IBM (\d{4}-\d\d-\d\d) · failed 0$",
        done.stderr,
        re.M,
    )
    assert progress[0][:3] == ("1", str(decisions), "2011-01-03")
    assert progress[-1][:2] == (str(decisions), str(decisions))
