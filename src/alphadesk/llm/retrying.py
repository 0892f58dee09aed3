"""``RetryingModel``: transient provider failures retried with exponential backoff and jitter.

LiteLLM models retry inside their adapter; any other model (a local adapter, a registered
test double, ``ChaosModel``) gets the same policy from this wrapper. Only ``retryable``
errors (rate limits, timeouts, server errors, dropped connections) are retried; invalid
answers are the agent loop's business (its output and tool retry budgets).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Sequence

from alphadesk.llm.base import Model, ModelError, RateLimited
from alphadesk.llm.messages import Message, ModelResponse, RequestSettings, ToolSpec
from alphadesk.llm.wrapper import ModelWrapper

__all__ = ["RetryingModel"]

logger = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]


class RetryingModel(ModelWrapper):
    """``inner``, with each retryable failure tried again up to ``max_retries`` times.

    The n-th retry waits ``base_delay_s * 2**n`` (capped at ``max_delay_s``) times a jitter
    in [0.5, 1.5) from a ``seed``-ed generator, or what a rate limit's Retry-After says.
    ``sleep`` is injectable so tests and benchmarks wait for nothing.
    """

    def __init__(
        self,
        inner: Model,
        *,
        max_retries: int = 3,
        base_delay_s: float = 0.5,
        max_delay_s: float = 20.0,
        seed: int | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        super().__init__(inner)
        self.max_retries = max_retries
        self.base_delay_s, self.max_delay_s = base_delay_s, max_delay_s
        self._random = random.Random(seed)
        self._sleep = sleep
        self.retries = 0  # how many retries were spent, over all requests
        self.waited_s = 0.0

    def __repr__(self) -> str:
        return f"RetryingModel({self.inner!r}, max_retries={self.max_retries})"

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        attempt = 0
        while True:
            try:
                return await self.inner.request(messages, tools, settings)
            except ModelError as exc:
                if not exc.retryable or attempt >= self.max_retries:
                    raise
                delay = self._delay(attempt, exc)
                logger.info(
                    "%s: %s: %s; retry %d/%d in %.2f s",
                    self.name,
                    type(exc).__name__,
                    exc,
                    attempt + 1,
                    self.max_retries,
                    delay,
                )
                attempt += 1
                self.retries += 1
                self.waited_s += delay
                await self._sleep(delay)

    def _delay(self, attempt: int, exc: ModelError) -> float:
        if isinstance(exc, RateLimited) and exc.retry_after_s is not None:
            return min(exc.retry_after_s, self.max_delay_s)
        backoff = min(self.base_delay_s * 2**attempt, self.max_delay_s)
        return backoff * (0.5 + self._random.random())
