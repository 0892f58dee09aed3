"""The assistant pipeline (seeds 002 and 003): classify, route, execute, answer, check."""

from alphadesk.pipelines.assistant.models import ChatLimits, ChatRequest, ChatResult, NumberCheck
from alphadesk.pipelines.assistant.pipeline import AssistantPipeline

__all__ = ["AssistantPipeline", "ChatLimits", "ChatRequest", "ChatResult", "NumberCheck"]
