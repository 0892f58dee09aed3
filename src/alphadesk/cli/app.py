"""The ``alphadesk`` command. Heavy modules are imported inside commands so ``--help`` is fast."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import typer

from alphadesk import __version__
from alphadesk.cli.algo import algo
from alphadesk.cli.backtest import backtest
from alphadesk.cli.chat import ask, chat_app
from alphadesk.cli.csp import csp
from alphadesk.cli.data import data_app
from alphadesk.cli.desk import desk
from alphadesk.cli.evaluate import evaluate_command
from alphadesk.cli.fund import fund
from alphadesk.cli.help import ReadableHelpGroup
from alphadesk.cli.mcp import mcp
from alphadesk.cli.portfolio import portfolio_app
from alphadesk.cli.runs import runs_app
from alphadesk.cli.screen import screen
from alphadesk.cli.serve import serve
from alphadesk.cli.tools import tools_app
from alphadesk.cli.ui import ui
from alphadesk.cli.worker import worker

app = typer.Typer(
    name="alphadesk",
    cls=ReadableHelpGroup,
    help="Teams of LLM agents that analyse markets. Runs offline with no key by default.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(runs_app, name="runs")
app.add_typer(tools_app, name="tools")
app.add_typer(data_app, name="data")
app.command("csp")(csp)
app.command("screen")(screen)
app.command("desk")(desk)
app.command("fund")(fund)
app.add_typer(chat_app, name="chat")
app.command("ask")(ask)
app.add_typer(portfolio_app, name="portfolio")
app.command("backtest")(backtest)
app.command("eval")(evaluate_command)
app.command("serve")(serve)
app.command("mcp")(mcp)
app.command("ui")(ui)
app.command("algo")(algo)
app.command("worker")(worker)


@app.callback()
def root(
    config: Path | None = typer.Option(
        None, "--config", envvar="ALPHADESK_CONFIG", help="TOML settings file.", dir_okay=False
    ),
) -> None:
    """Teams of LLM agents that analyse markets. Runs offline with no key by default."""


@app.command()
def version() -> None:
    """Print the alphadesk version."""
    typer.echo(__version__)


# The collector's thresholds for the command line (Python's are 700, 10, 10): a command
# imports millions of long-lived objects, and each full collection walks them all.
_GC_THRESHOLDS = (50_000, 20, 20)


def main() -> None:
    gc.set_threshold(*_GC_THRESHOLDS)
    if sys.argv[1:2] not in ([], ["--help"]):  # the bare help logs nothing: spare the stores
        from alphadesk.store.redact import install_log_redaction

        install_log_redaction()  # no API key in any log line the CLI prints
    # What the command, its servers and their workers write (runs, charts, caches, the
    # memory) only this user may read: it holds chats, the audit log and the portfolio.
    os.umask(0o077)
    try:
        app()
    except SystemExit as exc:  # how every command ends, with its exit code
        if _TEMPORAL_BRIDGE in sys.modules:
            _exit_without_teardown(exc.code)
        raise
    finally:
        # What remains is freed as the interpreter exits; its collections would walk
        # every object once more (about a second of CPU after a desk run) for nothing.
        gc.freeze()


# Temporal's client keeps native threads that may call into Python while the interpreter
# tears down, which aborts the process after its work is done (temporalio/sdk-python#300).
_TEMPORAL_BRIDGE = "temporalio.bridge.temporal_sdk_bridge"


def _exit_without_teardown(code: object) -> None:
    """Leave once the output is written, skipping the teardown Temporal's threads race."""
    import atexit
    import logging

    if isinstance(code, str):
        print(code, file=sys.stderr)
    atexit._run_exitfuncs()  # what the command registered to run at exit (a drawing process)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else int(code is not None))
