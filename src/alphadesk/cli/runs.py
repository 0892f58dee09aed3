"""``alphadesk runs``: list and show recorded runs."""

from __future__ import annotations

import json

import typer

from alphadesk.cli.common import console, fail, settings_from
from alphadesk.cli.tables import Column, FitTable

runs_app = typer.Typer(help="Recorded runs: what ran, what it cost, what it decided.")


@runs_app.command("list")
def list_runs(
    ctx: typer.Context,
    limit: int = typer.Option(20, "--limit", "-n", help="How many of the latest runs."),
    kind: str | None = typer.Option(None, help="Only runs of this pipeline (e.g. csp)."),
) -> None:
    """List the latest runs."""
    from alphadesk.store import RunStore

    store = RunStore(settings_from(ctx).store_path)
    table = FitTable(  # the id first: it is what `runs show` needs
        "id",
        "kind",
        "status",
        "as of",
        Column("requests", right=True),
        Column("cost $", right=True),
        Column("model", text=True),
        Column("title", text=True),
    )
    runs = store.recent(limit=limit, kind=kind)
    for run in runs:
        ledger = store.ledger(run.id)
        calls = sum(not entry.get("cached") for entry in ledger)
        cost = sum(float(entry.get("cost_usd", 0.0)) for entry in ledger)
        as_of = run.as_of.date().isoformat() if run.as_of else "-"
        table.add_row(
            run.id,
            run.kind,
            run.status,
            as_of,
            str(calls),
            f"{cost:.4f}",
            run.model or "-",
            run.title,
        )
    console.print(table)
    for run in runs:
        if run.resume_command:  # interrupted: its process is gone or it stopped early
            console.print(f"[yellow]{run.id} interrupted[/]: {run.resume_command}", soft_wrap=True)


@runs_app.command("show")
def show_run(
    ctx: typer.Context,
    run_id: str = typer.Argument(
        ..., metavar="RUN_ID", help="The run id from `alphadesk runs list`."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the stored result as JSON."),
    events: bool = typer.Option(False, "--events", help="Also list every recorded event."),
) -> None:
    """Show one run: its report, outcome, cost and (optionally) its events."""
    from alphadesk.store import RunNotFound, RunStore

    store = RunStore(settings_from(ctx).store_path)
    try:
        run = store.get(run_id)
    except RunNotFound as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(run.result, indent=2))
        return
    console.print(f"[bold]{run.title}[/]  ({run.kind}, {run.status}, model {run.model})")
    if run.error:
        console.print(f"[red]{run.error}[/]")
    if run.resume_command and run.resume_command not in (run.error or ""):
        console.print(f"continue it with: {run.resume_command}")
    report = next((a for a in store.artifacts(run_id) if a.name == "report.md"), None)
    if report is not None and report.path.is_file():
        from alphadesk.cli.report import Report  # Markdown rendering, only to show one

        console.print(Report(report.path.read_text()))
    elif run.result is not None:
        console.print_json(json.dumps(run.result))
    ledger = store.ledger(run_id)
    cost = sum(float(e.get("cost_usd", 0.0)) for e in ledger)
    tokens = sum(int(e.get("input_tokens", 0)) + int(e.get("output_tokens", 0)) for e in ledger)
    calls = sum(not e.get("cached") for e in ledger)
    console.print(f"model calls: {calls}  tokens: {tokens}  cost: ${cost:.4f}")
    for artifact in store.artifacts(run_id):
        console.print(f"[dim]{artifact.name}:[/] {artifact.path}")
    if events:
        for event in store.events(run_id):
            console.print(f"[dim]{event['at']}[/] {event['agent']:>10} {event['kind']}")


@runs_app.command("replay")
def replay_run(
    ctx: typer.Context,
    run_id: str = typer.Argument(
        ..., metavar="RUN_ID", help="A finished run (csp, desk, algo, assistant or screen)."
    ),
) -> None:
    """Run a recorded run again from the response cache only (no model call) and compare."""
    import asyncio

    from alphadesk.data import build_provider
    from alphadesk.llm.base import ModelError
    from alphadesk.pipelines.runner import replay
    from alphadesk.store import RunNotFound

    settings = settings_from(ctx)
    try:
        result, same = asyncio.run(replay(settings, build_provider(settings), run_id))
    except (RunNotFound, ValueError, ModelError) as exc:
        raise fail(str(exc)) from None
    calls = sum(agent.requests for agent in result.agents)
    verdict = "identical decision" if same else "[bold red]a different decision[/]"
    console.print(
        f"replayed {run_id} as {result.run_id}: {verdict} ({result.decision}), {calls} model calls"
    )
    if result.decision == "failed":
        console.print(f"[red]{result.reason}[/]")
    if not same or result.decision == "failed":
        raise typer.Exit(1)
