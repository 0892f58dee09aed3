"""The public API: what ``alphadesk`` exports, and one call that runs a pipeline.

``alphadesk`` imports each name from here only when it is first read (module
``__getattr__``), so ``import alphadesk`` and ``alphadesk --help`` load none of it.

    import alphadesk
    result = alphadesk.run(alphadesk.CspRequest(symbol="NVDA", as_of="2024-11-29T18:00:00Z"))
    print(result.decision, result.synthesis.suggested_position.strike)
"""

from __future__ import annotations

import asyncio
from functools import partial
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from alphadesk.agent.events import EventSink
    from alphadesk.config import Settings
    from alphadesk.data.base import MarketData

__all__ = ["EXPORTS", "arun", "export", "run"]

# Every exported name -> "module:attribute" (the test of exported names pins this list).
EXPORTS: dict[str, str] = {
    "Settings": "alphadesk.config:Settings",
    "build_provider": "alphadesk.data.factory:build_provider",
    "PipelineRunner": "alphadesk.pipelines.runner:PipelineRunner",
    "AlgoRequest": "alphadesk.pipelines.algo.models:AlgoRequest",
    "AlgoResult": "alphadesk.pipelines.algo.models:AlgoResult",
    "ChatRequest": "alphadesk.pipelines.assistant.models:ChatRequest",
    "ChatResult": "alphadesk.pipelines.assistant.models:ChatResult",
    "CspRequest": "alphadesk.pipelines.csp.models:CspRequest",
    "CspResult": "alphadesk.pipelines.csp.models:CspResult",
    "DeskRequest": "alphadesk.pipelines.desk.models:DeskRequest",
    "DeskResult": "alphadesk.pipelines.desk.models:DeskResult",
    "FundRequest": "alphadesk.pipelines.fund.models:FundRequest",
    "FundResult": "alphadesk.pipelines.fund.models:FundResult",
    "ScreenRequest": "alphadesk.pipelines.screen.models:ScreenRequest",
    "ScreenHistory": "alphadesk.pipelines.screen.models:ScreenHistory",
    "run": "alphadesk.public:run",
    "arun": "alphadesk.public:arun",
}

# The pipeline a request runs on, by the request's exported name.
_KINDS = {
    "AlgoRequest": "algo",
    "CspRequest": "csp",
    "DeskRequest": "desk",
    "FundRequest": "fund",
    "ScreenRequest": "screen",
}


def export(name: str) -> Any:
    """The object exported as ``alphadesk.<name>``.

    Raises:
        AttributeError: ``name`` is not exported (the message lists what is).
    """
    if name not in EXPORTS:
        raise AttributeError(
            f"module 'alphadesk' has no attribute {name!r}; it exports {', '.join(EXPORTS)}"
        )
    module, attribute = EXPORTS[name].split(":")
    return getattr(import_module(module), attribute)


def _kind(request: Any) -> str | None:
    """The pipeline ``request`` is for (None: a question to the assistant).

    Raises:
        TypeError: ``request`` is no pipeline's request.
    """
    if isinstance(request, export("ChatRequest")):
        return None
    for name, kind in _KINDS.items():
        if isinstance(request, export(name)):
            return kind
    raise TypeError(
        f"alphadesk.run takes a pipeline's request ({', '.join([*_KINDS, 'ChatRequest'])}), "
        f"not {type(request).__name__}"
    )


async def arun(
    request: Any,
    *,
    settings: Settings | None = None,
    market: MarketData | None = None,
    model: str | None = None,
    on_event: EventSink | None = None,
) -> Any:
    """Run the pipeline ``request`` is for, in this process, as one recorded run.

    Args:
        request: A ``CspRequest``, ``DeskRequest``, ``FundRequest``, ``ScreenRequest``,
            ``AlgoRequest`` or ``ChatRequest``.
        settings: Default ``Settings.load()`` (the ``ALPHADESK_*`` variables).
        market: Default ``build_provider(settings)``.
        model: A model string for every agent (``rules`` offline), else the settings'.
        on_event: Sees every event of the run as it happens.

    Returns:
        The pipeline's result (``CspResult``, ``DeskResult``...), or None when the run
        stopped at a checkpoint.

    Raises:
        TypeError: ``request`` is no pipeline's request.
    """
    from alphadesk.pool import InProcess
    from alphadesk.pool.jobs import ask

    kind = _kind(request)
    settings = settings if settings is not None else export("Settings").load()
    market = market if market is not None else export("build_provider")(settings)
    runs = InProcess(settings, market)
    if kind is None:
        return await runs.call(partial(ask, question=request, model=model), on_event)
    return await runs.run(kind, request, on_event, model=model)


def run(
    request: Any,
    *,
    settings: Settings | None = None,
    market: MarketData | None = None,
    model: str | None = None,
    on_event: EventSink | None = None,
) -> Any:
    """:func:`arun` from code that has no event loop running (a script, a notebook cell
    without one); inside a coroutine, ``await alphadesk.arun(...)`` instead.

    Raises:
        RuntimeError: Called with an event loop running in this thread.
        TypeError: ``request`` is no pipeline's request.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "alphadesk.run was called inside a running event loop: "
            "use `await alphadesk.arun(...)` there"
        )
    work = arun(request, settings=settings, market=market, model=model, on_event=on_event)
    return asyncio.run(work)
