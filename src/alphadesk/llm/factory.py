"""Model strings to models: ``provider/model`` goes to LiteLLM, a registered name to its builder.

Names without a ``/`` (``rules``, test doubles...) are not LiteLLM models: whoever provides
one registers a builder for it with ``register_model``; anything else is an error that lists
the valid forms. A registered model is wrapped in ``RetryingModel`` (LiteLLM models retry
inside their adapter), so transient failures are retried whatever answers. The response
cache wraps the result separately (``CachedModel``).
"""

from __future__ import annotations

from collections.abc import Callable

from alphadesk.config import RULES_MODEL, ModelSettingsConfig
from alphadesk.llm.base import Model
from alphadesk.llm.retrying import RetryingModel

__all__ = [
    "ModelBuilder",
    "build_model",
    "check_model_string",
    "register_model",
    "registered_models",
]

ModelBuilder = Callable[[str, ModelSettingsConfig], Model]
_BUILDERS: dict[str, ModelBuilder] = {}

_EXAMPLES = (
    "anthropic/claude-sonnet-4-20250514, openai/gpt-4o, gemini/gemini-2.5-flash, "
    "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0, ollama/llama3"
)


def register_model(name: str, builder: ModelBuilder) -> None:
    """Make ``build_model(name, ...)`` call ``builder`` (e.g. ``rules`` -> the rules model)."""
    if not name or "/" in name:
        raise ValueError(f"registered model names have no '/': {name!r} would shadow LiteLLM")
    _BUILDERS[name] = builder


def registered_models() -> list[str]:
    return sorted(_BUILDERS)


def build_model(model_string: str, settings: ModelSettingsConfig) -> Model:
    """The model for ``model_string``, with fallbacks, api_base, timeout and retries from
    ``settings``. ``ValueError`` (saying what would be valid) for a string that names none."""
    model_string = model_string.strip()
    if model_string in _BUILDERS:
        built = _BUILDERS[model_string](model_string, settings)
        return RetryingModel(built, max_retries=settings.max_retries)
    _check_litellm_string(model_string, "model")
    for fallback in settings.fallbacks:
        _check_litellm_string(fallback, "fallback model")

    from alphadesk.llm.litellm_model import LiteLLMModel

    return LiteLLMModel(
        model_string,
        api_base=settings.api_base,
        api_key=settings.api_key.get_secret_value() if settings.api_key else None,
        fallbacks=settings.fallbacks,
        timeout_s=settings.timeout_s,
        first_token_timeout_s=settings.first_token_timeout_s,
        max_tokens=settings.max_tokens,
        response_format=settings.response_format,
        preflight=settings.preflight,
        max_retries=settings.max_retries,
        temperature=settings.temperature,
    )


def check_model_string(model_string: str) -> None:
    """``ValueError`` (saying what is wrong) unless ``model_string`` names a model: ``rules``,
    a registered name, or ``provider/model`` with a provider LiteLLM knows. Nothing is built
    or called, so a command can refuse a bad name before its run starts."""
    name = model_string.strip()
    if name != RULES_MODEL and name not in _BUILDERS:
        _check_litellm_string(name, "model")


def _check_litellm_string(model_string: str, what: str) -> None:
    provider, _, model = model_string.partition("/")
    if not provider or not model:
        names = ", ".join(f"`{name}`" for name in [RULES_MODEL, *registered_models()])
        raise ValueError(
            f"unknown {what} {model_string!r}: use a LiteLLM string `provider/model` "
            f"(e.g. {_EXAMPLES}) or one of {names}"
        )
    from alphadesk.llm.litellm_response import load_litellm

    providers = {str(getattr(p, "value", p)) for p in load_litellm().provider_list}
    if provider not in providers:
        raise ValueError(
            f"unknown provider {provider!r} in {what} {model_string!r}: LiteLLM knows e.g. "
            "anthropic, openai, gemini, bedrock, azure, ollama, groq, mistral, openrouter "
            "(all: https://docs.litellm.ai/docs/providers); for an OpenAI-compatible "
            "server use `openai/<model>` with api_base"
        )
