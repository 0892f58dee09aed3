"""An agent and the loop that runs it.

The loop asks the model, runs the tools it calls (concurrently), and repeats until the
model gives a final answer that parses and validates. Every exit is a typed outcome.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from alphadesk.agent import events as ev
from alphadesk.agent.calls import CallLog, TurnPlan, plan_turn
from alphadesk.agent.context import RunContext, RunScope
from alphadesk.agent.errors import ModelRetry, describe_invalid
from alphadesk.agent.output import (
    AnswerMode,
    OutputInvalid,
    format_instructions,
    output_schema,
    parse_output,
    retry_prompt,
)
from alphadesk.agent.result import (
    Completed,
    MaxTurnsReached,
    ModelFailed,
    NoValidOutput,
    Outcome,
    RunResult,
    ToolCrashed,
    ToolRetriesExhausted,
    UsageLimitReached,
)
from alphadesk.agent.tools import Tool, render_result
from alphadesk.agent.toolsets import Toolset
from alphadesk.agent.usage import LimitExceeded, limit_exceeded, remaining_time
from alphadesk.llm.attempts import FailedAttempt, reporting_attempts
from alphadesk.llm.base import Model, ModelError, RequestRejected, stream_response
from alphadesk.llm.messages import (
    AssistantMessage,
    ContentPart,
    Message,
    ModelResponse,
    RequestSettings,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
    text_of,
)

__all__ = ["Agent", "AgentRun", "OutputValidator"]

DepsT = TypeVar("DepsT")
OutputT = TypeVar("OutputT")

OutputValidator = Callable[[RunContext[Any], Any], Any | Awaitable[Any]]

FORCE_FINAL = (
    "You have reached the turn limit. Do not call more tools: give your final answer now "
    "from the information gathered so far."
)
_DISPLAY_LIMIT = 2_000
_QUOTED_ANSWER = 400  # how much of a rejected answer the history keeps
DEFAULT_MAX_TOKENS = 1_024
DEFAULT_MAX_TOOL_CALLS = 8


@dataclass(frozen=True)
class Agent(Generic[DepsT, OutputT]):
    """What an agent is: instructions, tools, an output type and its budgets.

    ``max_tokens`` caps every answer of the agent (a rambling model cannot spend minutes
    on one); ``max_tool_calls`` caps the distinct tool calls one turn runs.
    """

    name: str
    instructions: str
    output_type: type[OutputT]
    toolset: Toolset = field(default_factory=lambda: Toolset("none"))
    output_validators: tuple[OutputValidator, ...] = ()
    max_turns: int = 10
    output_retries: int = 2
    max_tokens: int = DEFAULT_MAX_TOKENS
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS
    settings: RequestSettings = field(default_factory=RequestSettings)
    stream: bool = False  # emit the answer's text as TextDelta events while it arrives

    def iter(
        self,
        model: Model,
        prompt: str | list[ContentPart] | UserMessage,
        *,
        deps: DepsT,
        scope: RunScope,
    ) -> AgentRun[DepsT, OutputT]:
        """A run of this agent in ``scope``, ready to be awaited (``await run.result()``) or
        iterated for its events (``async for event in run``).

        ``prompt`` is the task: its text, or a user message (which may carry the structured
        task its text was rendered from, for a model that reads data rather than text).
        """
        return AgentRun(self, model, prompt, deps, scope)

    async def run(
        self,
        model: Model,
        prompt: str | list[ContentPart] | UserMessage,
        *,
        deps: DepsT,
        scope: RunScope,
    ) -> RunResult[OutputT]:
        """Run to the end and return the result (the outcome says how it ended)."""
        return await self.iter(model, prompt, deps=deps, scope=scope).result()


# The closed set of things a model turn can lead to.
@dataclass(frozen=True)
class _RunTools:
    plan: TurnPlan


@dataclass(frozen=True)
class _AskAgain:
    """The server refused the request; the model has been told why and is asked again."""


@dataclass(frozen=True)
class _Final:
    text: str | None


@dataclass(frozen=True)
class _Stop:
    outcome: Outcome


_Step = _RunTools | _Final | _Stop | _AskAgain


class AgentRun(Generic[DepsT, OutputT]):
    """One execution of an agent. Await ``result()``, or iterate to receive events live."""

    def __init__(
        self,
        agent: Agent[DepsT, OutputT],
        model: Model,
        prompt: str | list[ContentPart] | UserMessage,
        deps: DepsT,
        scope: RunScope,
    ) -> None:
        self.agent, self.model, self.limits = agent, model, scope.limits
        self._listeners: list[ev.EventSink] = [scope.on_event] if scope.on_event else []
        self.ctx = RunContext(
            deps=deps,
            as_of=scope.as_of,
            run_id=scope.run_id,
            agent=agent.name,
            ledger=scope.ledger,
            emit=self._emit,
        )
        task = prompt if isinstance(prompt, UserMessage) else UserMessage(content=prompt)
        self.messages: list[Message] = [SystemMessage(content=self._system_prompt()), task]
        self._request_settings = self._settings()  # the same for every request of the run
        self.usage = Usage()
        self.tool_calls = 0
        self._tool_retries: Counter[str] = Counter()
        self._calls = CallLog()
        self._rejected = False
        self._started = datetime.now(UTC)
        self._begun = time.monotonic()
        self._result: RunResult[OutputT] | None = None

    # -- public ---------------------------------------------------------------------------

    async def result(self) -> RunResult[OutputT]:
        """Run to the end (once) and return the result."""
        if self._result is None:
            self._result = self._finish(await self._loop())
        return self._result

    async def __aiter__(self) -> AsyncIterator[ev.BaseEvent]:
        queue: asyncio.Queue[ev.BaseEvent | None] = asyncio.Queue()
        self._listeners.append(queue.put_nowait)
        task = asyncio.create_task(self.result())
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task  # re-raise a bug in the loop instead of swallowing it
        finally:
            task.cancel()

    # -- the loop ---------------------------------------------------------------------------

    async def _loop(self) -> Outcome:
        """Ask, act, repeat: one short loop over a closed set of steps."""
        agent = self.agent
        self._emit(
            ev.RunStarted(
                **self._ids(),
                model=self.model.name,
                as_of=self.ctx.as_of,
                tools=agent.toolset.names,
            )
        )
        self._begun = time.monotonic()
        turn, output_attempts = 0, 0
        while True:
            forced = turn >= agent.max_turns
            step = await self._ask(turn, forced)
            if isinstance(step, _Stop):
                return step.outcome
            if isinstance(step, _AskAgain):
                continue
            if isinstance(step, _RunTools) and not forced:
                crash = await self._run_tools(step.plan)
                if crash is not None:
                    return crash
                turn += 1
                continue
            text = step.text if isinstance(step, _Final) else None
            try:
                output = await self._accept(text)
            except OutputInvalid as exc:
                if forced:
                    return MaxTurnsReached(agent.max_turns, text, str(exc))
                output_attempts += 1
                if output_attempts > agent.output_retries:
                    return NoValidOutput(text, str(exc))
                self._emit(ev.OutputRetry(**self._ids(), attempt=output_attempts, error=str(exc)))
                self._quote_failed_answer()
                self.messages.append(UserMessage(content=retry_prompt(exc, self._answer_mode())))
                continue
            self._emit(ev.FinalOutput(**self._ids(), output=_jsonable(output)))
            return Completed(output, forced_final=forced)

    def _record_failed(self, attempt: FailedAttempt) -> None:
        """A failed or timed-out attempt of this agent's request: in the ledger too."""
        self.ctx.ledger.record_failed(self.agent.name, attempt)

    async def _ask(self, turn: int, forced: bool) -> _Step:
        """One model request, within the budgets."""
        limit = limit_exceeded(self.limits, self.ctx.ledger, before_request=True)
        if limit is not None:
            return _Stop(UsageLimitReached(limit))
        if forced:
            self.messages.append(UserMessage(content=FORCE_FINAL))
        tools = [] if forced else self.agent.toolset.specs
        self._emit(
            ev.ModelRequested(
                **self._ids(), turn=turn, messages=len(self.messages), forced_final=forced
            )
        )
        try:
            async with asyncio.timeout(self._time_left()):
                with reporting_attempts(self._record_failed):
                    response = await self._respond(tools, turn)
        except TimeoutError:
            return _Stop(self._out_of_time())
        except RequestRejected as exc:
            return self._rejection(exc)
        except ModelError as exc:
            return _Stop(ModelFailed(type(exc).__name__, str(exc)))
        self.ctx.ledger.record(self.agent.name, response)
        self.usage = self.usage + (Usage() if response.cached else response.usage)
        message = response.message
        plan = None
        if message.tool_calls and not forced:
            plan = plan_turn(message.tool_calls, self._calls, self.agent.max_tool_calls)
            message = message.model_copy(update={"tool_calls": plan.kept})
        self.messages.append(message)
        self._emit(
            ev.ModelResponded(
                **self._ids(),
                turn=turn,
                model=response.model,
                text=message.content,
                tool_calls=[c.name for c in message.tool_calls],
                usage=response.usage,
                latency_s=response.latency_s,
                cached=response.cached,
            )
        )
        self._emit(
            ev.UsageUpdated(**self._ids(), agent_usage=self.usage, run_usage=self.ctx.ledger.totals)
        )
        return _RunTools(plan) if plan is not None else _Final(message.content)

    def _rejection(self, exc: RequestRejected) -> _Step:
        """The server refused the request as sent: tell the model once, then fail typed."""
        if self._rejected:
            return _Stop(ModelFailed(type(exc).__name__, str(exc)))
        self._rejected = True
        self._emit(ev.OutputRetry(**self._ids(), attempt=1, error=f"request refused: {exc.reason}"))
        self.messages.append(
            UserMessage(
                content=(
                    f"The server refused the last request: {exc.reason[:300]}\n"
                    "Answer again more briefly; call tools only with short, valid JSON arguments."
                )
            )
        )
        return _AskAgain()

    async def _respond(self, tools: list[ToolSpec], turn: int) -> ModelResponse:
        """The model's response; streamed as TextDelta events when the agent streams."""
        if not self.agent.stream:
            return await self.model.request(self.messages, tools, self._request_settings)
        response: ModelResponse | None = None
        settings = self._request_settings
        async for item in stream_response(self.model, self.messages, tools, settings):
            if isinstance(item, ModelResponse):
                response = item
            elif item:
                self._emit(ev.TextDelta(**self._ids(), turn=turn, text=item))
        if response is None:
            raise ModelError(f"{self.model.name} ended its stream without a response")
        return response

    async def _run_tools(self, plan: TurnPlan) -> Outcome | None:
        """Run one turn's new tool calls concurrently; answer every kept call in the model's
        order (a repeat points at its earlier result, invalid arguments say what was wrong)."""
        answers: dict[str, tuple[ToolMessage, Outcome | None]] = {}
        for call in plan.kept:
            if call.id in plan.repeated:
                earlier = plan.repeated[call.id]
                text = f"Already called with the same arguments (call {earlier}); result above."
                answers[call.id] = (_reply(call, text), None)
        runs = [c for c in plan.kept if c.id not in answers]
        try:
            async with asyncio.timeout(self._time_left()):
                ran = await asyncio.gather(
                    *(self._call_tool(c, plan.invalid.get(c.id)) for c in runs)
                )
        except TimeoutError:
            return self._out_of_time()
        answers.update(zip((c.id for c in runs), ran, strict=True))
        self.tool_calls += len(plan.run)
        for call in plan.kept:
            self.messages.append(answers[call.id][0])
        dropped = plan.note(self.agent.max_tool_calls)
        if dropped is not None:
            self.messages.append(UserMessage(content=dropped))
        return next((outcome for _, outcome in answers.values() if outcome is not None), None)

    async def _call_tool(
        self, call: ToolCall, invalid: str | None = None
    ) -> tuple[ToolMessage, Outcome | None]:
        """Run one tool call. Fixable errors go back to the model; others end the run."""
        ids = {**self._ids(), "call_id": call.id, "tool": call.name}
        self._emit(ev.ToolStarted(**ids, arguments=call.arguments))
        started = asyncio.get_running_loop().time()
        tool = self.agent.toolset.get(call.name)
        try:
            if invalid is not None:
                raise ModelRetry(f"Invalid arguments for {call.name}: {invalid}; not called.")
            if tool is None:
                raise ModelRetry(
                    f"Unknown tool {call.name!r}. Available: {self.agent.toolset.names}"
                )
            kwargs = _validated(tool, call)
            ctx = replace(
                self.ctx,
                tool_name=tool.name,
                tool_call_id=call.id,
                retry=self._tool_retries[tool.name],
            )
            value = await tool.call(ctx, kwargs)
        except ModelRetry as exc:
            return self._retry_tool(call, tool, str(exc), ids)
        except Exception as exc:  # a tool failure is reported, never lost
            error = f"{type(exc).__name__}: {exc}"
            report = tool is not None and tool.report_errors
            self._emit(ev.ToolFailed(**ids, error=error, retry=report))
            reply = ToolMessage(tool_call_id=call.id, name=call.name, content=f"Error: {error}")
            return reply, None if report else ToolCrashed(call.name, error)
        content = render_result(value)
        seconds = asyncio.get_running_loop().time() - started
        images = 0 if isinstance(content, str) else len(content) - 1
        self._emit(
            ev.ToolFinished(
                **ids,
                result=text_of(content)[:_DISPLAY_LIMIT],
                images=images,
                seconds=round(seconds, 4),
            )
        )
        return ToolMessage(tool_call_id=call.id, name=call.name, content=content), None

    def _retry_tool(
        self, call: ToolCall, tool: Tool | None, error: str, ids: dict[str, Any]
    ) -> tuple[ToolMessage, Outcome | None]:
        self._tool_retries[call.name] += 1
        budget = tool.retries if tool is not None else self.agent.output_retries
        exhausted = self._tool_retries[call.name] > budget
        self._emit(ev.ToolFailed(**ids, error=error, retry=not exhausted))
        reply = ToolMessage(
            tool_call_id=call.id, name=call.name, content=f"{error}\nFix the call and try again."
        )
        return reply, ToolRetriesExhausted(call.name, error) if exhausted else None

    async def _accept(self, text: str | None) -> OutputT:
        """Parse and validate the final answer; raises OutputInvalid with what to fix."""
        output = parse_output(text, self.agent.output_type)
        for validator in self.agent.output_validators:
            try:
                checked = validator(self.ctx, output)
                output = await checked if inspect.isawaitable(checked) else checked
            except ModelRetry as exc:
                raise OutputInvalid(str(exc)) from exc
            except ValidationError as exc:
                raise OutputInvalid(describe_invalid(exc)) from exc
        return output

    # -- helpers ----------------------------------------------------------------------------

    def _answer_mode(self) -> AnswerMode:
        """How the final answer is asked for: native structured output, a fenced JSON block
        in the text, or free text."""
        if output_schema(self.agent.output_type) is None:
            return "text"
        return "native" if self.model.supports("json_schema") else "fenced"

    def _system_prompt(self) -> str:
        instructions = format_instructions(self.agent.output_type)
        if instructions is None or self._answer_mode() == "native":
            return self.agent.instructions
        return f"{self.agent.instructions}\n\n{instructions}"

    def _settings(self) -> RequestSettings:
        update: dict[str, Any] = {"max_tokens": self.agent.max_tokens}
        if self._answer_mode() == "native":
            update["output_schema"] = output_schema(self.agent.output_type)
        return self.agent.settings.model_copy(update=update)

    def _quote_failed_answer(self) -> None:
        """Keep only the start of a rejected answer in the history: re-sending it whole
        would grow every retry's request by the whole failed answer."""
        last = self.messages[-1]
        text = last.content if isinstance(last, AssistantMessage) else None
        if text and len(text) > _QUOTED_ANSWER:
            cut = f"{text[:_QUOTED_ANSWER]}… [{len(text) - _QUOTED_ANSWER:,} more characters cut]"
            self.messages[-1] = last.model_copy(update={"content": cut})

    def _time_left(self) -> float | None:
        """Seconds until the run's or this agent's wall-time budget ends (None: no budget)."""
        budgets = [remaining_time(self.limits, self.ctx.ledger)]
        if self.limits.agent_wall_time_s is not None:
            spent = time.monotonic() - self._begun
            budgets.append(max(self.limits.agent_wall_time_s - spent, 0.0))
        given = [b for b in budgets if b is not None]
        return min(given) if given else None

    def _out_of_time(self) -> UsageLimitReached:
        agent_budget = self.limits.agent_wall_time_s
        spent = round(time.monotonic() - self._begun, 3)
        if agent_budget is not None and spent >= agent_budget:
            return UsageLimitReached(LimitExceeded("agent_wall_time_s", agent_budget, spent))
        allowed = self.limits.wall_time_s or 0.0
        return UsageLimitReached(
            LimitExceeded("wall_time_s", allowed, round(self.ctx.ledger.elapsed_s, 3))
        )

    def _ids(self) -> dict[str, str]:
        return {"run_id": self.ctx.run_id, "agent": self.agent.name}

    def _emit(self, event: ev.BaseEvent) -> None:
        for listener in self._listeners:
            listener(event)

    def _finish(self, outcome: Outcome) -> RunResult[OutputT]:
        self._emit(ev.RunFinished(**self._ids(), outcome=outcome.kind, reason=outcome.reason))
        return RunResult(
            run_id=self.ctx.run_id,
            agent=self.agent.name,
            model=self.model.name,
            outcome=outcome,
            messages=self.messages,
            usage=self.usage,
            tool_calls=self.tool_calls,
            started_at=self._started,
            finished_at=datetime.now(UTC),
        )


def _validated(tool: Tool, call: ToolCall) -> dict[str, Any]:
    try:
        return tool.validate(call.arguments)
    except (ValidationError, ValueError) as exc:
        raise ModelRetry(f"Invalid arguments for {tool.name}:\n{describe_invalid(exc)}") from exc


def _reply(call: ToolCall, text: str) -> ToolMessage:
    return ToolMessage(tool_call_id=call.id, name=call.name, content=text)


def _jsonable(output: Any) -> Any:
    dump = getattr(output, "model_dump", None)
    return dump(mode="json") if callable(dump) else output
