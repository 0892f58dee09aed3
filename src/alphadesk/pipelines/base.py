"""What a pipeline is: one protocol every pipeline (the CSP pipeline, the trading desk, the
strategy lab, the assistant, the screen) follows, so the runner records, resumes, replays and
runs each of them durably the same way.

A pipeline is a typed request, a graph that starts from an empty state and ends with a
``result``, the graph's node functions bound to one run with their dependencies, a typed
result and a Markdown report of it. The request reaches the nodes one way: bound into them
with their frozen dependencies by ``nodes(request, run)``, never in the graph's state. Nodes
read and write the pipeline's typed state; the graph's channels (and so its checkpoints and
a durable workflow's history) hold it as JSON, converted at each node by the pipeline's
``StateCodec``. The graph's topology is a pure function of the request, so the same graph
runs here (``PipelineRunner``) or as a durable workflow whose nodes run on workers. Route
functions are ``async``: a sync one would run on a thread pool, which a workflow's event
loop does not have.

Compiling a graph costs more than a whole offline decision, so every pipeline names what of
a request its topology depends on (``graph_shape(request)``, ``()`` when nothing): its graph
is compiled once per shape and shared by every run of that shape. The shared graph's nodes
find the run's own functions in the run's config, and each run sets its checkpointer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from alphadesk.agent import UsageLedger
from alphadesk.agent.events import EventSink
from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.kept import Kept
from alphadesk.llm.base import Model
from alphadesk.llm.journal import Journal
from alphadesk.pipelines.models import PipelineResult
from alphadesk.store.runs import RunConflict

if TYPE_CHECKING:  # the graph library is imported by the runs that build a graph
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.graph import StateGraph
    from langgraph.graph.state import CompiledStateGraph

    CompiledGraph = CompiledStateGraph[Any, Any, Any, Any]

__all__ = [
    "PIPELINES",
    "CheckpointIncompatible",
    "DirectAnswer",
    "NodeFunction",
    "Nodes",
    "Pipeline",
    "PipelineRun",
    "StateCodec",
    "build_pipeline",
    "compiled_graph",
    "pipeline_class",
    "run_graph",
]

# A request is any model: most are a PipelineRequest (a symbol at an instant), a question
# to the assistant is not.
RequestT = TypeVar("RequestT", bound=BaseModel)
ResultT = TypeVar("ResultT", bound=PipelineResult)
StateT = TypeVar("StateT", bound=Mapping[str, Any])

# A graph node: the state in, a JSON update out.
NodeFunction = Callable[..., Awaitable[dict[str, Any]]]
# Each node's function by node name: a run's bound functions when the graph runs here, a
# dispatch to a worker when it runs as a durable workflow.
Nodes = Callable[[str], NodeFunction]

_NODES = "alphadesk_nodes"  # the run's node functions in its config (never checkpointed)
# Channels checkpoints once had that no graph reads any more: the request (now bound into
# the nodes) is left behind harmlessly by a run checkpointed before it left the state.
_RETIRED = frozenset({"request"})
# Compiled graphs by pipeline class and shape, shared by the process: compiling is most of a
# rules decision's cost, and a graph's nodes find the run's functions in its config, so a
# graph holds nothing of any run.
_COMPILED: Kept[tuple[type, Hashable], CompiledGraph] = Kept(32)

# Every pipeline by the kind its runs are recorded under; imported only when used.
PIPELINES: dict[str, str] = {
    "algo": "alphadesk.pipelines.algo.pipeline:StrategyLab",
    "assistant": "alphadesk.pipelines.assistant.pipeline:AssistantPipeline",
    "csp": "alphadesk.pipelines.csp.pipeline:CspPipeline",
    "desk": "alphadesk.pipelines.desk.pipeline:TradingDesk",
    "fund": "alphadesk.pipelines.fund.pipeline:Fund",
    "screen": "alphadesk.pipelines.screen.pipeline:ScreenPipeline",
}


class CheckpointIncompatible(RunConflict):
    """A run's checkpoints hold a graph state this version cannot read (written before the
    state changed shape): it cannot be resumed, only run again."""

    def __init__(self, run_id: str, problem: str) -> None:
        super().__init__(
            f"run {run_id} cannot be resumed: its checkpoint was written by an earlier version "
            f"of alphadesk ({problem}); run the same request again without --resume"
        )


class StateCodec(Generic[StateT]):
    """A graph's state as its nodes read and write it (``StateT``, a typed dict of the
    pipeline's models) and as its channels keep it (JSON, what a checkpoint stores and a
    durable workflow sends to its workers). The one place the two meet."""

    def __init__(self, state: type[StateT]) -> None:
        self._adapter: TypeAdapter[StateT] = TypeAdapter(state)

    def load(self, state: Mapping[str, Any]) -> StateT:
        """The typed state of the graph's JSON ``state``."""
        return self._adapter.validate_python(state)

    def dump(self, update: StateT) -> dict[str, Any]:
        """A node's typed ``update`` as the graph's JSON."""
        dumped: dict[str, Any] = self._adapter.dump_python(update, mode="json")
        return dumped

    def node(self, function: Callable[[StateT], Awaitable[StateT]]) -> NodeFunction:
        """``function`` as a graph node: the JSON state in, a JSON update out."""

        async def node(state: Mapping[str, Any]) -> dict[str, Any]:
            return self.dump(await function(self.load(state)))

        return node

    def route(self, function: Callable[[StateT], str]) -> Callable[..., Awaitable[str]]:
        """``function`` as a graph route over the JSON state (``async``: see above)."""

        async def route(state: Mapping[str, Any]) -> str:
            return function(self.load(state))

        return route


@dataclass(frozen=True)
class PipelineRun:
    """One recorded run as the runner hands it to a pipeline: where its events, model calls
    and files go, where its graph checkpoints (to resume after an interruption), and
    whether its report wants charts (drawn once, at the end, into ``run_dir``). Its
    ``journal`` holds the model calls already made, so a resumed step replays them."""

    run_id: str
    ledger: UsageLedger = field(default_factory=UsageLedger)
    emit: EventSink = field(default=lambda _event: None)
    run_dir: Path | None = None
    checkpointer: BaseCheckpointSaver[Any] | None = None
    resume: bool = False
    interrupt_after: list[str] | None = None
    charts: bool = False
    journal: Journal | None = None

    def model(self, model: Model) -> Model:
        """``model`` as this run uses it: through its journal when it has one."""
        return model if self.journal is None else self.journal.wrap(model)

    async def invoke(
        self, graph: CompiledGraph, initial: Mapping[str, Any], nodes: Nodes
    ) -> dict[str, Any]:
        """Run ``graph`` from ``initial`` with this run's ``nodes``, or on from its last
        checkpoint when resuming.

        The thread is the run id, so a resumed run continues its own checkpoints (a run
        interrupted before its first checkpoint starts over); a stop at ``interrupt_after``
        returns the state reached so far.
        """
        if self.checkpointer is not None:
            graph = graph.copy({"checkpointer": self.checkpointer})
        config: RunnableConfig = {"configurable": {"thread_id": self.run_id, _NODES: nodes}}
        resume = self.resume and self.checkpointer is not None
        if resume:
            saved = await graph.aget_state(config)
            resume = bool(saved.values)
            if resume:
                await self._check_resumable(graph, config)
        state = await graph.ainvoke(
            None if resume else dict(initial), config, interrupt_after=self.interrupt_after
        )
        return dict(state)

    async def _check_resumable(self, graph: CompiledGraph, config: RunnableConfig) -> None:
        """Raise ``CheckpointIncompatible`` unless this graph can go on from the run's last
        checkpoint: every channel it holds is one of the graph's, and its state reads as
        the graph's typed state."""
        assert self.checkpointer is not None
        saved = await self.checkpointer.aget_tuple(config)
        values: dict[str, Any] = dict(saved.checkpoint["channel_values"]) if saved else {}
        unknown = sorted(set(values) - set(graph.channels) - _RETIRED)
        if unknown:
            raise CheckpointIncompatible(self.run_id, f"state keys {unknown} are gone")
        schema = graph.builder.state_schema
        state = {key: value for key, value in values.items() if key in schema.__annotations__}
        try:
            StateCodec(schema).load(state)
        except ValidationError as exc:
            fields = sorted({".".join(map(str, e["loc"][:1])) for e in exc.errors()})
            raise CheckpointIncompatible(self.run_id, f"state keys {fields} changed") from None


# A request a pipeline answers without its graph (``Pipeline.direct``), within a run.
DirectAnswer = Callable[[PipelineRun], Awaitable[ResultT]]


class Pipeline(Protocol[RequestT, ResultT]):
    """What every pipeline gives the runner (and a durable worker)."""

    kind: str
    request_type: type[RequestT]
    result_type: type[ResultT]
    market: MarketData

    @property
    def model_label(self) -> str:
        """The models its agents run with, e.g. ``rules``."""
        ...

    def title(self, request: RequestT) -> str:
        """The run's title in the runs table, e.g. ``desk NVDA``."""
        ...

    @staticmethod
    def graph(request: Any, node: Nodes) -> StateGraph[Any]:
        """The graph for ``request``, with ``node(name)`` as the function of each node."""
        ...

    @staticmethod
    def graph_shape(request: Any) -> Hashable:
        """The part of ``request`` its graph depends on (``()`` when none), so that one
        compiled graph serves every request alike in it."""
        ...

    def nodes(self, request: RequestT, run: PipelineRun) -> Nodes:
        """The node functions of one run, bound with their dependencies."""
        ...

    def report(self, result: ResultT) -> str:
        """The Markdown report saved with the run."""
        ...

    # A pipeline may also have ``direct(request) -> DirectAnswer | None``: how it answers
    # a request that needs none of its graph (the assistant's small talk), recorded by
    # the runner as any run is, without building the graph or its checkpoints.


def pipeline_class(kind: str) -> Any:
    """The class of the pipeline of ``kind`` (``csp``, ``desk``...), imported on first use."""
    if kind not in PIPELINES:
        raise ValueError(f"unknown pipeline {kind!r}; the pipelines are {sorted(PIPELINES)}")
    module, name = PIPELINES[kind].split(":")
    return getattr(import_module(module), name)


def build_pipeline(
    kind: str,
    settings: Settings,
    market: MarketData,
    *,
    model: str | None = None,
    models: Mapping[str, Model] | None = None,
) -> Pipeline[Any, Any]:
    """The pipeline of ``kind`` (``csp``, ``desk``...), constructed with its models."""
    pipeline: Pipeline[Any, Any] = pipeline_class(kind)(
        settings, market, model=model, models=models
    )
    return pipeline


async def run_graph(
    pipeline: Pipeline[RequestT, ResultT], request: RequestT, run: PipelineRun
) -> ResultT | None:
    """``pipeline``'s graph for ``request``, run in this process within ``run``; None when
    stopped at ``run.interrupt_after``."""
    graph = compiled_graph(pipeline, request)
    state = await run.invoke(graph, {}, pipeline.nodes(request, run))
    if "result" not in state:
        return None
    return pipeline.result_type.model_validate(state["result"])


def compiled_graph(pipeline: Pipeline[RequestT, Any], request: RequestT) -> CompiledGraph:
    """``pipeline``'s graph for ``request``, compiled with nodes that call the functions of
    the run they are invoked in; shared by every request of the same shape."""
    key = (type(pipeline), pipeline.graph_shape(request))
    graph = _COMPILED.get(key)
    if graph is None:
        graph = pipeline.graph(request, _RunNode).compile()
        _COMPILED.put(key, graph)
    return graph


@dataclass(frozen=True)
class _RunNode:
    """A node of a compiled graph: the function of node ``name`` of the run it is invoked
    in, found in the run's config."""

    name: str

    async def __call__(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        nodes: Nodes = config["configurable"][_NODES]
        return await nodes(self.name)(state)
