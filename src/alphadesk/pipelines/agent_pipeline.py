"""What every pipeline of agents sets up the same way, written once: its settings and market,
its agents' models (``AgentModels``), the label of the models they run with, its runs' title
and its report. A pipeline states only what is its own: its kind, request and result types,
its agents, its report's renderer, and its graph and nodes."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from alphadesk.agents.spec import AgentSpec
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.base import Model
from alphadesk.pipelines.agent_steps import AgentModels
from alphadesk.pipelines.models import PipelineRequest, PipelineResult

__all__ = ["AgentPipeline"]

RequestT = TypeVar("RequestT", bound=BaseModel)
ResultT = TypeVar("ResultT", bound=PipelineResult)


class AgentPipeline(Generic[RequestT, ResultT]):
    """The part of the ``Pipeline`` protocol every pipeline of agents shares.

    Args:
        settings: Models, limits and where the stores live.
        market: Point-in-time market data.
        agents: Every agent the pipeline may run, so each one's model resolves.
        report: Its report's renderer: the result in, Markdown out.
        labelled: The agents whose models its runs are labelled with (default: all).
        model: A model string for every agent (``rules`` offline), else the settings'.
        models: Agent name -> a ready model (tests, benchmarks); wins over ``model``.
    """

    kind: str
    request_type: type[RequestT]
    result_type: type[ResultT]

    def __init__(
        self,
        settings: Settings,
        market: MarketData,
        agents: Iterable[AgentSpec[Any, Any]],
        report: Callable[[ResultT], str],
        *,
        labelled: Iterable[str] | None = None,
        model: str | None = None,
        models: Mapping[str, Model] | None = None,
    ) -> None:
        specs = list(agents)
        self.settings, self.market, self._render = settings, market, report
        # As given: a pipeline that starts runs of others (the fund's desks, the screen's
        # CSP runs) hands them on.
        self.model, self.models_given = model, models
        self.models = AgentModels(settings, specs, override=model, models=models)
        self._labelled = list(labelled) if labelled is not None else [s.name for s in specs]

    @property
    def model_label(self) -> str:
        """The models its agents run with, e.g. ``rules``."""
        return self.models.label(self._labelled)

    @staticmethod
    def graph_shape(request: RequestT) -> Hashable:
        """What of ``request`` the graph depends on: by default nothing, one graph serves
        every request."""
        return ()

    def title(self, request: RequestT) -> str:
        """The run's title in the runs table: its kind and symbol, e.g. ``desk NVDA``."""
        symbol = request.symbol if isinstance(request, PipelineRequest) else ""
        return f"{self.kind} {symbol}".rstrip()

    def report(self, result: ResultT) -> str:
        """The Markdown report saved with the run."""
        return self._render(result)
