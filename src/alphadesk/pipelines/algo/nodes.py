"""The strategy lab's graph nodes: each runs its agents (or the backtests) and returns a
typed state update; the graph keeps the state as JSON (``LAB_STATE``), so every checkpoint
can be stored and resumed. A task's data is JSON, made from the typed state where the task
is built."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict  # pydantic reads a TypedDict of it on Python 3.11

from alphadesk.agents.algo import AlgoAgents, AlgoDeps
from alphadesk.agents.algo.models import (
    FactSheet,
    FailureAnalysis,
    GateDecision,
    ResearchBrief,
    StrategyBatch,
    StrategyVariant,
    TrajectoryReading,
)
from alphadesk.agents.algo.research import DOMAINS
from alphadesk.agents.algo.tasks import (
    AlgoTask,
    FailureTask,
    GateTask,
    LeaderTask,
    StrategistTask,
    SubagentTask,
    SynthesizerTask,
    TrajectoryTask,
)
from alphadesk.agents.algo.templates import TEMPLATES
from alphadesk.agents.spec import AgentSpec
from alphadesk.analytics.fuzzy import parse_goal
from alphadesk.analytics.trajectory import classify_trajectory
from alphadesk.backtest.models import BacktestConfig
from alphadesk.data.base import MarketData
from alphadesk.pipelines.agent_steps import AgentSteps, StepOutcome
from alphadesk.pipelines.algo.backtests import Backtester, Split, backtest_variants
from alphadesk.pipelines.algo.models import (
    AlgoRequest,
    AlgoResult,
    HoldoutRecord,
    IterationRecord,
    TrialBar,
    TrialStats,
    VariantRecord,
)
from alphadesk.pipelines.algo.tracker import ExperimentTracker
from alphadesk.pipelines.algo.trials import trial_refusal, trial_stats, trials_brief
from alphadesk.pipelines.base import NodeFunction, PipelineRun, StateCodec
from alphadesk.pipelines.desk.memory import DeskMemory
from alphadesk.pipelines.events import GateDecided, StepFinished, StepStarted
from alphadesk.pipelines.models import AgentReport, Failure

__all__ = ["LAB_STATE", "LabNodeDeps", "LabNodes", "LabState", "Lesson"]

_RECALL = 3
_LIBRARY = [
    {
        "template": t.name,
        "approach": t.approach,
        "description": t.description,
        "defaults": dict(t.defaults),
        "grid": {k: list(v) for k, v in t.grid.items()},
    }
    for t in TEMPLATES.values()
]


class Lesson(BaseModel):
    """A lesson recalled from memory, with the outcome its writer recorded (as recorded: a
    lesson of the desk's has other figures than one of the lab's)."""

    model_config = ConfigDict(extra="allow")

    lesson: str


class LabState(TypedDict, total=False):
    """Graph state, typed; the graph keeps it as JSON (``LAB_STATE``)."""

    lessons: list[Lesson]
    sheets: list[FactSheet]
    brief: ResearchBrief
    research_round: int
    iteration: int
    batch: list[StrategyVariant]
    current: list[VariantRecord]
    records: Annotated[list[VariantRecord], operator.add]
    iterations: Annotated[list[IterationRecord], operator.add]
    refinements: int
    reports: Annotated[list[AgentReport], operator.add]
    missing: Annotated[list[str], operator.add]
    verdict: Failure  # when a step failed
    budget: str
    holdout: HoldoutRecord  # written after the loop, by the holdout node alone
    result: AlgoResult


LAB_STATE = StateCodec(LabState)


def _json(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


def last_gate(state: LabState) -> dict[str, Any] | None:
    """The gate's last decision as the agents read it: the decision, its reasoning and the
    variants of its iteration."""
    iterations = state.get("iterations", [])
    if not iterations:
        return None
    last = iterations[-1]
    return {
        "decision": last.gate.decision,
        "reasoning": last.gate.reasoning,
        "variants": [r.brief() for r in state.get("records", []) if r.iteration == last.iteration],
    }


def _bookkeeping(steps: Sequence[StepOutcome[Any]]) -> LabState:
    update: LabState = {"missing": [], "reports": []}
    for step in steps:
        update["missing"] += step.missing
        if step.report is not None:
            update["reports"].append(step.report)
        if step.failure is not None and "verdict" not in update:
            update["verdict"] = Failure(stage=step.agent, reason=step.failure)
    return update


@dataclass(frozen=True)
class LabNodeDeps:
    """What the loop's nodes of one run need: the agents, the market as it stood at the end
    of the validation period (sealed: the holdout is out of its reach), the memory of
    lessons (None when off) and whether the run may write to it (never while replaying),
    the backtester with its costs and how many sandboxes run at once, the search and
    validation periods, what the gate asks of the trial figures, the experiment tracker's
    file, the agent steps (models, budgets, ledger and events bound to the run) and the run
    itself."""

    agents: AlgoAgents
    market: MarketData
    memory: DeskMemory | None
    writes_memory: bool
    backtester: Backtester
    config: BacktestConfig
    backtest_concurrency: int
    split: Split
    trial_bar: TrialBar
    tracker_file: Path
    steps: AgentSteps
    run: PipelineRun


@dataclass(frozen=True)
class LabNodes:
    """The loop's nodes (research, develop, backtest, gate), bound to their dependencies.

    ``request`` is the loop's: its ``as_of`` is the end of the validation period, the
    instant every prompt, tool call and memory read of the loop is made at.
    """

    deps: LabNodeDeps
    request: AlgoRequest

    def node(self, name: str) -> NodeFunction:
        """The function of the graph node ``name``."""
        return LAB_STATE.node(getattr(self, name))

    @property
    def memory(self) -> DeskMemory | None:
        """The lessons this run recalls, if its request asks for them."""
        return self.deps.memory if self.request.memory else None

    def _tool_deps(
        self, used: frozenset[str] = frozenset(), verdicts: dict[str, dict[str, Any]] | None = None
    ) -> AlgoDeps:
        return AlgoDeps(
            market=self.deps.market,
            run_dir=self.deps.run.run_dir,
            symbol=self.request.symbol,
            verdicts=verdicts or {},
            used_ids=used,
        )

    async def _run(
        self, spec: AgentSpec[Any, Any], task: AlgoTask, deps: AlgoDeps | None = None
    ) -> StepOutcome[Any]:
        return await self.deps.steps.run(spec, task, deps or self._tool_deps(), self.request)

    # -- research ------------------------------------------------------------------------

    async def research(self, state: LabState) -> LabState:
        request, agents = self.request, self.deps.agents
        round_ = state.get("research_round", 0) + 1
        lessons = state.get("lessons")
        if lessons is None:
            lessons = await self._recall()
        slots = asyncio.Semaphore(request.research_concurrency)

        async def investigate(spec: AgentSpec[Any, Any]) -> StepOutcome[Any]:
            async with slots:
                directive = f"find an edge for: {request.goal}"
                task = SubagentTask(symbol=request.symbol, as_of=request.as_of, directive=directive)
                return await self._run(spec, task)

        found = await asyncio.gather(*(investigate(s) for s in agents.subagents))
        update = _bookkeeping(found) | {"lessons": lessons, "research_round": round_}
        if "verdict" in update:
            return update
        reports = [_json(step.output) for step in found if step.output]
        sheets = await asyncio.gather(
            *(
                self._run(
                    agents.synthesizers[domain],
                    SynthesizerTask(
                        symbol=request.symbol,
                        as_of=request.as_of,
                        domain=domain,
                        reports=[r for r in reports if r["domain"] == domain],
                    ),
                )
                for domain in DOMAINS
            )
        )
        update = _merge(update, _bookkeeping(sheets))
        if "verdict" in update:
            return update
        facts: list[FactSheet] = [step.output for step in sheets if step.output]
        leader = await self._run(
            agents.leader,
            LeaderTask(
                symbol=request.symbol,
                as_of=request.as_of,
                goal=request.goal,
                sheets=[_json(sheet) for sheet in facts],
                feedback=self._feedback(state, lessons),
            ),
        )
        update = _merge(update, _bookkeeping([leader]))
        if leader.output is not None:
            update |= {"sheets": facts, "brief": leader.output}
        return update

    def _feedback(self, state: LabState, lessons: list[Lesson]) -> dict[str, Any] | None:
        last = last_gate(state)
        if last is None and not lessons:
            return None
        tried = sorted({r.approach for r in state.get("records", [])})
        reason = last["reasoning"] if last else None
        shown = [_json(lesson) for lesson in lessons]
        return {"reason": reason, "approaches_tried": tried, "lessons": shown}

    async def _recall(self) -> list[Lesson]:
        memory, request = self.memory, self.request
        if memory is None:
            return []
        recalled = await asyncio.to_thread(
            memory.recall,
            request.symbol,
            f"strategy lab: {request.goal}",
            as_of=request.as_of,
            k=_RECALL,
        )
        return [Lesson.model_validate({"lesson": item.lesson, **item.outcome}) for item in recalled]

    # -- development and backtests -------------------------------------------------------

    async def develop(self, state: LabState) -> LabState:
        request = self.request
        iteration = state.get("iteration", 0) + 1
        tried: dict[str, list[dict[str, Any]]] = {}
        for record in state.get("records", []):
            if record.template:
                tried.setdefault(record.template, []).append(record.parameters)
        used = frozenset(r.variant_id for r in state.get("records", []))
        task = StrategistTask(
            symbol=request.symbol,
            as_of=request.as_of,
            iteration=iteration,
            goal=request.goal,
            n=request.variants,
            brief=_json(state["brief"]),
            last=last_gate(state),
            tried=tried,
            library=_LIBRARY,
        )
        step = await self._run(self.deps.agents.strategist, task, self._tool_deps(used))
        update = _bookkeeping([step]) | {"iteration": iteration}
        if step.output is not None:
            batch: StrategyBatch = step.output
            update["batch"] = batch.variants
        return update

    async def backtest(self, state: LabState) -> LabState:
        request, deps = self.request, self.deps
        variants = state["batch"]
        for variant in variants:
            self._announce(StepStarted, f"backtest {variant.variant_id}", model="sandbox")

        def done(record: VariantRecord) -> None:
            status = "completed" if record.error is None else "failed"
            why = record.error or f"score {record.score:.2f}"
            self._announce(StepFinished, f"backtest {record.variant_id}", status=status, reason=why)

        records = await backtest_variants(
            variants,
            deps.split,
            deps.config,
            parse_goal(request.goal),
            iteration=state["iteration"],
            backtester=deps.backtester,
            on_done=done,
            concurrency=deps.backtest_concurrency,
        )
        run_id = deps.run.run_id
        return {"current": [r.model_copy(update={"run_id": run_id}) for r in records]}

    def _announce(self, kind: type[Any], agent: str, **fields: Any) -> None:
        run = self.deps.run
        run.emit(kind(run_id=run.run_id, agent=agent, symbol=self.request.symbol, **fields))

    # -- the quality gate ----------------------------------------------------------------

    async def gate(self, state: LabState) -> LabState:
        request, agents = self.request, self.deps.agents
        iteration = state["iteration"]
        records, prior = state["current"], state.get("records", [])
        candidate = max(records, key=lambda r: (r.passed, r.score))
        trials = trial_stats(prior + records, candidate)
        refusal = trial_refusal(trials, self.deps.trial_bar) if candidate.passed else None
        figures = trials_brief(trials, self.deps.trial_bar, refusal)
        views = [r.brief() for r in records]
        history = state.get("iterations", [])
        scores = [h.best_score for h in history] + [max(r.score for r in records)]
        analyses = []
        if not candidate.passed or refusal is not None:
            failed = FailureTask(
                symbol=request.symbol,
                as_of=request.as_of,
                iteration=iteration,
                iterations=request.iterations,
                goal=request.goal,
                variants=views,
                history=[_history_line(h, state.get("records", [])) for h in history],
                trials=figures,
            )
            analyses.append(self._run(agents.failure, failed))
        if len(scores) >= 2:
            stats = asdict(classify_trajectory(scores)) | {"scores": scores}
            trajectory = TrajectoryTask(
                symbol=request.symbol, as_of=request.as_of, trajectory=stats
            )
            analyses.append(self._run(agents.trajectory, trajectory))
        done = await asyncio.gather(*analyses)
        update = _bookkeeping(done)
        if "verdict" in update:
            return update
        failure = next((s.output for s in done if isinstance(s.output, FailureAnalysis)), None)
        reading = next((s.output for s in done if isinstance(s.output, TrajectoryReading)), None)
        task = GateTask(
            symbol=request.symbol,
            as_of=request.as_of,
            iteration=iteration,
            iterations=request.iterations,
            goal=request.goal,
            variants=views,
            failure=failure.model_dump(mode="json") if failure else None,
            trajectory=reading.model_dump(mode="json") if reading else None,
            trials=figures,
            refinements=state.get("refinements", 0),
        )
        deps = self._tool_deps(verdicts=_verdicts(records, candidate, refusal))
        step = await self._run(agents.gate, task, deps)
        update = _merge(update, _bookkeeping([step]))
        if step.output is None:
            return update
        return update | self._decided(state, records, step.output, (failure, reading), trials)

    def _decided(
        self,
        state: LabState,
        records: list[VariantRecord],
        gate: GateDecision,
        analyses: tuple[FailureAnalysis | None, TrajectoryReading | None],
        trials: TrialStats,
    ) -> LabState:
        request, run = self.request, self.deps.run
        iteration = state["iteration"]
        records = [r.model_copy(update={"decision": gate.decision}) for r in records]
        best = max(records, key=lambda r: (r.passed, r.score))
        ExperimentTracker(self.deps.tracker_file).append(records, trials)
        entry = IterationRecord(
            iteration=iteration,
            research_round=state.get("research_round", 1),
            variants=[r.variant_id for r in records],
            best_variant=best.variant_id,
            best_score=best.score,
            gate=gate,
            failure=analyses[0],
            trajectory=analyses[1],
            trials=trials,
        )
        self._remember(best, gate)
        run.emit(
            GateDecided(
                run_id=run.run_id,
                agent="quality_gate",
                symbol=request.symbol,
                iteration=iteration,
                decision=gate.decision,
                best_variant=best.variant_id,
                best_score=best.score,
                reasoning=gate.reasoning,
            )
        )
        update: LabState = {
            "records": records,
            "iterations": [entry],
            "refinements": state.get("refinements", 0) + (gate.decision == "REFINE"),
        }
        if gate.decision not in ("SUCCESS", "ABANDON"):
            budget = self._budget(iteration)
            if budget:
                update["budget"] = budget
        return update

    def _budget(self, iteration: int) -> str | None:
        request = self.request
        if iteration >= request.iterations:
            return f"the iteration limit ({request.iterations}) was reached"
        spent = self.deps.run.ledger.totals.cost_usd
        if request.max_cost_usd is not None and spent >= request.max_cost_usd:
            return f"the cost limit (${request.max_cost_usd:g}) was reached (${spent:.4f} spent)"
        return None

    def _remember(self, best: VariantRecord, gate: GateDecision) -> None:
        memory, request = self.memory, self.request
        if memory is None or not self.deps.writes_memory:
            return
        oos = best.out_of_sample.score if best.out_of_sample else 0.0
        memory.remember(
            symbol=request.symbol,
            situation=f"strategy lab: {request.goal}",
            lesson=f"{best.name} ({best.approach}) scored {best.in_sample.score:.2f} in-sample "
            f"and {oos:.2f} out-of-sample; the gate said {gate.decision}: {gate.reasoning}"[:600],
            outcome={
                "decision": gate.decision,
                "score": best.score,
                "template": best.template,
                "approach": best.approach,
                "parameters": best.parameters,
            },
            decided_at=request.as_of,
            written_at=request.as_of,
            run_id=f"{self.deps.run.run_id}:{best.variant_id}",
        )


def _merge(first: LabState, second: LabState) -> LabState:
    merged: LabState = {**first}
    merged["missing"] = first.get("missing", []) + second.get("missing", [])
    merged["reports"] = first.get("reports", []) + second.get("reports", [])
    if "verdict" not in merged and "verdict" in second:
        merged["verdict"] = second["verdict"]
    return merged


def _verdicts(
    records: list[VariantRecord], candidate: VariantRecord, refusal: str | None
) -> dict[str, dict[str, Any]]:
    """Each variant's verdict from the numbers, which the gate's decision is checked against.

    The trial figures are of the candidate (the iteration's best); another variant that met
    the goal is refused for SUCCESS, since no figure speaks for it.
    """
    others = f"the trial figures were computed for {candidate.variant_id}, the best variant"
    return {
        r.variant_id: {
            "passed_in_sample": r.in_sample.passed,
            "passed_out_of_sample": bool(r.out_of_sample and r.out_of_sample.passed),
            "score_in_sample": r.in_sample.score,
            "score_out_of_sample": r.out_of_sample.score if r.out_of_sample else 0.0,
            "trials_refusal": refusal if r.variant_id == candidate.variant_id else others,
        }
        for r in records
    }


def _history_line(entry: IterationRecord, records: list[VariantRecord]) -> dict[str, Any]:
    """An earlier iteration as the failure analyst reads it."""
    return {
        "iteration": entry.iteration,
        "decision": entry.gate.decision,
        "best_score": entry.best_score,
        "approaches": sorted({r.approach for r in records if r.iteration == entry.iteration}),
    }
