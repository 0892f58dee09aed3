"""What every command shares: settings from the root options, and a console."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from alphadesk.config import Settings

__all__ = ["console", "err_console", "fail", "settings_from"]

console = Console()
err_console = Console(stderr=True)


def settings_from(ctx: typer.Context) -> Settings:
    """The settings built by the root callback (``--config``, environment, defaults)."""
    root = ctx.find_root()
    if not isinstance(root.obj, Settings):
        config: Path | None = root.params.get("config") if root.params else None
        root.obj = Settings.load(config)
    return root.obj


def fail(message: str, hint: str | None = None, code: int = 1) -> typer.Exit:
    """Print a clear error (and what to do about it) and return the exit to raise."""
    err_console.print(f"[bold red]error:[/] {message}")
    if hint:
        err_console.print(f"[dim]hint:[/] {hint}")
    return typer.Exit(code)
