"""A fund run in Markdown: the book before, each name's weight now and its target with
the reason, the orders, the cash after, and what each desk's analysts missed."""

from __future__ import annotations

from alphadesk.money import usd
from alphadesk.pipelines.fund.models import FundResult

__all__ = ["render_report"]


def render_report(result: FundResult) -> str:
    book = result.book
    lines = [
        f"# Fund: {result.symbol} as of {result.as_of:%Y-%m-%d}",
        "",
        f"**{result.decision.upper()}** · account {book.account} · cash {usd(book.cash)}"
        + (f" · NAV {usd(result.nav)}" if result.nav is not None else ""),
    ]
    lines += [f"\n{note}" for note in book.notes]
    lines += ["", f"Limits: {result.limits.describe()}."]
    if result.decision == "failed":
        lines += ["", f"Failed at {result.stage}: {result.reason}"]
    lines += _desks(result)
    if result.targets:
        lines += [
            "",
            "## Weights",
            "",
            "| symbol | desk | price | now | target | after | reason |",
            "|---|---|--:|--:|--:|--:|---|",
        ]
        decided = {d.symbol: d.decision for d in result.desks}
        lines += [
            f"| {t.symbol} | {decided.get(t.symbol, '-')} | {t.price:,.2f} | {t.weight:.2%} | "
            f"{t.target:.2%} | {t.after:.2%} | {t.reason} |"
            for t in result.targets
        ]
    if result.rationale:
        lines += ["", result.rationale]
    if result.cash_after is not None:
        lines += _orders(result)
    lines += _missed(result)
    return "\n".join(lines) + "\n"


def _desks(result: FundResult) -> list[str]:
    lines = [
        "",
        "## The desks",
        "",
        "| symbol | decision | conviction | run |",
        "|---|---|--:|---|",
    ]
    for d in result.desks:
        conviction = "-" if d.conviction is None else f"{d.conviction:.2f}"
        decision = d.decision if d.decision != "failed" else f"failed ({d.reason})"
        lines.append(f"| {d.symbol} | {decision} | {conviction} | {d.run_id or '-'} |")
    return lines


def _orders(result: FundResult) -> list[str]:
    assert result.cash_after is not None
    lines = ["", "## Orders", ""]
    if not result.orders:
        lines.append("None: every name is where its target puts it (or within the minimum trade).")
    else:
        lines += ["| side | shares | symbol | price | value | cost |", "|---|--:|---|--:|--:|--:|"]
        lines += [
            f"| {o.side} | {o.quantity:g} | {o.contract.symbol} | {o.price:,.2f} | "
            f"{usd(o.quantity * o.price)} | {usd(o.fees)} |"
            for o in result.orders
        ]
    lines += ["", f"Cash after: {usd(result.cash_after)} (costs {usd(result.costs)})."]
    if result.orders:
        account = result.book.account
        lines[-1] += (
            f" Place them with `alphadesk portfolio follow {result.run_id} --account {account}`."
        )
    return lines


def _missed(result: FundResult) -> list[str]:
    """Each analyst's missing data: what it missed on every name once, then per name
    what it missed there only."""
    desks = [d for d in result.desks if d.decision != "failed" or d.missed]
    if not any(d.missed for d in desks):
        return []
    analysts = list(dict.fromkeys(a for d in desks for a in d.missed))
    everywhere = {
        a: [
            item
            for item in desks[0].missed.get(a, [])
            if all(item in d.missed.get(a, []) for d in desks)
        ]
        for a in analysts
    }
    lines = ["", "## What each analyst missed"]
    shared = [(a, items) for a, items in everywhere.items() if items]
    if shared and len(desks) > 1:
        lines += ["", "On every name:", ""]
        lines += [f"- {a}: {_cut(item)}" for a, items in shared for item in items]
    for desk in desks:
        own = [(a, item) for a, items in desk.missed.items() for item in items
               if len(desks) == 1 or item not in everywhere.get(a, [])]  # fmt: skip
        if own:
            lines += ["", f"On {desk.symbol}:", ""]
            lines += [f"- {a}: {_cut(item)}" for a, item in own]
    return lines


def _cut(item: str, chars: int = 160) -> str:
    return item if len(item) <= chars else item[: chars - 1].rsplit(" ", 1)[0] + "…"
