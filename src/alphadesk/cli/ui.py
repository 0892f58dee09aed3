"""``alphadesk ui``: the Streamlit web UI, a client of the HTTP API.

Without ``--api`` it starts the API too (``alphadesk serve`` on a free loopback port, with
the same settings) and stops it when the UI stops: one command for both. The UI server is
the API's client: the address and the key go to it alone, in its environment, and never to
a browser. Off loopback the UI needs a key, as ``alphadesk serve`` does.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import typer

from alphadesk.cli.common import err_console, fail, settings_from
from alphadesk.cli.serve import refuse_unguarded

__all__ = ["ui"]

_API_START_S = 60.0  # a cold start imports the pipelines: seconds on a small machine


def ui(
    ctx: typer.Context,
    api: str | None = typer.Option(
        None,
        envvar="ALPHADESK_API_URL",
        metavar="URL",
        help="An API already running (alphadesk serve). Default: start one with the UI.",
    ),
    port: int = typer.Option(8501, min=1, max=65535, help="The UI's port."),
    host: str = typer.Option(
        "127.0.0.1", metavar="HOST", help="The UI's bind address; off loopback needs an API key."
    ),
) -> None:
    """Open the web UI (Streamlit), with its HTTP API unless --api names a running one."""
    settings = settings_from(ctx)
    key = settings.api_key.get_secret_value() if settings.api_key else None
    refuse_unguarded(host, key)  # before anything starts
    try:
        import streamlit  # noqa: F401
    except ImportError:
        raise fail("the web UI needs Streamlit", "pip install 'alphadesk[ui]'") from None
    import alphadesk.ui.app as app

    server = None
    if api is None:
        server, api = _start_api(ctx, key)
    auth = "with the API key" if key else "no API key"
    err_console.print(f"[dim]alphadesk UI on http://{host}:{port}, talking to {api} ({auth})[/]")
    # A minimal toolbar: no "Deploy" button nor developer menu for the UI's users.
    command = [sys.executable, "-m", "streamlit", "run", str(Path(app.__file__)),
               "--server.port", str(port), "--server.address", host,
               "--browser.gatherUsageStats", "false", "--server.headless", "true",
               "--client.toolbarMode", "minimal"]  # fmt: skip
    env = os.environ | {"ALPHADESK_API_URL": api}
    if key:  # from the settings file too; the app reads it on the server, never the page
        env["ALPHADESK_API_KEY"] = key
    try:
        done = subprocess.run(command, env=env, check=False)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
    raise typer.Exit(done.returncode)


def _start_api(ctx: typer.Context, key: str | None) -> tuple[subprocess.Popen[bytes], str]:
    """``alphadesk serve`` on a free loopback port, once it answers /health (with the key
    the server will ask for)."""
    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    root = ctx.find_root().params
    config = ["--config", str(root["config"])] if root.get("config") else []
    serve = [*config, "serve", "--port", str(port), "--log-level", "warning"]
    server = subprocess.Popen([sys.executable, "-m", "alphadesk", *serve])
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + _API_START_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise fail("the API did not start", "run `alphadesk serve` to see why")
        try:
            headers = {"X-API-Key": key} if key else {}
            if httpx.get(f"{url}/health", headers=headers, timeout=2).status_code == 200:
                return server, url
        except httpx.HTTPError:
            time.sleep(0.3)
    server.terminate()
    raise fail(f"the API did not answer within {_API_START_S:.0f} s", "try again, or --api URL")
