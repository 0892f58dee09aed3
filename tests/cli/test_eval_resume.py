"""An evaluation killed midway (SIGKILL: no chance to clean up) keeps every decision it
recorded, and run again it continues from them to the same files as an evaluation that
was never stopped."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# Two symbols, nine weekly dates each: 18 decisions over two worker processes.
ARGS = ["eval", "--symbols", "KO,JNJ", "--from", "2010-01-04", "--to", "2010-03-05"]
ARGS += ["--every", "5", "--workers", "2"]
FILES = ("table.md", "table.csv", "table.json", "decisions.csv")


def _eval(out: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", "from alphadesk.cli.app import main; main()"]
    return subprocess.Popen(
        [*command, *ARGS, "--out", str(out), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group: the workers can be found and ended
    )


def _decisions(out: Path) -> list[str]:
    path = out / "decisions.jsonl"
    return path.read_text().splitlines()[1:] if path.exists() else []


def test_a_killed_evaluation_resumes_to_the_files_of_an_uninterrupted_one(tmp_path: Path) -> None:
    env = os.environ | {"ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    killed = tmp_path / "killed"
    run = _eval(killed, env)
    try:
        deadline = time.monotonic() + 300
        while len(_decisions(killed)) < 4:
            assert run.poll() is None, run.stderr.read() if run.stderr else ""
            assert time.monotonic() < deadline, "no decision recorded in 5 minutes"
            time.sleep(0.2)
        os.kill(run.pid, signal.SIGKILL)  # the main process only, as the OOM killer would
        run.wait(timeout=30)
        kept = _decisions(killed)
        # Its workers notice they are orphans and end within seconds.
        deadline = time.monotonic() + 20
        while _group_alive(run.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _group_alive(run.pid), "worker processes outlived the evaluation"
    finally:
        _end_group(run.pid)
    assert 4 <= len(kept) < 18
    assert not (killed / "table.md").exists()  # it never finished

    resumed = _eval(killed, env)
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    manifest = json.loads(out)["manifest"]
    assert manifest["resumed"] == len(kept) and manifest["decided_now"] == 18 - len(kept)
    assert manifest["failed"] == 0
    assert f"{len(kept)} of 18 recorded before, continuing" in err
    whole = tmp_path / "whole"
    uninterrupted = _eval(whole, env)
    _, err = uninterrupted.communicate(timeout=600)
    assert uninterrupted.returncode == 0, err
    for name in FILES:
        assert (killed / name).read_bytes() == (whole / name).read_bytes(), name


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _end_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
