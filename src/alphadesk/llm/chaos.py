"""``ChaosModel``: any model, failing a seeded share of its calls the ways real providers do.

Each call fails with probability ``failure_rate``; the failure is drawn from the kinds real
providers show: rate limits, timeouts, server errors and dropped connections (raised as the
engine's typed ``ModelUnavailable`` subclasses), and answers that are broken (JSON cut
short, invalid JSON, tool calls with invalid arguments or to tools that do not exist, an
empty answer). The same seed gives the same failures for the same sequence of calls, so a
failing run can be replayed; ``injected`` lists what was done to each call.

A broken answer is one a model recovers from: when asked again after it, the inner model
sees the conversation without the broken turn (and the error it drew), as a model that
simply tries again would, so the inner model need not understand its own mistakes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

from alphadesk.llm.base import (
    Model,
    ModelError,
    ProviderConnectionError,
    ProviderServerError,
    ProviderTimeout,
    RateLimited,
)
from alphadesk.llm.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    RequestSettings,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from alphadesk.llm.wrapper import ModelWrapper

__all__ = ["FAILURES", "TRANSIENT", "ChaosModel", "Injected"]

TRANSIENT = ("rate_limit", "timeout", "server_error", "connection_reset")
BROKEN = (
    "truncated_json",
    "invalid_json",
    "invalid_tool_arguments",
    "unknown_tool",
    "empty_answer",
)
FAILURES = TRANSIENT + BROKEN


@dataclass(frozen=True)
class Injected:
    """What ChaosModel did to one call: ``failure`` is None when it let the call through."""

    call: int
    failure: str | None


class ChaosModel(ModelWrapper):
    """``inner`` with a seeded share ``failure_rate`` of its calls failing (see module)."""

    def __init__(
        self,
        inner: Model,
        failure_rate: float = 0.3,
        *,
        seed: int | None = None,
        failures: Sequence[str] = FAILURES,
    ) -> None:
        if not 0.0 <= failure_rate <= 1.0:
            raise ValueError(f"failure_rate must be within [0, 1], got {failure_rate}")
        unknown = set(failures) - set(FAILURES)
        if unknown or not failures:
            raise ValueError(f"unknown failures {sorted(unknown)}; choose from {FAILURES}")
        super().__init__(inner)
        self.failure_rate = failure_rate
        self.failures = tuple(failures)
        self._random = random.Random(seed)
        self._broken_ids: set[str] = set()  # tool call ids of broken tool-call turns
        self._broken_texts: set[str] = set()  # final answers that were broken
        self.injected: list[Injected] = []

    def __repr__(self) -> str:
        return f"ChaosModel({self.inner!r}, failure_rate={self.failure_rate})"

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        call = len(self.injected)
        failure = self._draw()
        self.injected.append(Injected(call, failure))
        if failure in TRANSIENT:
            raise _transient(failure, self.name, call)
        response = await self.inner.request(self._clean(messages), tools, settings)
        if failure is None:
            return response
        return response.model_copy(update={"message": self._break(failure, response.message)})

    @property
    def failed(self) -> int:
        return sum(i.failure is not None for i in self.injected)

    # -- injecting ------------------------------------------------------------------------

    def _draw(self) -> str | None:
        if self._random.random() >= self.failure_rate:
            return None
        return self._random.choice(self.failures)

    def _break(self, failure: str, message: AssistantMessage) -> AssistantMessage:
        calls = message.tool_calls
        if failure == "empty_answer":
            broken = AssistantMessage(content="")
        elif failure in ("invalid_tool_arguments", "unknown_tool") or (
            calls and failure == "truncated_json"
        ):
            broken = AssistantMessage(
                content=message.content, tool_calls=self._bad_calls(failure, calls)
            )
        elif failure == "truncated_json":
            text = message.content or '{"answer": "x"}'
            broken = AssistantMessage(content=text[: max(1, len(text) // 2)])
        else:  # invalid_json
            broken = AssistantMessage(content='```json\n{"answer": ,, not json}\n```')
        if broken.tool_calls:
            self._broken_ids |= {c.id for c in broken.tool_calls}
        else:
            self._broken_texts.add(broken.content or "")
        return broken

    def _bad_calls(self, failure: str, calls: Sequence[ToolCall]) -> list[ToolCall]:
        """One broken call in place of the turn's calls (as a model's bad turn usually is)."""
        call_id = f"chaos_{len(self.injected)}"
        first = calls[0] if calls else ToolCall(id="", name="final_answer", arguments="{}")
        if failure == "unknown_tool":
            return [ToolCall(id=call_id, name="get_account_secrets", arguments="{}")]
        if failure == "truncated_json":
            return [ToolCall(id=call_id, name=first.name, arguments=first.arguments[:-1] or "{")]
        arguments = json.dumps({"symbol": 12345, "no_such_argument": [None]})
        return [ToolCall(id=call_id, name=first.name, arguments=arguments)]

    # -- recovering -----------------------------------------------------------------------

    def _clean(self, messages: Sequence[Message]) -> list[Message]:
        """The conversation without the broken turns and what answered them."""
        kept: list[Message] = []
        skip_feedback = False
        for message in messages:
            if isinstance(message, AssistantMessage):
                skip_feedback = False
                if message.tool_calls and {c.id for c in message.tool_calls} <= self._broken_ids:
                    continue
                if not message.tool_calls and (message.content or "") in self._broken_texts:
                    skip_feedback = True
                    continue
            elif isinstance(message, ToolMessage) and message.tool_call_id in self._broken_ids:
                continue
            elif isinstance(message, UserMessage) and skip_feedback:
                skip_feedback = False
                continue
            kept.append(message)
        return kept


def _transient(failure: str, model: str, call: int) -> ModelError:
    where = f"{model} (chaos, call {call})"
    if failure == "rate_limit":
        return RateLimited(f"{where}: 429 Too Many Requests", model=model, retry_after_s=None)
    if failure == "timeout":
        return ProviderTimeout(f"{where}: no answer within the timeout", model=model)
    if failure == "server_error":
        return ProviderServerError(f"{where}: 503 Service Unavailable", model=model)
    return ProviderConnectionError(f"{where}: connection reset by peer", model=model)
