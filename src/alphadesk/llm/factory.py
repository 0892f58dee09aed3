"""Model strings to models: ``provider/model`` goes to LiteLLM; anything else is an error that
lists the valid forms. ``rules`` is no LiteLLM model: it is each agent's own policy, so the
agent's spec builds it (``agents.spec.model_for``, the one place a model string is resolved).
The response cache wraps the result separately (``CachedModel``).
"""

from __future__ import annotations

from alphadesk.config import RULES_MODEL, ModelSettingsConfig
from alphadesk.llm.base import Model

__all__ = [
    "build_model",
    "check_model_string",
]

_EXAMPLES = (
    "anthropic/claude-sonnet-4-20250514, openai/gpt-4o, gemini/gemini-2.5-flash, "
    "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0, ollama/llama3"
)


def build_model(model_string: str, settings: ModelSettingsConfig) -> Model:
    """The model for ``model_string``, with fallbacks, api_base, timeout and retries from
    ``settings``. ``ValueError`` (saying what would be valid) for a string that names none."""
    model_string = model_string.strip()
    if model_string == RULES_MODEL:
        raise ValueError(
            f"`{RULES_MODEL}` is each agent's own policy, not a LiteLLM model: resolve it "
            "with the agent's spec (alphadesk.agents.spec.model_for)"
        )
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
    """``ValueError`` (saying what is wrong) unless ``model_string`` names a model: ``rules``
    or ``provider/model`` with a provider LiteLLM knows. Nothing is built
    or called, so a command can refuse a bad name before its run starts."""
    name = model_string.strip()
    if name != RULES_MODEL:
        _check_litellm_string(name, "model")


def _check_litellm_string(model_string: str, what: str) -> None:
    provider, _, model = model_string.partition("/")
    if not provider or not model:
        raise ValueError(
            f"unknown {what} {model_string!r}: use a LiteLLM string `provider/model` "
            f"(e.g. {_EXAMPLES}) or `{RULES_MODEL}` (every agent's offline policy)"
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
