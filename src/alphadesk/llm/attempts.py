"""Failed model attempts, reported to whoever keeps the run's ledger.

A request may take several attempts (retries, fallbacks) and may fail in the end. The
response the caller receives accounts for the attempt that answered; every other attempt,
failed or timed out, is reported here so the ledger shows all the calls a run made (and
a request budget counts them). The agent loop installs a sink around each model request::

    with reporting_attempts(lambda attempt: ledger.record_failed(agent, attempt)):
        response = await model.request(...)

Without a sink, reports are dropped (a model used outside any run).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["FailedAttempt", "report_failed_attempt", "reporting_attempts"]


@dataclass(frozen=True)
class FailedAttempt:
    """One call that brought no usable answer.

    ``error`` is the typed error's class name (``ProviderTimeout``, ``RequestRejected``...),
    ``message`` what went wrong. Tokens are what the server reported or streamed before it
    failed (often 0); a timed-out stream counts the chunks it received as output tokens.
    """

    model: str
    error: str
    message: str
    latency_s: float
    input_tokens: int = 0
    output_tokens: int = 0


AttemptSink = Callable[[FailedAttempt], None]
_sink: ContextVar[AttemptSink | None] = ContextVar("alphadesk_attempt_sink", default=None)


@contextlib.contextmanager
def reporting_attempts(sink: AttemptSink) -> Iterator[None]:
    """Send every failed attempt made inside this block (this task and its children) to
    ``sink``."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)


def report_failed_attempt(attempt: FailedAttempt) -> None:
    sink = _sink.get()
    if sink is not None:
        sink(attempt)
