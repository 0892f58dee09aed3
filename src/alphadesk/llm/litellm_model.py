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
import logging
import os
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from alphadesk.llm.base import AuthenticationFailed, ModelError, ModelUnavailable, StreamItem
from alphadesk.llm.litellm_response import (
    BadResponse,
    describe_error,
    load_litellm,
    parse_message,
    usage_of,
)
from alphadesk.llm.messages import (
    Message,
    ModelResponse,
    RequestSettings,
    ToolSpec,
)
from alphadesk.llm.openai_format import to_openai_messages, to_openai_tools

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


def _response_format(settings: RequestSettings) -> dict[str, Any]:
    # OpenAI restricts schema names to [a-zA-Z0-9_-]{1,64}.
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", settings.output_name)[:64] or "output"
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": settings.output_schema, "strict": False},
    }


# -- errors -----------------------------------------------------------------------------------


_TRANSIENT, _AUTH, _FATAL = "transient", "auth", "fatal"


def _classify(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError | BadResponse):
        return _TRANSIENT
    status = getattr(exc, "status_code", None)
    if status in (401, 403) or _MISSING_KEY.search(str(exc)):
        return _AUTH
    if status in (408, 409, 429) or (isinstance(status, int) and status >= 500):
        return _TRANSIENT
    litellm = load_litellm()
    if isinstance(exc, litellm.AuthenticationError):
        return _AUTH
    transient = (litellm.Timeout, litellm.APIConnectionError, litellm.RateLimitError)
    return _TRANSIENT if isinstance(exc, transient) else _FATAL


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


class LiteLLMModel:
    """A LiteLLM model string (``anthropic/...``, ``openai/...``, ``gemini/...``,
    ``bedrock/...``, ``ollama/...``), optionally at an OpenAI-compatible ``api_base``.

    ``capabilities`` overrides detection, e.g. ``{"vision": True}`` for a local vision model
    LiteLLM does not know; the overrides apply to the fallback models too. Fallbacks share
    ``api_base`` and ``api_key`` (a proxy serves them all).
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        fallbacks: Sequence[str] = (),
        timeout_s: float = 120.0,
        max_retries: int = 3,
        temperature: float | None = None,
        capabilities: Mapping[str, bool] | None = None,
        backoff: Backoff | None = None,
        sleep: Sleep | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        unknown = set(capabilities or {}) - set(CAPABILITIES)
        if unknown:
            raise ValueError(f"unknown capabilities {sorted(unknown)}; use {CAPABILITIES}")
        self._model = model
        self.api_base = api_base
        self.api_key = api_key
        self.fallbacks = [f for f in dict.fromkeys(fallbacks) if f != model]
        self.timeout_s = timeout_s
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
        return self._supports(self._model, capability)

    def _supports(self, model: str, capability: str) -> bool:
        if capability in self._overrides:
            return self._overrides[capability]
        key = (model, capability)
        if key not in self._detected:
            self._detected[key] = detect_capability(model, capability, api_base=self.api_base)
        return self._detected[key]

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

        Retries and fallbacks apply until the first chunk arrives; a stream that breaks
        after it started raises ``ModelUnavailable`` (the text already shown cannot be
        taken back, so it is not retried).
        """
        from alphadesk.llm.litellm_stream import open_stream, relay

        timeout_s = settings.timeout_s or self.timeout_s

        async def call(model: str, kwargs: dict[str, Any], limit_s: float) -> Any:
            self.stats.attempts += 1
            streaming = kwargs | {"stream": True, "stream_options": {"include_usage": True}}
            return await open_stream(load_litellm(), model, streaming, limit_s)

        opened = await self._first_answer(messages, tools, settings, call)
        try:
            async for item in relay(load_litellm(), opened, timeout_s):
                yield item
        except ModelError:
            self.stats.failures += 1
            raise

    async def _first_answer(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
        call: Callable[[str, dict[str, Any], float], Awaitable[T]],
    ) -> T:
        """``call`` on the model, then on each fallback, each with its retries."""
        timeout_s = settings.timeout_s or self.timeout_s
        tried: list[str] = []
        try:
            for index, model in enumerate([self._model, *self.fallbacks]):
                if index:
                    self.stats.fallbacks += 1
                    logger.warning("%s unavailable; falling back to %s", self._model, model)
                found = await self._request_one(
                    model, messages, tools, settings, timeout_s, tried, call
                )
                if found is not None:
                    return found
        except ModelError:
            self.stats.failures += 1
            raise
        self.stats.failures += 1
        raise ModelUnavailable(
            f"no model answered after retries and fallbacks; tried: {'; '.join(tried)}. "
            "Try again later, raise the timeout or max_retries, or configure fallbacks.",
            model=self._model,
        )

    async def _request_one(
        self,
        model: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
        timeout_s: float,
        tried: list[str],
        call: Callable[[str, dict[str, Any], float], Awaitable[T]],
    ) -> T | None:
        """Ask one model, retrying transient failures; None when its retries run out."""
        self._check_credentials(model)
        kwargs = self._kwargs(model, messages, tools, settings, timeout_s)
        for attempt in range(self.max_retries + 1):
            try:
                return await call(model, kwargs, timeout_s)
            except Exception as exc:
                kind = _classify(exc)
                if kind == _AUTH:
                    raise self._auth_error(model, exc) from exc
                if kind == _FATAL:
                    why = describe_error(exc, timeout_s)
                    raise ModelError(f"{model} rejected the request: {why}", model=model) from exc
                tried.append(f"{model} attempt {attempt + 1}: {describe_error(exc, timeout_s)}")
                logger.info("%s", tried[-1])
                if attempt < self.max_retries:
                    self.stats.retries += 1
                    await self._sleep(self.backoff.delay(attempt, self._rng, _retry_after(exc)))
        return None

    async def _call(self, model: str, kwargs: dict[str, Any], timeout_s: float) -> ModelResponse:
        litellm = load_litellm()
        self.stats.attempts += 1
        started = time.monotonic()
        # Our own deadline too: LiteLLM's timeout does not cover every phase of every provider.
        async with asyncio.timeout(timeout_s):
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
        if settings.max_tokens is not None:
            kwargs["max_tokens"] = settings.max_tokens
        temperature = settings.temperature if settings.temperature is not None else self.temperature
        if temperature is not None:
            kwargs["temperature"] = temperature
        if settings.output_schema is not None and self._supports(model, "json_schema"):
            kwargs["response_format"] = _response_format(settings)
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
