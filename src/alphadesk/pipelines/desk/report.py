"""A Markdown report of a trading-desk decision: every stage, the full debate, the chart."""

from __future__ import annotations

from itertools import groupby
from zoneinfo import ZoneInfo

from alphadesk.agents.desk.models import AnalystReport, Position
from alphadesk.pipelines.desk.models import DeskResult
from alphadesk.pipelines.reporting import agents_table

__all__ = ["render_report"]

_NEW_YORK = ZoneInfo("America/New_York")


def render_report(result: DeskResult) -> str:
    """The report saved with the run and printed by ``alphadesk runs show``."""
    when = result.as_of.astimezone(_NEW_YORK).strftime("%Y-%m-%d %H:%M New York time")
    lines = [f"# {result.symbol}: {result.decision.upper()}", ""]
    lines += [f"As of {when}" + (f", run `{result.run_id}`" if result.run_id else ""), ""]
    if result.decision == "failed":
        lines += [f"**Failed at {result.stage}:** {result.reason}", "", "No decision was made.", ""]
    if result.final is not None:
        lines += ["## Final decision (risk judge)", "", *_position(result.final)]
        lines += [f"- {note}" for note in result.final.risk_notes]
        lines.append("")
    if result.chart:
        lines += ["## Chart", "", f"![{result.symbol} daily chart]({result.chart})", ""]
    lines += _analysts(result) + _memories(result) + _debate(result)
    if result.plan is not None:
        plan = result.plan
        lines += [
            "## Investment plan (research manager)",
            "",
            f"**{plan.recommendation}**, confidence {plan.confidence:.2f}, "
            f"winning side: {plan.winning_side}. {plan.rationale}",
            "",
            *[f"- {action}" for action in plan.strategic_actions],
            "",
        ]
    if result.proposal is not None:
        lines += ["## Trader's proposal", "", *_position(result.proposal)]
    lines += _risk(result) + _who(result)
    if result.data_missing:
        lines += ["", "## Data missing", ""] + [f"- {item}" for item in result.data_missing]
    return "\n".join(lines) + "\n"


def _position(position: Position) -> list[str]:
    def price(value: float | None) -> str:
        return "-" if value is None else f"${value:,.2f}"

    return [
        "| action | size | entry | stop | target | horizon | conviction |",
        "|---|---|---|---|---|---|---|",
        f"| **{position.action}** | {position.size_fraction:.0%} | {price(position.entry)} "
        f"| {price(position.stop)} | {price(position.target)} | {position.horizon_days} days "
        f"| {position.conviction:.2f} |",
        "",
        position.rationale,
        "",
    ]


def _analyst(name: str, report: AnalystReport) -> list[str]:
    lines = [
        f"### {name.capitalize()}: {report.signal} (score {report.score:+.2f}, "
        f"confidence {report.confidence:.2f})",
        "",
        report.summary,
        "",
    ]
    lines += [f"- {e.fact} = {e.value:g}: {e.reading} ({e.lean})" for e in report.evidence]
    if report.missing:
        lines += [f"- missing: {item}" for item in report.missing]
    return [*lines, ""]


def _analysts(result: DeskResult) -> list[str]:
    found = [
        (name, report)
        for name in ("market", "sentiment", "news", "fundamentals")
        if (report := getattr(result, name)) is not None
    ]
    if not found:
        return []
    lines = ["## Analysts", ""]
    for name, report in found:
        lines += _analyst(name, report)
    return lines


def _memories(result: DeskResult) -> list[str]:
    if not result.memories:
        return []
    lines = ["## Similar past situations", ""]
    for memory in result.memories:
        lines.append(
            f"- {memory.symbol} on {memory.decided_at.date()} (distance {memory.distance:.3f}, "
            f"written {memory.written_at.date()}): {memory.lesson}"
        )
    return [*lines, ""]


def _rounds(title: str, entries: list[tuple[int, str, str, str, str | None]]) -> list[str]:
    """A debate in speaking order: per round the arguments (spoken at once), then the
    rebuttals (each answering the others' arguments of that round)."""
    if not entries:
        return []
    lines = [f"## {title}", ""]
    for number, spoken in groupby(entries, key=lambda e: e[0]):
        lines += [f"### Round {number}", ""]
        for _, speaker, part, said, rebuttal in spoken:
            verb = "argues" if part == "argument" else "answers"
            lines += [f"**{speaker.capitalize()}** {verb} {said}", ""]
            if rebuttal:
                lines += [f"> {rebuttal}", ""]
    return lines


def _debate(result: DeskResult) -> list[str]:
    return _rounds(
        "Investment debate",
        [
            (
                e.round,
                e.speaker,
                e.part,
                f"(conviction {e.turn.conviction:.2f}): {e.turn.argument}",
                e.turn.rebuttal,
            )
            for e in result.debate
        ],
    )


def _risk(result: DeskResult) -> list[str]:
    return _rounds(
        "Risk discussion",
        [
            (
                e.round,
                e.speaker,
                e.part,
                f"({e.view.stance}, size {e.view.recommended_size:.2f}): {e.view.argument}",
                e.view.rebuttal,
            )
            for e in result.risk_debate
        ],
    )


def _who(result: DeskResult) -> list[str]:
    return agents_table(result.agents)
