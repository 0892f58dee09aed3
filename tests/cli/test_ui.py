"""``alphadesk ui`` guards itself as ``alphadesk serve`` does: off loopback, a key or no UI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _ui(tmp_path: Path, *args: str, key: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALPHADESK_")}
    env |= {"ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    if key is not None:
        env["ALPHADESK_API_KEY"] = key
    # --api names a port nobody answers on: no API is started, only the guard is tried.
    command = [sys.executable, "-m", "alphadesk", "ui", "--api", "http://127.0.0.1:9", *args]
    # A hang guard: the refusal comes in seconds (over 60 s on two cores shared with other
    # work), so five minutes is a margin no busy machine breaks.
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def test_the_ui_refuses_to_listen_off_loopback_without_a_key(tmp_path: Path) -> None:
    done = _ui(tmp_path, "--host", "0.0.0.0", "--port", "1")
    assert done.returncode == 2, done.stderr
    assert "refusing to listen on 0.0.0.0 without an API key" in done.stderr
    assert "export ALPHADESK_API_KEY=" in done.stderr
    assert "alphadesk UI on" not in done.stderr  # nothing was started


def test_a_host_name_counts_as_off_loopback(tmp_path: Path) -> None:
    done = _ui(tmp_path, "--host", "example.internal", "--port", "1")
    assert done.returncode == 2 and "refusing to listen on example.internal" in done.stderr
