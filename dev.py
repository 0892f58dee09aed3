#!/usr/bin/env python3
"""Set up alphadesk in ./.venv and run it: the quickstart's two commands.

    python3 dev.py demo    # set up, then run the main job offline (no key, bundled data)
    python3 dev.py test    # set up, then lint, type-check, run the test suite, build the docs
    python3 dev.py setup   # only set up (also builds or reuses the local model server)
    python3 dev.py docs    # set up, then build the documentation site into site/ (--serve: serve it)

Only the Python standard library is used here, so this works on a fresh machine with
Python 3.11+. The environment is rebuilt when pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import venv
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".alphadesk-installed"

# The main job: a cash-secured-put analysis on bundled data with the offline `rules` model.
DEMO = ["alphadesk", "csp", "NVDA", "--as-of", "2024-11-29"]
# The documentation site, strict: a broken link, or a page that no longer matches the code
# (its examples' output, the options, paths and settings it names), fails the build.
DOCS = ["mkdocs", "build", "--strict"]


def _run(*cmd: str | Path) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT)


# System tools that pip cannot install: command -> Debian/Ubuntu package, and what for.
SYSTEM_TOOLS = {
    "bwrap": ("bubblewrap", "the sandbox that runs strategy code"),
    "chromium": ("chromium", "the browser the web UI's end-to-end test drives"),
}


def system_tools() -> None:
    """Install missing system tools with apt-get when we are root or may use sudo.

    Without them the rest still works; what needs them refuses to run and says why
    (strategy files never run outside the sandbox).
    """
    missing = {cmd: pkg for cmd, pkg in SYSTEM_TOOLS.items() if shutil.which(cmd) is None}
    if not missing:
        return
    needs = "; ".join(f"{cmd} ({why})" for cmd, (_, why) in missing.items())
    packages = sorted({pkg for pkg, _ in missing.values()})
    manual = f"install them yourself, e.g. `sudo apt-get install -y {' '.join(packages)}`"
    if not sys.platform.startswith("linux"):
        print(f"note: missing {needs}: they need Linux; what uses them will say so and stop")
        return
    if os.geteuid() == 0:
        sudo: list[str] | None = []
    elif shutil.which("sudo"):
        sudo = ["sudo"] if sys.stdin.isatty() else ["sudo", "-n"]
    else:
        sudo = None
    if shutil.which("apt-get") is None or sudo is None:
        print(f"note: missing {needs}; {manual}")
        return
    print(f"missing {needs}: installing {' '.join(packages)} with apt-get", flush=True)
    for attempt in ([], [[*sudo, "apt-get", "update", "-q"]]):
        try:
            for cmd in attempt:
                _run(*cmd)
            _run(*sudo, "apt-get", "install", "-y", "-q", *packages)
            return
        except (OSError, subprocess.CalledProcessError):
            continue
    print(f"warning: could not install {' '.join(packages)}; {manual}")


def setup() -> None:
    """Create the virtual environment, install the package with its test extras and the
    system tools it needs (bubblewrap, Chromium)."""
    if sys.version_info < (3, 11):
        sys.exit(f"alphadesk needs Python 3.11+, this is {sys.version.split()[0]}")
    system_tools()
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    if not (BIN / "python").exists():
        venv.create(VENV, with_pip=True)
    _run(BIN / "python", "-m", "pip", "install", "-q", "--upgrade", "pip")
    _run(BIN / "python", "-m", "pip", "install", "-q", "-e", ".[test]")
    STAMP.write_text(wanted)


def model_server() -> None:
    """Build llama.cpp's llama-server for the live-model tests, or reuse the cached build
    (in the user's cache folder, outside the clone). Without cmake or a compiler the live
    tests skip and say why."""
    script = ROOT / "scripts" / "llama_server.py"
    try:
        _run(BIN / "python", script, "install-models")
        _run(BIN / "python", script, "build")
    except subprocess.CalledProcessError:
        print("warning: llama-server or its models could not be set up; the live-model tests "
              "will skip")  # fmt: skip


class Stages:
    """How long each stage took, said as it ends and again together at the end (also when
    one fails), so a slow stage is seen."""

    def __init__(self) -> None:
        self.took: list[tuple[str, float]] = []

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            seconds = time.monotonic() - started
            self.took.append((name, seconds))
            print(f"[{name}: {seconds:.0f} s]", flush=True)

    def summary(self) -> str:
        total = sum(seconds for _, seconds in self.took)
        each = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in self.took)
        return f"stages: {each}; total {total:.0f} s"


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "help"
    if command not in {"demo", "test", "setup", "docs"}:
        print(__doc__)
        return 2
    stages = Stages()
    try:
        return _run_stages(command, argv[1:], stages)
    finally:
        if command == "test":
            print(stages.summary(), flush=True)


def _run_stages(command: str, extra: list[str], stages: Stages) -> int:
    preparing: list[tuple[str, Callable[[], None]]] = [("set-up", setup)]
    if command in {"setup", "test"}:
        preparing.append(("llama-server", model_server))
    for name, prepare in preparing:
        with stages.stage(name):
            prepare()
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["NO_MKDOCS_2_WARNING"] = "1"  # the theme's banner about its successor, on every build
    steps: list[tuple[str, list[str]]] = {
        "setup": [],
        "demo": [("demo", [*DEMO, *extra])],
        "test": [
            ("lint", ["ruff", "check", "src", "tests", "bench", "scripts"]),
            ("format", ["ruff", "format", "--check", "src", "tests", "bench", "scripts"]),
            ("types", ["mypy"]),
            ("tests", ["pytest", *extra]),
            ("docs", DOCS),
        ],
        "docs": [("docs", ["mkdocs", "serve"] if "--serve" in extra else DOCS)],
    }[command]
    for name, step in steps:
        print("+", " ".join(step), flush=True)
        with stages.stage(name):
            code = subprocess.run(step, cwd=ROOT, env=env).returncode
        if code != 0:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
