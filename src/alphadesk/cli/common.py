"""What every command shares: settings from the root options, a console, dates and options."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from alphadesk.cli.validation import validation_problems
from alphadesk.pipelines.depth import Depth  # the choices of every --depth option

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pydantic import ValidationError

    from alphadesk.agents.csp.models import CspConstraints
    from alphadesk.cluster import RayCluster
    from alphadesk.config import Settings
    from alphadesk.data.base import MarketData

__all__ = [
    "AS_OF_HELP",
    "BAD_INPUT",
    "DELTA_HELP",
    "DTE_HELP",
    "MODEL_HELP",
    "RESUME_HELP",
    "ROC_HELP",
    "Depth",
    "check_models",
    "close_of",
    "console",
    "err_console",
    "fail",
    "fail_invalid",
    "parse_as_of",
    "parse_constraints",
    "parse_day",
    "ray_cluster",
    "recorded_request",
    "settings_from",
    "window_day",
]

BAD_INPUT = 2  # the exit code of a request that cannot run as given


class _Console(Console):
    """A console that takes its size when it prints, not when it is made.

    Rich fixes ``COLUMNS`` and ``LINES`` at construction, and these consoles are made at
    import: a command run later in the same process (a test, a program embedding the CLI)
    would print at the width of the shell that imported it, not at the one it is given.
    """

    def __init__(self, *, stderr: bool = False) -> None:
        super().__init__(stderr=stderr)
        self._width = self._height = None  # Console.size then reads the terminal each time


console = _Console()
err_console = _Console(stderr=True)


AS_OF_HELP = (
    "Analyse as of this date's close. Default: now, or the last date the data covers when "
    "no provider has current data."
)
MODEL_HELP = "LiteLLM model string for every agent, or 'rules' (offline)."
RESUME_HELP = "Resume an interrupted run by its id."
DTE_HELP = "Days to expiry the put may have, MIN-MAX. Default: 14-45."
DELTA_HELP = "The put's |delta|, MIN-MAX. Default: 0.15-0.30."
ROC_HELP = "Least premium per week, in percent of the strike. Default: 0.3."


def settings_from(ctx: typer.Context) -> Settings:
    """The settings built by the root callback (``--config``, environment, defaults)."""
    from pydantic import ValidationError

    from alphadesk.config import Settings  # its loaders cost a --help what it never reads

    root = ctx.find_root()
    if not isinstance(root.obj, Settings):
        config: Path | None = root.params.get("config") if root.params else None
        try:
            root.obj = Settings.load(config)
        except FileNotFoundError as exc:
            raise fail(str(exc), "name an existing TOML file with --config") from None
        except ValidationError as exc:
            raise fail_invalid(exc, "fix the settings file or the ALPHADESK_* variable") from None
    return root.obj


def fail(message: str, hint: str | None = None, code: int = 1) -> typer.Exit:
    """Print a clear error (and what to do about it) and return the exit to raise."""
    err_console.print(f"[bold red]error:[/] {message}")
    if hint:
        err_console.print(f"[dim]hint:[/] {hint}")
    return typer.Exit(code)


def fail_invalid(
    exc: ValidationError,
    hint: str | None = None,
    labels: Mapping[str, str] | None = None,
) -> typer.Exit:
    """Print ``exc`` in plain words (and ``hint``); the exit (code 2) to raise."""
    return fail(validation_problems(exc, labels), hint, BAD_INPUT)


MODEL_HINT = (
    "give a LiteLLM model string provider/model, e.g. openai/gpt-4o-mini or ollama/qwen2.5, "
    "or 'rules' to run offline"
)


def check_models(settings: Settings, model: str | None) -> None:
    """Refuse (exit 2), before any run starts, a ``--model`` or a model in the settings that
    names no model: each is checked without building or calling it."""
    from alphadesk.llm.factory import check_model_string

    models = settings.models
    named = [("--model", model)] if model is not None else [
        ("models.quick in the settings", models.quick),
        ("models.deep in the settings", models.deep),
        *((f"models.per_agent.{a} in the settings", m) for a, m in models.per_agent.items()),
    ]  # fmt: skip
    named += [("models.fallbacks in the settings", m) for m in models.fallbacks]
    for where, name in named:
        try:
            check_model_string(name)
        except ValueError as exc:
            detail = str(exc).split(": ", 1)[0]  # "unknown model 'x'" (the rest lists examples)
            if where == "--model":
                raise fail(detail, MODEL_HINT, BAD_INPUT) from None
            raise fail(
                f"{detail} ({where})", f"fix the settings file: {MODEL_HINT}", BAD_INPUT
            ) from None


def ray_cluster(ray: bool, address: str | None) -> RayCluster | None:
    """The cluster of ``--ray``/``--ray-address`` (an address implies --ray), or None.

    Checks that Ray is installed without importing it: it loads only when a run starts.
    """
    import importlib.util

    from alphadesk.cluster import RayCluster

    if not ray and address is None:
        return None
    if importlib.util.find_spec("ray") is None:
        raise fail("--ray needs Ray, which is not installed", "pip install 'alphadesk[ray]'")
    return RayCluster(address)


def parse_day(value: str, option: str = "--as-of") -> date:
    """A YYYY-MM-DD date, or a clear error naming the option."""
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise fail(f"{option} {value!r} is not a date", "use YYYY-MM-DD, e.g. 2021-06-30") from None


def window_day(value: str, option: str) -> date:
    """A --from or --to date, or a clear error naming the option (exit 2)."""
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise fail(
            f"{option} {value!r} is not a date", "use YYYY-MM-DD, e.g. 2012-01-01", BAD_INPUT
        ) from None


def parse_as_of(
    value: str | None,
    *,
    market: MarketData | None = None,
    symbols: Sequence[str] = (),
    option: str = "--as-of",
) -> datetime:
    """The instant a run analyses at.

    A date means that day's close on the exchange (data known at the close); a day without
    a session means the last close before it. No date means now, unless ``market`` has no
    current data for ``symbols`` (every provider offline, or only bundled history): then
    the last close the data covers for them, and the user is told.
    """
    from alphadesk.data.calendar import local_date

    if value is None:
        now = datetime.now(UTC)
        if market is None:
            return now
        from alphadesk.data.current import resolve_as_of

        instant, note = resolve_as_of(market, None, list(symbols), now)
        if note:
            err_console.print(f"[yellow]{note}[/] [dim]Pass --as-of to choose the date.[/]")
        return instant
    day = parse_day(value, option)
    close = close_of(day, option)
    if local_date(close) != day:
        err_console.print(f"[dim]{day} has no session: using the close of {local_date(close)}[/]")
    return close


def recorded_request(
    settings: Settings, run_id: str, kind: str, symbols: Sequence[str] = ()
) -> Any:
    """The request the ``kind`` run ``run_id`` was started with (what ``--resume`` goes on
    with), or a clear error (exit 2): an unknown run, one of another kind, or one about
    other ``symbols`` than those given."""
    from alphadesk.data.symbols import normalize_symbol
    from alphadesk.pipelines.base import pipeline_class
    from alphadesk.store import RunNotFound, RunStore

    try:
        run = RunStore(settings.store_path).get(run_id)
    except RunNotFound as exc:
        raise fail(str(exc), f"see `alphadesk runs list --kind {kind}`", BAD_INPUT) from None
    if run.kind != kind:
        raise fail(f"run {run_id} is a {run.kind} run, not a {kind} run", code=BAD_INPUT)
    request = pipeline_class(kind).request_type.model_validate(run.request)
    started = list(getattr(request, "symbols", None) or [request.symbol])
    given = []
    for symbol in symbols:
        try:
            given.append(normalize_symbol(symbol))
        except ValueError as exc:
            raise fail(str(exc), code=BAD_INPUT) from None
    if given and given != started:
        raise fail(
            f"run {run_id} is about {', '.join(started)}, not {', '.join(given)}",
            "a run resumes with the request it started with: give its symbols",
            BAD_INPUT,
        )
    return request


def close_of(day: date, option: str = "--as-of") -> datetime:
    """The close a date given as ``option`` means: that day's, or the last session's before
    it. A clear error (exit 2) for a day whose close has not happened yet (it names the last
    close) or one before the exchange calendar."""
    from datetime import timedelta

    from alphadesk.data.calendar import close_on_or_before, local_date

    now = datetime.now(UTC)
    last = close_on_or_before(local_date(now))
    if last > now:  # today's session has not closed yet
        last = close_on_or_before(local_date(last) - timedelta(days=1))
    if day > local_date(last):
        raise fail(
            f"{option} {day} is in the future: the last close is {local_date(last)}",
            f"pick {local_date(last)} or an earlier date",
            BAD_INPUT,
        )
    try:
        return close_on_or_before(day)
    except ValueError as exc:  # before the calendar starts
        raise fail(str(exc).split(";")[0], f"pick a later {option}", BAD_INPUT) from None


def parse_constraints(dte: str | None, delta: str | None, min_roc: float | None) -> CspConstraints:
    """The put a CSP run may sell, from ``--dte``, ``--delta`` and ``--min-roc`` (each
    left out keeps its default); a clear error (exit 2) for a range that is not one."""
    from pydantic import ValidationError

    from alphadesk.agents.csp.models import CspConstraints

    fields: dict[str, float] = {}
    for option, text, low, high, kind in (
        ("--dte", dte, "dte_min", "dte_max", int),
        ("--delta", delta, "delta_min", "delta_max", float),
    ):
        if text is not None:
            fields[low], fields[high] = _range(option, text, kind)
    if min_roc is not None:
        fields["min_weekly_roc"] = min_roc
    try:
        return CspConstraints.model_validate(fields)
    except ValidationError as exc:
        raise fail_invalid(exc, "see --help") from None


def _range(option: str, text: str, kind: type[float]) -> tuple[float, float]:
    low, sep, high = text.partition("-")
    try:
        if not sep:
            raise ValueError(text)
        return kind(low), kind(high)
    except ValueError:
        raise fail(f"{option} {text!r} is not a range", f"write MIN-MAX, e.g. {option} "
                   + ("20-40" if kind is int else "0.20-0.30"), 2) from None  # fmt: skip
