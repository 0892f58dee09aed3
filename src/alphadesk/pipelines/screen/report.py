"""The screen's Markdown report: its counts, then each date's best puts and its errors."""

from __future__ import annotations

from alphadesk.pipelines.screen.models import ScreenHistory
from alphadesk.pipelines.screen.prefilter import ScreenResult

__all__ = ["render_report"]

_REPORTED = 10  # selections listed per date in the report


def render_report(history: ScreenHistory) -> str:
    """The screen in Markdown: its counts, then each date's best puts and its errors."""
    c = history.counts
    lines = [
        f"# CSP screen: {history.symbol}",
        "",
        f"{c.symbol_dates} symbol-dates on {c.dates} date(s): {c.filtered} filtered out before "
        f"any model call, {c.analysed} analysed by the desk ({c.selected} selected, "
        f"{c.failed} failed), {c.errors} errors.",
    ]
    for screen in history.screens:
        lines += _date_section(screen)
    lines += ["", "Every outcome: " + ", ".join(p.name for p in history.table)]
    return "\n".join(lines) + "\n"


def _date_section(screen: ScreenResult) -> list[str]:
    selected = [r for r in screen.results if r.decision == "select"]
    lines = [
        "",
        f"## {screen.as_of.date()}",
        "",
        f"{len(screen.checks)} screened, {len(screen.filtered)} filtered out, "
        f"{len(screen.results)} analysed, {len(selected)} selected.",
    ]
    if selected:
        lines += ["", "| # | symbol | put | dte | premium | delta | %/week |", "|---" * 7 + "|"]
    for rank, result in enumerate(selected[:_REPORTED], 1):
        o = result.options
        put = f"{o.best_expiration} {o.best_strike:g}" if o else "-"
        dte, premium = (str(o.dte), f"{o.premium:.2f}") if o else ("-", "-")
        delta = f"{o.delta:.2f}" if o and o.delta is not None else "-"
        roc = f"{o.weekly_roc:.2f}" if o and o.weekly_roc is not None else "-"
        lines.append(f"| {rank} | {result.symbol} | {put} | {dte} | {premium} | {delta} | {roc} |")
    if screen.errors:
        lines += ["", "Errors (neither filtered out nor analysed):", ""]
        lines += [f"- {check.symbol}: {check.error}" for check in screen.errors]
    return lines
