"""What every pipeline's Markdown report shows the same way: who decided, at what cost."""

from __future__ import annotations

from collections.abc import Iterable

from alphadesk.pipelines.models import AgentReport

__all__ = ["agents_table"]


def agents_table(agents: Iterable[AgentReport], heading: str = "Who decided") -> list[str]:
    """A section with one row per agent run: model, outcome, calls, tokens, cost, seconds."""
    lines = [
        f"## {heading}",
        "",
        "| agent | model | outcome | tool calls | model calls | tokens | cost | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for agent in agents:
        lines.append(
            f"| {agent.agent} | {agent.model} | {agent.outcome} | {agent.tool_calls} "
            f"| {agent.requests} | {agent.tokens} | ${agent.cost_usd:.4f} | {agent.seconds:.2f} |"
        )
    return lines
