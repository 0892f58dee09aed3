"""``alphadesk worker``: run pipeline workflows from a Temporal server; and the ``--temporal``
path of ``alphadesk csp`` and ``alphadesk desk``, which submits a run and follows it."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import typer

from alphadesk.cli.common import err_console, fail, settings_from

if TYPE_CHECKING:
    from alphadesk.config import Settings
    from alphadesk.data.base import MarketData
    from alphadesk.pipelines.csp.models import CspRequest, CspResult
    from alphadesk.pipelines.desk.models import DeskRequest, DeskResult
    from alphadesk.pipelines.fund.models import FundRequest, FundResult
    from alphadesk.pipelines.models import PipelineResult

__all__ = ["TEMPORAL_HELP", "run_on_temporal", "worker"]

TEMPORAL_HELP = (
    "Run on a Temporal server at this address (e.g. localhost:7233) instead of in this "
    "process; an `alphadesk worker` must be polling it."
)


def worker(
    ctx: typer.Context,
    temporal: str = typer.Option(
        "localhost:7233", "--temporal", metavar="ADDRESS", help="The Temporal server."
    ),
    dev: bool = typer.Option(
        False, "--dev", help="Start a local Temporal dev server at ADDRESS first (in memory)."
    ),
) -> None:
    """Work on the runs submitted with --temporal: a Temporal worker, until Ctrl-C."""
    import asyncio

    try:
        from alphadesk.durable.server import dev_server
        from alphadesk.durable.worker import run_worker
    except ImportError:
        raise fail("Temporal is not installed", "pip install 'alphadesk[temporal]'") from None

    settings = settings_from(ctx)
    # An operator watches a worker: every run it takes on and finishes is a line.
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("alphadesk.durable").setLevel(logging.INFO)

    def ready(own_queue: str) -> None:
        err_console.print(
            f"[dim]worker polling alphadesk (and {own_queue}) at {temporal}; "
            f"runs recorded in {settings.data_dir}; Ctrl-C stops it[/]"
        )

    server = dev_server(temporal) if dev else contextlib.nullcontext(temporal)
    try:
        with server as address, contextlib.suppress(KeyboardInterrupt):
            asyncio.run(run_worker(settings, address, ready=ready))
    except RuntimeError as exc:
        raise fail(str(exc)) from None


@overload
def run_on_temporal(
    settings: Settings,
    market: MarketData,
    kind: Literal["desk"],
    requests: Sequence[DeskRequest],
    *,
    address: str,
    model: str | None,
    live: bool,
) -> list[DeskResult]: ...
@overload
def run_on_temporal(
    settings: Settings,
    market: MarketData,
    kind: Literal["csp"],
    requests: Sequence[CspRequest],
    *,
    address: str,
    model: str | None,
    live: bool,
) -> list[CspResult]: ...
@overload
def run_on_temporal(
    settings: Settings,
    market: MarketData,
    kind: Literal["fund"],
    requests: Sequence[FundRequest],
    *,
    address: str,
    model: str | None,
    live: bool,
) -> list[FundResult]: ...
def run_on_temporal(
    settings: Settings,
    market: MarketData,
    kind: Literal["desk", "csp", "fund"],
    requests: Sequence[DeskRequest | CspRequest | FundRequest],
    *,
    address: str,
    model: str | None,
    live: bool,
) -> Sequence[PipelineResult]:
    """Run each request as a workflow, all at once (the workers share them out), following
    their events live; returns the results as the pipeline's result models."""
    import asyncio

    from alphadesk.cli.live import LiveView
    from alphadesk.data.errors import DataError
    from alphadesk.durable.runs import TemporalRuns, TemporalUnavailable

    try:
        runs = TemporalRuns(settings, address)
    except TemporalUnavailable:
        raise fail("Temporal is not installed", "pip install 'alphadesk[temporal]'") from None
    for request in requests:  # fail fast, as a local run does, before anything is submitted
        for symbol in getattr(request, "symbols", None) or [request.symbol]:  # a fund's names
            try:
                market.daily_bars(symbol, request.as_of)
            except DataError as exc:
                raise fail(str(exc)) from None
    view = LiveView(enabled=live)

    async def run_all() -> list[Any]:
        return list(
            await asyncio.gather(*(runs.run(kind, r, view.on_event, model=model) for r in requests))
        )

    try:
        with view:
            return asyncio.run(run_all())
    except (RuntimeError, ValueError) as exc:  # no server there, the workflow failed...
        raise fail(str(exc)) from None
