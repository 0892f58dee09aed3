"""The command line with its data in a temporary folder and a wide terminal."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")
    return CliRunner()
