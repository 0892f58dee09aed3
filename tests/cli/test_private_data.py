"""The data folder from the command line: what a command writes there only its user can
read, and a folder that cannot be the data folder is a one-line error, not a traceback."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app

pytestmark = pytest.mark.slow


def _modes(root: Path) -> dict[str, int]:
    every = [root, *root.rglob("*")]
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in every}


def _alphadesk(*args: str, data_dir: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALPHADESK_")}
    env |= {"ALPHADESK_DATA_DIR": data_dir, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "alphadesk", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,  # a question takes about a second; generous for a busy machine
        check=False,
    )


def test_everything_a_command_writes_is_its_users_alone(tmp_path: Path) -> None:
    data = tmp_path / "data"
    done = _alphadesk("ask", "how does NVDA look?", data_dir=str(data), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    modes = _modes(data)
    assert "alphadesk.sqlite" in modes, modes  # (its -wal is gone: the process ended)
    assert any(name.endswith("report.md") for name in modes), modes
    folders = {name for name in modes if (data / name).is_dir()}
    assert {modes[name] for name in folders} == {0o700}, modes
    assert {mode for name, mode in modes.items() if name not in folders} == {0o600}, modes


def test_a_run_folder_and_its_files_are_private_under_an_open_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only the command's umask: the runner and the store set the modes themselves."""
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path / "data"))
    before = os.umask(0o022)
    try:
        done = CliRunner().invoke(app, ["ask", "how does NVDA look?"])
    finally:
        os.umask(before)
    assert done.exit_code == 0, done.output
    (run,) = (tmp_path / "data" / "runs").iterdir()
    modes = _modes(tmp_path / "data")
    assert modes["."] == modes["runs"] == modes[f"runs/{run.name}"] == 0o700
    for name in ("alphadesk.sqlite", f"runs/{run.name}/report.md", f"runs/{run.name}/result.json"):
        assert modes[name] == 0o600, (name, modes)
    folders = {name for name in modes if (tmp_path / "data" / name).is_dir()}
    assert {modes[name] for name in folders} == {0o700}, modes
    assert {mode for name, mode in modes.items() if name not in folders} == {0o600}, modes


@pytest.mark.parametrize(
    ("data_dir", "problem"),
    [
        ("", "data_dir: is empty"),
        ("a-file", "data_dir: a-file is a file, not a folder"),
        ("/proc/self", "data_dir: /proc/self is not a folder this user may write in"),
    ],
)
def test_a_bad_data_folder_is_a_clear_error_not_a_traceback(
    tmp_path: Path, data_dir: str, problem: str
) -> None:
    (tmp_path / "a-file").write_text("kept")
    done = _alphadesk("runs", "list", data_dir=data_dir, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and problem in " ".join(done.stderr.split())
    assert "set ALPHADESK_DATA_DIR" in done.stderr or "unset it" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # nothing made here
