"""The ``alphadesk`` command. Heavy modules are imported inside commands so ``--help`` is fast."""

from __future__ import annotations

import typer

from alphadesk import __version__

app = typer.Typer(
    name="alphadesk",
    help="Teams of LLM agents that analyse markets. Runs offline with no key by default.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def version() -> None:
    """Print the alphadesk version."""
    typer.echo(__version__)


def main() -> None:
    app()
