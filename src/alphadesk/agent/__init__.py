"""The agent engine: tools, the loop, structured outputs, events and budgets.

It knows nothing about finance; pipelines give it instructions, tools and output types.
"""

from alphadesk.agent.agent import Agent, AgentRun, OutputValidator
from alphadesk.agent.context import RunContext, RunScope
from alphadesk.agent.errors import ModelRetry, ToolDefinitionError
from alphadesk.agent.result import (
    Completed,
    MaxTurnsReached,
    ModelFailed,
    NoValidOutput,
    Outcome,
    RunNotCompleted,
    RunResult,
    ToolCrashed,
    ToolRetriesExhausted,
    UsageLimitReached,
)
from alphadesk.agent.tools import Tool, ToolReturn, tool
from alphadesk.agent.toolsets import Toolset
from alphadesk.agent.usage import LedgerEntry, UsageLedger, UsageLimits

__all__ = [
    "Agent",
    "AgentRun",
    "Completed",
    "LedgerEntry",
    "MaxTurnsReached",
    "ModelFailed",
    "ModelRetry",
    "NoValidOutput",
    "Outcome",
    "OutputValidator",
    "RunContext",
    "RunNotCompleted",
    "RunResult",
    "RunScope",
    "Tool",
    "ToolCrashed",
    "ToolDefinitionError",
    "ToolRetriesExhausted",
    "ToolReturn",
    "Toolset",
    "UsageLedger",
    "UsageLimitReached",
    "UsageLimits",
    "tool",
]
