"""A Markdown report of one question: the answer, the tools behind it, and whether every
figure it writes was found in what the tools returned."""

from __future__ import annotations

from alphadesk.pipelines.assistant.models import ChatResult
from alphadesk.pipelines.reporting import agents_table

__all__ = ["render_report"]


def render_report(result: ChatResult) -> str:
    """The report saved with the run and printed by ``alphadesk runs show``."""
    lines = [f"# {result.question}", ""]
    when = result.as_of.strftime("%Y-%m-%d %H:%M %Z").strip()
    lines += [f"As of {when}, session `{result.session_id}`, run `{result.run_id}`", ""]
    if result.as_of_note:
        lines += [result.as_of_note, ""]
    if result.reason:
        lines += [f"**Error:** {result.reason}", ""]
    if result.answer:
        lines += ["## Answer", "", result.answer, ""]
    if result.route is not None:
        lines += [f"Route: {result.route.strategy} ({result.route.reason})", ""]
    if result.tool_calls:
        lines += ["## Tool calls", "", "| tool | arguments | outcome | seconds |"]
        lines.append("|---|---|---|---|")
        for call in result.tool_calls:
            outcome = "ok" if call.ok else f"failed: {call.error}"
            seconds = f"{call.seconds:.2f}" if call.seconds is not None else "-"
            lines.append(f"| {call.tool} | `{call.arguments}` | {_cell(outcome)} | {seconds} |")
        lines.append("")
    numbers = result.numbers
    lines += ["## Figures", "", f"{numbers.traced} of {numbers.checked} traced to a tool result."]
    if numbers.unverified:
        lines.append(f"Unverified: {', '.join(numbers.unverified)}.")
    lines += ["", *agents_table(result.agents, "Who answered")]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """``text`` on one line of a table."""
    return " ".join(text.split()).replace("|", "\\|")
