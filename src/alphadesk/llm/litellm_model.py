"""``LiteLLMModel``: any provider LiteLLM speaks, behind the ``Model`` protocol.

LiteLLM does the provider wire formats; this adapter owns everything around a call so it is
explicit and countable: message conversion, retries with backoff, fallbacks, timeouts,
typed errors, capability checks, usage and cost.

Decisions:

- Retries are ours (``num_retries=0`` is passed to LiteLLM): rate limits (429), timeouts,
  connection errors and 5xx are retried with exponential backoff and jitter (honouring
  ``Retry-After``), then each fallback model is tried in order with the same policy.
- Authentication failures (401/403, missing key) raise ``AuthenticationFailed`` at once:
  never retried and never hidden behind a fallback, since only the user can fix them.
- Other client errors (400, 404...) raise ``ModelError`` at once: a typo in a model name
  must not silently turn into a run on the fallback model.
- ``litellm`` is imported on first use: it takes seconds to import and the CLI must not.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from alphadesk.llm.attempts import FailedAttempt, report_failed_attempt
from alphadesk.llm.base import (
    AuthenticationFailed,
    EndpointUnreachable,
    ModelError,
    ProviderTimeout,
    RequestRejected,
    StreamItem,
)
from alphadesk.llm.litellm_errors import describe, rejection, transient_error
from alphadesk.llm.litellm_response import load_litellm, parse_message, usage_of
from alphadesk.llm.litellm_stream import Deadlines, StreamTimedOut, collect, open_stream, relay
from alphadesk.llm.messages import (
    Message,
    ModelResponse,
    RequestSettings,
    ToolSpec,
)
from alphadesk.llm.openai_format import to_openai_messages, to_openai_tools
from alphadesk.llm.preflight import OLLAMA_DEFAULT_BASE, check_endpoint
from alphadesk.llm.structured import (
    LOCAL_PROVIDERS,
    ResponseFormatMode,
    SchemaPlan,
    response_format,
    with_schema_instructions,
)

__all__ = [
    "CAPABILITIES",
    "Backoff",
    "CallStats",
    "LiteLLMModel",
    "credential_env_vars",
    "detect_capability",
    "load_litellm",
]

logger = logging.getLogger(__name__)
T = TypeVar("T")

CAPABILITIES = ("tools", "vision", "json_schema")

# Providers whose model map lags behind what they serve (local and proxy endpoints): an
# unknown model there is assumed to handle tools, as nearly all current chat models do.
_TOOLS_ASSUMED = frozenset(
    {"openai", "custom_openai", "openai_like", "hosted_vllm", "vllm", "litellm_proxy"}
    | {"lm_studio", "llamafile", "ollama", "ollama_chat"}
)
# Providers whose native JSON-schema output coexists with tool calls.
_SCHEMA_WITH_TOOLS = frozenset({"openai", "azure", "custom_openai", "openai_like", "hosted_vllm"})
# Key-only providers: which environment variable(s) hold the key (any one of them will do).
_KEY_ENV: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "cohere": ("COHERE_API_KEY",),
    "xai": ("XAI_API_KEY",),
}
# Providers that authenticate some other way too (cloud credential chains, no key at all).
_OTHER_AUTH: dict[str, str] = {
    "bedrock": "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an AWS profile/role)",
    "sagemaker": "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an AWS profile/role)",
    "azure": "AZURE_API_KEY, AZURE_API_BASE and AZURE_API_VERSION",
    "vertex_ai": "GOOGLE_APPLICATION_CREDENTIALS (or gcloud application-default login)",
}
# Sent to an OpenAI-compatible ``api_base`` when no key is configured: local servers need
# none, but the OpenAI client refuses to send a request without one.
_PLACEHOLDER_KEY = "sk-no-key-required"
_MISSING_KEY = re.compile(
    r"missing credentials|api_key client option must be set|api key (is )?not (set|found)"
    r"|no api key",
    re.IGNORECASE,
)


def _provider(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else ""


# -- capabilities -----------------------------------------------------------------------------


def detect_capability(model: str, capability: str, *, api_base: str | None = None) -> bool:
    """Whether ``model`` natively handles ``capability`` (``tools``/``vision``/``json_schema``).

    Known models answer from LiteLLM's model map. Unknown ones never raise: tools are assumed
    for OpenAI-compatible endpoints (``api_base`` or a local/proxy provider), vision and JSON
    schema are not. ``json_schema`` also requires that the schema leaves tool use intact.
    """
    if capability not in CAPABILITIES:
        return False
    litellm = load_litellm()
    # LiteLLM's helper for each capability, e.g. litellm.supports_function_calling.
    helper = {"tools": "function_calling", "vision": "vision", "json_schema": "response_schema"}
    try:
        info = litellm.get_model_info(model=model)
    except Exception:  # "This model isn't mapped yet" and friends
        info = {}
    if info.get(f"supports_{helper[capability]}") is not None:
        try:
            found = bool(getattr(litellm, f"supports_{helper[capability]}")(model=model))
        except Exception:
            found = bool(info[f"supports_{helper[capability]}"])
        if capability == "json_schema":
            return found and _schema_keeps_tools(model, info)
        return found
    if capability == "tools":
        return api_base is not None or _provider(model) in _TOOLS_ASSUMED
    return False


def _schema_keeps_tools(model: str, info: Mapping[str, Any]) -> bool:
    """Whether ``response_format`` can go with ``tools`` on every turn. LiteLLM emulates it
    for some providers (Anthropic without native structured output, Bedrock...) by forcing
    a JSON tool call, which would stop the model calling our tools: those get fenced JSON."""
    if _provider(model) in _SCHEMA_WITH_TOOLS:
        return True
    return _provider(model) == "anthropic" and bool(info.get("supports_native_structured_output"))


# -- credentials ------------------------------------------------------------------------------


def credential_env_vars(model: str) -> tuple[str, ...]:
    """The environment variable(s) holding the key for ``model``'s provider."""
    provider = _provider(model)
    if provider in _KEY_ENV:
        return _KEY_ENV[provider]
    try:
        missing = load_litellm().validate_environment(model=model).get("missing_keys") or []
    except Exception:
        missing = []
    return tuple(missing) or (f"{provider.upper() or 'PROVIDER'}_API_KEY",)


def _credential_hint(model: str, api_key_given: bool) -> str:
    provider = _provider(model)
    if provider in _OTHER_AUTH:
        return f"configure {_OTHER_AUTH[provider]}"
    names = credential_env_vars(model)
    wanted = names[0] + (f" (or {', '.join(names[1:])})" if len(names) > 1 else "")
    if api_key_given:
        return f"check the api_key configured for it (or set {wanted})"
    if any(os.environ.get(name) for name in names):
        return f"{names[0]} is set but was rejected: check its value"
    return f"set {wanted} in the environment"


def _retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait, from a ``Retry-After`` header."""
    for attr in ("litellm_response_headers", "headers"):
        headers = getattr(exc, attr, None)
        if headers is None:
            continue
        try:
            value = headers.get("retry-after")
            return float(value) if value is not None else None
        except (AttributeError, TypeError, ValueError):
            return None
    return None


# -- the model --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff: ``base_s * 2**retry`` capped at ``max_s``, minus up to
    ``jitter`` of it at random so concurrent agents don't retry in lockstep."""

    base_s: float = 1.0
    max_s: float = 30.0
    jitter: float = 0.5

    def delay(self, retry: int, rng: random.Random, retry_after: float | None = None) -> float:
        delay = min(self.max_s, self.base_s * 2**retry)
        delay -= delay * self.jitter * rng.random()
        if retry_after is not None and retry_after > 0:
            delay = max(delay, min(retry_after, self.max_s))
        return delay


@dataclass
class CallStats:
    """Counters over the life of one ``LiteLLMModel`` (tests and diagnostics read them)."""

    attempts: int = 0  # calls sent to LiteLLM
    retries: int = 0  # attempts after a transient failure of the same model
    fallbacks: int = 0  # times a fallback model was tried
    failures: int = 0  # requests that ended in an error


Sleep = Callable[[float], Awaitable[None]]
Call = Callable[[str, dict[str, Any], Deadlines], Awaitable[T]]

_STREAMING = {"stream": True, "stream_options": {"include_usage": True}}
# What to do after a failed attempt.
_RETRY, _NEXT, _STOP, _DROP_SCHEMA = "retry", "next model", "stop", "drop response_format"
# Models whose server refused response_format in this process: they get instructions.
_SCHEMA_REFUSED: set[tuple[str | None, str]] = set()  # (api_base, model)


class LiteLLMModel:
    """A LiteLLM model string (``anthropic/...``, ``openai/...``, ``gemini/...``,
    ``bedrock/...``, ``ollama/...``), optionally at an OpenAI-compatible ``api_base``.

    ``capabilities`` overrides detection, e.g. ``{"vision": True}`` for a local vision model
    LiteLLM does not know; the overrides apply to the fallback models too. Fallbacks share
    ``api_base`` and ``api_key`` (a proxy serves them all).

    ``timeout_s`` bounds one attempt from request to last token; with
    ``first_token_timeout_s`` answers are streamed (also by ``request``) so a server that
    says nothing fails after that long. ``max_tokens`` caps every answer whatever the
    agent asks. ``response_format`` is ``auto``/``always``/``never`` (see ``structured``).
    ``preflight`` checks ``api_base`` answers before the first request of the process.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        fallbacks: Sequence[str] = (),
        timeout_s: float = 120.0,
        first_token_timeout_s: float | None = None,
        max_tokens: int | None = None,
        response_format: ResponseFormatMode = "auto",
        preflight: bool = True,
        max_retries: int = 3,
        temperature: float | None = None,
        capabilities: Mapping[str, bool] | None = None,
        backoff: Backoff | None = None,
        sleep: Sleep | None = None,
        rng: random.Random | None = None,
    ) -> None:
        for label, value in (
            ("timeout_s", timeout_s),
            ("first_token_timeout_s", first_token_timeout_s),
        ):
            if value is not None and value <= 0:
                raise ValueError(f"{label} must be positive, got {value}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        if response_format not in ("auto", "always", "never"):
            raise ValueError(f"response_format must be auto, always or never: {response_format!r}")
        unknown = set(capabilities or {}) - set(CAPABILITIES)
        if unknown:
            raise ValueError(f"unknown capabilities {sorted(unknown)}; use {CAPABILITIES}")
        self._model = model
        self.api_base = api_base
        self.api_key = api_key
        self.fallbacks = [f for f in dict.fromkeys(fallbacks) if f != model]
        self.timeout_s = timeout_s
        self.first_token_timeout_s = first_token_timeout_s
        self.max_tokens = max_tokens
        self.response_format = response_format
        self.preflight = preflight
        self.max_retries = max_retries
        self.temperature = temperature
        self.backoff = backoff or Backoff()
        self.stats = CallStats()
        self._overrides = dict(capabilities or {})
        self._detected: dict[tuple[str, str], bool] = {}
        self._sleep: Sleep = asyncio.sleep if sleep is None else sleep
        self._rng = random.Random() if rng is None else rng

    def __repr__(self) -> str:
        return f"LiteLLMModel({self._model!r}, fallbacks={self.fallbacks!r})"

    @property
    def name(self) -> str:
        return self._model

    def supports(self, capability: str) -> bool:
        if capability == "json_schema":
            return self._schema_plan(self._model) != "none"
        return self._supports(self._model, capability)

    def _supports(self, model: str, capability: str) -> bool:
        if capability in self._overrides:
            return self._overrides[capability]
        key = (model, capability)
        if key not in self._detected:
            self._detected[key] = detect_capability(model, capability, api_base=self.api_base)
        return self._detected[key]

    def _schema_plan(self, model: str) -> SchemaPlan:
        """How an answer's schema reaches ``model`` (see ``alphadesk.llm.structured``)."""
        if self.response_format == "never" or (self.api_base, model) in _SCHEMA_REFUSED:
            return "none"
        if self.response_format == "always" or self._supports(model, "json_schema"):
            return "native"
        if "json_schema" not in self._overrides and self._is_local(model):
            return "native_without_tools"
        return "none"

    def _is_local(self, model: str) -> bool:
        """An OpenAI-compatible server of the user's own (llama.cpp, vLLM, Ollama...)."""
        provider = _provider(model)
        return provider in LOCAL_PROVIDERS or (self.api_base is not None and provider == "openai")

    def _address(self, model: str) -> str:
        return self.api_base or f"{_provider(model) or model}'s API"

    async def check_endpoint(self) -> None:
        """Fail fast (``EndpointUnreachable`` naming the address) when nothing answers at
        the model's server. Once per address and process; free for hosted APIs."""
        await self._preflight(self._model)

    async def _preflight(self, model: str) -> None:
        provider = _provider(model)
        base = self.api_base
        if base is None and provider in {"ollama", "ollama_chat"}:
            base = OLLAMA_DEFAULT_BASE
        if not self.preflight or base is None:
            return
        try:
            await check_endpoint(base, provider, api_key=self.api_key)
        except EndpointUnreachable as exc:
            exc.model = model
            raise

    async def request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
    ) -> ModelResponse:
        return await self._first_answer(messages, tools, settings, self._call)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
    ) -> AsyncIterator[StreamItem]:
        """The answer token by token (``stream=True``), then the whole response.

        Retries and fallbacks apply until the first chunk arrives; a stream that breaks or
        runs out of time after it started raises (the text already shown cannot be taken
        back, so it is not retried).
        """

        async def call(model: str, kwargs: dict[str, Any], deadlines: Deadlines) -> Any:
            self.stats.attempts += 1
            return await open_stream(load_litellm(), model, kwargs | _STREAMING, deadlines)

        opened = await self._first_answer(messages, tools, settings, call)
        try:
            async for item in relay(load_litellm(), opened):
                yield item
        except ModelError as exc:
            self.stats.failures += 1
            self._report(opened.model, exc, opened.started)
            raise

    async def _first_answer(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
        call: Call[T],
    ) -> T:
        """``call`` on the model, then on each fallback, each with its retries."""
        tried: list[str] = []
        last: ModelError | None = None
        try:
            for index, model in enumerate([self._model, *self.fallbacks]):
                if index:
                    self.stats.fallbacks += 1
                    logger.warning("%s unavailable; falling back to %s", self._model, model)
                found = await self._request_one(model, messages, tools, settings, tried, call)
                if not isinstance(found, ModelError):
                    return found
                last = found
        except ModelError:
            self.stats.failures += 1
            raise
        self.stats.failures += 1
        assert last is not None
        # The last error's type and details, with everything that was tried.
        error = copy.copy(last)
        error.args = (
            f"{last}; no model answered; tried: {'; '.join(tried)}. Try again later, raise "
            "the timeouts or max_retries, or configure fallbacks.",
        )
        raise error from last

    async def _request_one(
        self,
        model: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
        tried: list[str],
        call: Call[T],
    ) -> T | ModelError:
        """Ask one model, retrying transient failures; the last error when they run out."""
        self._check_credentials(model)
        await self._preflight(model)
        timeout_s = settings.timeout_s or self.timeout_s
        kwargs = self._kwargs(model, messages, tools, settings, timeout_s)
        attempt = 0
        while True:
            started = time.monotonic()
            try:
                return await call(
                    model, kwargs, Deadlines.start(timeout_s, self.first_token_timeout_s)
                )
            except Exception as exc:
                error, verdict = self._typed(exc, model, kwargs, timeout_s)
                self._report(model, error, started)
                if verdict == _DROP_SCHEMA:
                    logger.warning("%s refused response_format; using instructions", model)
                    _SCHEMA_REFUSED.add((self.api_base, model))
                    kwargs = self._kwargs(model, messages, tools, settings, timeout_s)
                    continue
                if verdict == _STOP:
                    raise error from exc
                tried.append(f"{model} attempt {attempt + 1}: {describe(exc)}")
                logger.info("%s", tried[-1])
                first_token = isinstance(error, ProviderTimeout) and error.phase == "first_token"
                if verdict == _NEXT or attempt >= self.max_retries or (first_token and attempt):
                    return error
                self.stats.retries += 1
                await self._sleep(self.backoff.delay(attempt, self._rng, _retry_after(exc)))
                attempt += 1

    def _typed(
        self, exc: Exception, model: str, kwargs: dict[str, Any], timeout_s: float
    ) -> tuple[ModelError, str]:
        """The typed error for ``exc``, and what to do: retry, next model, stop, or ask
        again without response_format."""
        if isinstance(exc, ProviderTimeout):
            return exc, _NEXT if exc.phase == "total" else _RETRY
        if isinstance(exc, TimeoutError | load_litellm().Timeout):
            timed_out = ProviderTimeout(
                f"{model} timed out after {timeout_s:g}s", model=model, phase="total"
            )
            return timed_out, _NEXT
        if isinstance(exc, ModelError):  # a stream that broke before its end
            return exc, _RETRY if exc.retryable else _STOP
        status = getattr(exc, "status_code", None)
        if status in (401, 403) or _MISSING_KEY.search(str(exc)):
            return self._auth_error(model, exc), _STOP
        if isinstance(exc, load_litellm().AuthenticationError):
            return self._auth_error(model, exc), _STOP
        schema_sent = "response_format" in kwargs
        rejected = rejection(exc, model, self._address(model), schema_sent=schema_sent)
        if isinstance(rejected, RequestRejected) and rejected.kind == "unsupported":
            return rejected, _DROP_SCHEMA
        if rejected is not None:
            return rejected, _STOP
        transient = transient_error(exc, model, self._address(model))
        if transient is not None:
            return transient, _RETRY
        return ModelError(f"{model} rejected the request: {describe(exc)}", model=model), _STOP

    def _report(self, model: str, error: ModelError, started: float) -> None:
        chunks = error.chunks if isinstance(error, StreamTimedOut) else 0
        report_failed_attempt(
            FailedAttempt(
                model=model,
                error=type(error).__name__,
                message=str(error),
                latency_s=time.monotonic() - started,
                output_tokens=chunks,
            )
        )

    async def _call(
        self, model: str, kwargs: dict[str, Any], deadlines: Deadlines
    ) -> ModelResponse:
        litellm = load_litellm()
        self.stats.attempts += 1
        if self.first_token_timeout_s is not None:  # streamed: the first-token deadline is real
            opened = await open_stream(litellm, model, kwargs | _STREAMING, deadlines)
            return await collect(litellm, opened)
        started = time.monotonic()
        # Our own deadline too: LiteLLM's timeout does not cover every phase of every provider.
        async with asyncio.timeout_at(deadlines.total_at):
            raw = await litellm.acompletion(**kwargs)
        message, finish_reason = parse_message(raw, model)
        return ModelResponse(
            message=message,
            model=model,
            usage=usage_of(raw, model),
            finish_reason=finish_reason,
            latency_s=time.monotonic() - started,
        )

    def _kwargs(
        self,
        model: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
        timeout_s: float,
    ) -> dict[str, Any]:
        plan = self._schema_plan(model) if settings.output_schema is not None else "none"
        refused = (self.api_base, model) in _SCHEMA_REFUSED
        if plan == "native_without_tools" or (settings.output_schema is not None and refused):
            messages = with_schema_instructions(messages, settings)
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": to_openai_messages(messages, vision=self._supports(model, "vision")),
            "timeout": timeout_s,
            "num_retries": 0,  # retries are ours, so they are counted and backed off
            "max_retries": 0,  # and the provider SDK's own retries are off too
            "drop_params": True,
        }
        if tools:
            kwargs["tools"] = to_openai_tools(tools)
        caps = [n for n in (settings.max_tokens, self.max_tokens) if n is not None]
        if caps:
            kwargs["max_tokens"] = min(caps)
        temperature = settings.temperature if settings.temperature is not None else self.temperature
        if temperature is not None:
            kwargs["temperature"] = temperature
        if plan == "native" or (plan == "native_without_tools" and not tools):
            kwargs["response_format"] = response_format(settings)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        api_key = self.api_key or self._placeholder_key(model)
        if api_key:
            kwargs["api_key"] = api_key
        return kwargs

    def _placeholder_key(self, model: str) -> str | None:
        if not self.api_base or _provider(model) not in _TOOLS_ASSUMED - {"ollama", "ollama_chat"}:
            return None
        if any(os.environ.get(name) for name in credential_env_vars(model)):
            return None
        return _PLACEHOLDER_KEY

    def _check_credentials(self, model: str) -> None:
        """Fail before any network call when a key-only provider has no key at all."""
        if self.api_key or self.api_base or _provider(model) not in _KEY_ENV:
            return
        if not any(os.environ.get(name) for name in _KEY_ENV[_provider(model)]):
            raise AuthenticationFailed(
                f"no API key for {model}: {_credential_hint(model, False)}, "
                "or choose another model (`rules` runs offline)",
                model=model,
            )

    def _auth_error(self, model: str, exc: BaseException) -> AuthenticationFailed:
        where = f" at {self.api_base}" if self.api_base else ""
        status = getattr(exc, "status_code", None)
        reason = f"HTTP {status}" if status in (401, 403) else "missing credentials"
        said = " ".join(str(exc).split())[:160]
        return AuthenticationFailed(
            f"authentication failed for {model}{where} ({reason}): "
            f"{_credential_hint(model, self.api_key is not None)}. Not retried. "
            f"Provider said: {said}",
            model=model,
        )
