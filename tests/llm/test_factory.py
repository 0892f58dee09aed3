"""build_model: LiteLLM strings, and clear errors for the rest."""

from __future__ import annotations

import pytest

from alphadesk.config import ModelSettingsConfig
from alphadesk.llm import factory
from alphadesk.llm.base import Model
from alphadesk.llm.factory import build_model
from alphadesk.llm.litellm_model import LiteLLMModel


@pytest.mark.parametrize(
    "model_string",
    [
        "anthropic/claude-sonnet-4-20250514",
        "openai/gpt-4o",
        "gemini/gemini-2.5-flash",
        "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0",
        "ollama/llama3",
    ],
)
def test_provider_strings_build_litellm_models(model_string: str) -> None:
    model = build_model(model_string, ModelSettingsConfig())
    assert isinstance(model, LiteLLMModel) and isinstance(model, Model)
    assert model.name == model_string


def test_settings_reach_the_model() -> None:
    settings = ModelSettingsConfig(
        fallbacks=["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-20250514"],
        api_base="http://127.0.0.1:4000/v1",
        timeout_s=7.5,
        max_retries=1,
        temperature=0.1,
    )
    model = build_model("  openai/gpt-4o  ", settings)
    assert isinstance(model, LiteLLMModel)
    assert model.name == "openai/gpt-4o"
    assert model.fallbacks == ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-20250514"]
    assert (model.api_base, model.timeout_s, model.max_retries) == (
        "http://127.0.0.1:4000/v1",
        7.5,
        1,
    )
    assert model.temperature == 0.1
    # The primary is never its own fallback.
    again = build_model("openai/gpt-4o-mini", settings)
    assert isinstance(again, LiteLLMModel)
    assert again.fallbacks == ["anthropic/claude-sonnet-4-20250514"]


@pytest.mark.parametrize("model_string", ["gpt-4o", "", "openai/", "/gpt-4o"])
def test_strings_without_provider_list_the_valid_forms(model_string: str) -> None:
    with pytest.raises(ValueError, match=r"provider/model.*e\.g\. anthropic/") as caught:
        build_model(model_string, ModelSettingsConfig())
    assert "or `rules`" in str(caught.value)  # the one name that needs no provider


def test_unknown_provider_is_named() -> None:
    with pytest.raises(ValueError, match=r"unknown provider 'opnai'.*openai/<model>"):
        build_model("opnai/gpt-4o", ModelSettingsConfig())


def test_bad_fallback_is_refused_at_build_time() -> None:
    with pytest.raises(ValueError, match="fallback model 'gpt-4o-mini'"):
        build_model("openai/gpt-4o", ModelSettingsConfig(fallbacks=["gpt-4o-mini"]))


def test_rules_is_no_litellm_model() -> None:
    # ``rules`` is an agent's own policy: only its spec can build it, and the error says so
    with pytest.raises(ValueError, match="agent's own policy"):
        build_model("rules", ModelSettingsConfig())
    factory.check_model_string("rules")  # yet a valid model string for any command
