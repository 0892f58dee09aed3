"""``alphadesk chat`` (an interactive session) and ``alphadesk ask`` (one question)."""

from __future__ import annotations

import json
import textwrap
from datetime import datetime
from typing import TYPE_CHECKING

import typer

from alphadesk.cli.common import (
    MODEL_HELP,
    check_models,
    console,
    err_console,
    fail,
    parse_as_of,
    settings_from,
)

if TYPE_CHECKING:
    from alphadesk.pipelines.assistant import AssistantPipeline, ChatRequest

__all__ = ["ask", "chat_app"]

chat_app = typer.Typer(
    help="Chat with the assistant: it picks its tools and checks every figure it writes.",
    invoke_without_command=True,
)

_HELP = "/new starts a new session, /history shows this one, /quit leaves."

_AS_OF = typer.Option(
    None,
    "--as-of",
    metavar="DATE",
    help="Answer as of this date's close. Default: now, or the last date the data covers "
    "when no provider has current data.",
)
_MODEL = typer.Option(None, "--model", "-m", metavar="MODEL", help=MODEL_HELP)
_SESSION = typer.Option(
    None, "--session", "-s", metavar="SESSION_ID", help="Continue this session."
)


def _as_of(value: str | None) -> datetime | None:
    return None if value is None else parse_as_of(value)


def _pipeline(ctx: typer.Context, model: str | None) -> AssistantPipeline:
    from alphadesk.data import build_provider
    from alphadesk.pipelines.assistant import AssistantPipeline

    settings = settings_from(ctx)
    check_models(settings, model)
    try:
        return AssistantPipeline(settings, build_provider(settings), model=model)
    except ValueError as exc:
        raise fail(str(exc)) from None


def _request(question: str, session: str | None, as_of: datetime | None) -> ChatRequest:
    from pydantic import ValidationError

    from alphadesk.cli.common import fail_invalid
    from alphadesk.pipelines.assistant import ChatRequest

    try:
        return ChatRequest(question=question, session_id=session, as_of=as_of)
    except ValidationError as exc:
        raise fail_invalid(exc, 'ask a question, e.g. "how does NVDA look?"') from None


def ask(
    ctx: typer.Context,
    question: str = typer.Argument(
        ..., metavar="QUESTION", help='The question, e.g. "how does NVDA look?"'
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON only."),
    as_of: str | None = _AS_OF,
    model: str | None = _MODEL,
    session: str | None = _SESSION,
) -> None:
    """Ask the assistant one question; the answer streams, its tool calls are shown."""
    import asyncio

    from alphadesk.cli.chat_view import ChatView

    pipeline = _pipeline(ctx, model)
    request = _request(question, session, _as_of(as_of))
    view = None if as_json else ChatView()
    result = asyncio.run(pipeline.ask(request, view.on_event if view else None))
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2))
    if result.status == "error":
        raise typer.Exit(1)


@chat_app.callback()
def chat(
    ctx: typer.Context,
    as_of: str | None = _AS_OF,
    model: str | None = _MODEL,
    session: str | None = _SESSION,
) -> None:
    """An interactive session: ask, watch the tools run, read the answer as it streams."""
    if ctx.invoked_subcommand is not None:
        return
    import asyncio
    import readline  # noqa: F401  (line editing and history for input())

    from alphadesk.cli.chat_view import ChatView

    pipeline = _pipeline(ctx, model)
    instant = _as_of(as_of)
    session_id = session or pipeline.conversations.new_session("chat")
    err_console.print(f"[dim]session {session_id} · {pipeline.model_label} · {_HELP}[/]")
    while True:
        try:
            line = console.input("[bold cyan]you ›[/] ").strip()
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        if not line:
            continue
        if line in ("/quit", "/exit", "/q"):
            return
        if line == "/new":
            session_id = pipeline.conversations.new_session("chat")
            err_console.print(f"[dim]new session {session_id}[/]")
            continue
        if line == "/history":
            for message in pipeline.conversations.history(session_id):
                console.print(f"[bold]{message.role}:[/] {message.content}", highlight=False)
            continue
        if line.startswith("/"):
            err_console.print(f"[dim]{_HELP}[/]")
            continue
        try:
            asyncio.run(pipeline.ask(_request(line, session_id, instant), ChatView().on_event))
        except KeyboardInterrupt:
            err_console.print("[dim]interrupted[/]")


@chat_app.command("sessions")
def sessions(
    ctx: typer.Context, limit: int = typer.Option(20, "--limit", "-n", help="How many.")
) -> None:
    """The latest chat sessions."""
    from alphadesk.cli.tables import Column, FitTable
    from alphadesk.store import ConversationStore

    store = ConversationStore(settings_from(ctx).store_path)
    table = FitTable("id", "created", Column("messages", right=True), Column("title", text=True))
    for item in store.sessions(limit):
        table.add_row(item.id, f"{item.created_at:%Y-%m-%d %H:%M}", str(item.messages), item.title)
    console.print(table)


@chat_app.command("audit")
def audit(
    ctx: typer.Context,
    session: str | None = _SESSION,
    tool: str | None = typer.Option(None, "--tool", "-t", help="Only calls of this tool."),
    failed: bool = typer.Option(False, "--failed", help="Only failed calls and errors."),
    limit: int = typer.Option(30, "--limit", "-n", help="How many entries, newest first."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON lines."),
) -> None:
    """The audit log: every tool call and answer of the assistant, newest first."""
    from alphadesk.cli.tables import Column, FitTable
    from alphadesk.store import ConversationStore

    store = ConversationStore(settings_from(ctx).store_path)
    entries = store.audit_log(
        session_id=session, tool=tool, outcome="failed" if failed else None, limit=limit
    )
    if as_json:
        for entry in entries:
            typer.echo(entry.model_dump_json())
        return
    table = FitTable(
        "at", "kind", "tool", "outcome", Column("s", right=True), "run", Column("detail", text=True)
    )
    for e in entries:
        detail = textwrap.shorten(e.detail, 240, placeholder=" …")  # whole with --json
        seconds = f"{e.seconds:.2f}" if e.seconds is not None else "-"
        table.add_row(
            f"{e.at:%H:%M:%S}", e.kind, e.tool or "-", e.outcome, seconds, e.run_id or "-", detail
        )
    console.print(table)
