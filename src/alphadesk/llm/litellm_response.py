"""Reading LiteLLM: importing it quietly on first use, a completion's message, usage and
cost, and a one-line description of a failure. Shared by the model and its streams."""

from __future__ import annotations

import json
import logging
import math
import os
import warnings
from typing import Any

from alphadesk.llm.messages import AssistantMessage, ToolCall, Usage

__all__ = [
    "BadResponse",
    "cost_of",
    "describe_error",
    "load_litellm",
    "parse_message",
    "usage_of",
]

logger = logging.getLogger(__name__)

_litellm_module: Any = None


def load_litellm() -> Any:
    """Import and quieten LiteLLM on first use."""
    global _litellm_module
    if _litellm_module is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-map fetch
        import litellm

        litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners
        litellm.set_verbose = False
        litellm.telemetry = False  # gone from recent versions; older ones phoned home
        # Token counting falls back to the bundled tiktoken instead of fetching tokenizers.
        litellm.disable_hf_tokenizer_download = True
        # LiteLLM's lazily imported provider types trip a harmless pydantic warning.
        warnings.filterwarnings(
            "ignore", message=r".*using the `ReadOnly` qualifier", category=UserWarning
        )
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
            logging.getLogger(name).setLevel(logging.ERROR)  # our own logs say what failed
        _litellm_module = litellm
    return _litellm_module


class BadResponse(Exception):
    """The provider answered, but not with a usable completion (retryable)."""


def _arguments(value: Any) -> str:
    if value is None or value == "":
        return "{}"
    return value if isinstance(value, str) else json.dumps(value)


def parse_message(raw: Any, model: str) -> tuple[AssistantMessage, str | None]:
    choices = getattr(raw, "choices", None)
    if not choices:
        raise BadResponse(f"{model} returned no choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    if message is None:
        raise BadResponse(f"{model} returned a choice without a message")
    calls = [
        ToolCall(
            id=getattr(call, "id", None) or f"call_{index}",  # some servers send no ids
            name=call.function.name,
            arguments=_arguments(call.function.arguments),
        )
        for index, call in enumerate(getattr(message, "tool_calls", None) or [], start=1)
    ]
    content = getattr(message, "content", None)
    text = content if content is None or isinstance(content, str) else str(content)
    return AssistantMessage(content=text, tool_calls=calls), getattr(choice, "finish_reason", None)


def cost_of(raw: Any, model: str) -> float:
    """USD cost of one response; 0.0 whenever LiteLLM cannot price it (never raises)."""
    cost: Any = None
    try:
        cost = (getattr(raw, "_hidden_params", None) or {}).get("response_cost")
        if cost is None:
            cost = load_litellm().completion_cost(completion_response=raw, model=model)
        cost = float(cost)
    except Exception:
        logger.debug("no price known for %s; cost recorded as 0", model, exc_info=True)
        return 0.0
    return cost if math.isfinite(cost) and cost > 0 else 0.0


def usage_of(raw: Any, model: str) -> Usage:
    usage = getattr(raw, "usage", None)

    def count(name: str) -> int:
        value = getattr(usage, name, None)
        return value if isinstance(value, int) and value > 0 else 0

    return Usage(
        requests=1,
        input_tokens=count("prompt_tokens"),
        output_tokens=count("completion_tokens"),
        cost_usd=cost_of(raw, model),
    )


def describe_error(exc: BaseException, timeout_s: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"timed out after {timeout_s:g}s"
    status = getattr(exc, "status_code", None)
    text = " ".join(str(exc).split())[:200] or type(exc).__name__
    return f"HTTP {status}: {text}" if status else f"{type(exc).__name__}: {text}"
