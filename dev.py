#!/usr/bin/env python3
"""Set up alphadesk in ./.venv and run it: the quickstart's two commands.

    python3 dev.py demo    # set up, then run the main job offline (no key, bundled data)
    python3 dev.py test    # set up, then lint, type-check and run the test suite

Only the Python standard library is used here, so this works on a fresh machine with
Python 3.11+. The environment is rebuilt when pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".alphadesk-installed"

# The main job: a cash-secured-put analysis on bundled data with the offline `rules` model.
DEMO = ["alphadesk", "csp", "NVDA", "--as-of", "2024-11-29"]


def _run(*cmd: str | Path) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT)


def setup() -> None:
    """Create the virtual environment and install the package with its test extras."""
    if sys.version_info < (3, 11):
        sys.exit(f"alphadesk needs Python 3.11+, this is {sys.version.split()[0]}")
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    if not (BIN / "python").exists():
        venv.create(VENV, with_pip=True)
    _run(BIN / "python", "-m", "pip", "install", "-q", "--upgrade", "pip")
    _run(BIN / "python", "-m", "pip", "install", "-q", "-e", ".[test]")
    STAMP.write_text(wanted)


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "help"
    if command not in {"demo", "test", "setup"}:
        print(__doc__)
        return 2
    setup()
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    steps: list[list[str]] = {
        "setup": [],
        "demo": [[*DEMO, *argv[1:]]],
        "test": [
            ["ruff", "check", "src", "tests", "bench", "scripts"],
            ["mypy"],
            ["pytest", *argv[1:]],
        ],
    }[command]
    for step in steps:
        print("+", " ".join(step), flush=True)
        code = subprocess.run(step, cwd=ROOT, env=env).returncode
        if code != 0:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
