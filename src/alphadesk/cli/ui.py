"""``alphadesk ui``: the Streamlit web UI, a client of the HTTP API."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import typer

from alphadesk.cli.common import err_console, fail

__all__ = ["ui"]


def ui(
    api: str = typer.Option(
        "http://127.0.0.1:8000", envvar="ALPHADESK_API_URL", help="The API (alphadesk serve)."
    ),
    port: int = typer.Option(8501, min=1, max=65535, help="The UI's port."),
    host: str = typer.Option("127.0.0.1", help="The UI's bind address."),
) -> None:
    """Open the web UI (Streamlit) on an API started with `alphadesk serve`."""
    try:
        import streamlit  # noqa: F401
    except ImportError:
        raise fail("the web UI needs Streamlit", "pip install 'alphadesk[ui]'") from None
    import alphadesk.ui.app as app

    err_console.print(f"[dim]alphadesk UI on http://{host}:{port}, talking to {api}[/]")
    command = [sys.executable, "-m", "streamlit", "run", str(Path(app.__file__)),
               "--server.port", str(port), "--server.address", host,
               "--browser.gatherUsageStats", "false", "--server.headless", "true"]  # fmt: skip
    done = subprocess.run(command, env=os.environ | {"ALPHADESK_API_URL": api}, check=False)
    raise typer.Exit(done.returncode)
