"""Every command's help reads like a manual: no Python type names, flags as flags."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.testing import CliRunner

from alphadesk.cli.app import app

_PYTHON_TYPE = re.compile(r"<(bool|str|int|float|list\[[^\]]*\]|Path)[^>]*>")


def _paths(command: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, sub in getattr(command, "commands", {}).items():
        found += _paths(sub, (*prefix, name))
    return found


COMMANDS = _paths(typer.main.get_command(app))


def test_every_command_is_walked() -> None:
    assert {("csp",), ("screen",), ("desk",), ("data", "list"), ("runs", "show")} <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "alphadesk")
def test_help_has_no_python_type_names(path: tuple[str, ...]) -> None:
    shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "120"})
    assert shown.exit_code == 0, shown.output
    assert not _PYTHON_TYPE.search(shown.output), shown.output


def _option_line(path: list[str], option: str) -> str:
    shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "120"})
    (line,) = [x for x in shown.output.splitlines() if f" {option} " in x]
    return line


def test_flags_choices_and_dates_read_as_such() -> None:
    assert re.search(r"--json\s+Print", _option_line(["csp"], "--json"))  # a flag: no value
    assert "quick|standard|deep" in _option_line(["csp"], "--depth")
    assert "DATE" in _option_line(["desk"], "--as-of")
    assert "--no-memory" in _option_line(["desk"], "--memory")
    assert "put|call" in _option_line(["data", "chain"], "--type")


def test_a_bad_choice_is_refused_with_the_choices() -> None:
    refused = CliRunner().invoke(app, ["csp", "NVDA", "--depth", "medium"])
    assert refused.exit_code == 2
    assert "quick" in refused.output and "medium" in refused.output
