"""The common questions as MCP prompts: each a message that tells the client's model
which of this server's tools and resources answer it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from mcp import types
from mcp.shared.exceptions import MCPError

from alphadesk.data.symbols import InvalidSymbol, normalize_symbol
from alphadesk.store.redact import redact
from alphadesk.store.runs import RunNotFound, RunStore

__all__ = ["Prompts"]

_SYMBOL = types.PromptArgument(name="symbol", description="A ticker, e.g. NVDA.", required=True)
_AS_OF = types.PromptArgument(
    name="as_of", description="The close to analyse at (YYYY-MM-DD). Default: the latest."
)
_MAX_REPORT = 20_000  # characters of a report quoted in explain_run


def _when(arguments: dict[str, str]) -> str:
    day = arguments.get("as_of")
    return f' with as_of "{day}"' if day else ""


def _csp(arguments: dict[str, str]) -> str:
    symbol, when = arguments["symbol"], _when(arguments)
    return (
        f"Analyse {symbol} for a cash-secured put. Call run_csp_desk with symbol "
        f'"{symbol}"{when}. Then read the run\'s report (alphadesk://runs/<run_id>/report) '
        "and tell me: whether the desk would sell a put, which strike and expiry, the "
        "premium and the return on the cash set aside, the support levels behind the strike, "
        "and what would make it a bad trade. Quote only numbers the tools gave."
    )


def _buy(arguments: dict[str, str]) -> str:
    symbol, when = arguments["symbol"], _when(arguments)
    return (
        f'Should I buy {symbol}? Call run_trading_desk with symbol "{symbol}"{when}. Then '
        "read the run's report (alphadesk://runs/<run_id>/report) and tell me the decision "
        "(BUY, HOLD or SELL), the size, entry, stop and target, the strongest bull and bear "
        "arguments of the debate, and what the risk judge worried about."
    )


def _screen(arguments: dict[str, str]) -> str:
    symbols = arguments.get("symbols", "").strip()
    which = f'symbols {[s.strip() for s in symbols.split(",") if s.strip()]}' if symbols else (
        "no symbols (the whole universe, alphadesk://data/universe)"
    )  # fmt: skip
    return (
        f"Screen for cash-secured puts: call screen with {which}{_when(arguments)}. Rank "
        "the candidates it selected by return on cash, say why the others were filtered "
        "out, and point me to each candidate's run (alphadesk://runs/<run_id>)."
    )


@dataclass(frozen=True)
class _Prompt:
    prompt: types.Prompt
    text: Callable[[dict[str, str]], str]


@dataclass(frozen=True)
class Prompts:
    """The prompts of one server (``explain_run`` reads its run store)."""

    runs: RunStore

    def _explain(self, arguments: dict[str, str]) -> str:
        run_id = arguments["run_id"]
        try:
            run = self.runs.get(run_id)
        except RunNotFound:
            raise MCPError(
                types.INVALID_PARAMS,
                f"no recorded run {run_id[:64]!r}; alphadesk://runs lists the recent ones",
            ) from None
        report = next((a.path for a in self.runs.artifacts(run_id) if a.name == "report.md"), None)
        body = report.read_text(encoding="utf-8")[:_MAX_REPORT] if report else (
            f"(no report: the run is {run.status}; {run.error or 'no error recorded'})"
        )  # fmt: skip
        return redact(
            f"Explain run {run.id} ({run.kind}, {run.title}, {run.status}) to me in plain "
            "words: what was decided and why, which numbers drove it, what data was missing "
            "and what the agents disagreed on. Its report:\n\n" + body
        )

    def _all(self) -> dict[str, _Prompt]:
        run_id = types.PromptArgument(name="run_id", description="A run's id.", required=True)
        symbols = types.PromptArgument(
            name="symbols", description="Comma-separated tickers. Default: the whole universe."
        )
        listed = [
            (types.Prompt(name="csp_candidate", title="Analyse a stock for a cash-secured put",
                          arguments=[_SYMBOL, _AS_OF],
                          description="Run the CSP desk on SYMBOL and explain its put."), _csp),
            (types.Prompt(name="should_i_buy", title="Should I buy this stock?",
                          arguments=[_SYMBOL, _AS_OF],
                          description="Run the trading desk on SYMBOL and explain its "
                          "decision."), _buy),
            (types.Prompt(name="screen_universe", title="Screen for cash-secured puts",
                          arguments=[symbols, _AS_OF],
                          description="Screen the universe (or SYMBOLS) and rank the puts."),
             _screen),
            (types.Prompt(name="explain_run", title="Explain a recorded run",
                          arguments=[run_id],
                          description="Explain a recorded run from its report."),
             self._explain),
        ]  # fmt: skip
        return {prompt.name: _Prompt(prompt, text) for prompt, text in listed}

    def listed(self) -> list[types.Prompt]:
        return [p.prompt for p in self._all().values()]

    def get(self, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        """The prompt's message with ``arguments`` filled in; a missing argument, a bad
        symbol or an unknown prompt is an MCP error that says so."""
        known = self._all()
        found = known.get(name)
        if found is None:
            names = ", ".join(known)
            raise MCPError(types.INVALID_PARAMS, f"no prompt {name[:80]!r}; the prompts: {names}")
        given = {k: v for k, v in (arguments or {}).items() if v.strip()}
        missing = [
            a.name for a in found.prompt.arguments or [] if a.required and a.name not in given
        ]
        if missing:
            raise MCPError(types.INVALID_PARAMS, f"prompt {name} needs {', '.join(missing)}")
        try:
            if "symbol" in given:
                given["symbol"] = normalize_symbol(given["symbol"])
            if "as_of" in given:
                given["as_of"] = date.fromisoformat(given["as_of"].strip()).isoformat()
        except (InvalidSymbol, ValueError) as exc:
            raise MCPError(
                types.INVALID_PARAMS, f"prompt {name}: {exc}; dates are YYYY-MM-DD"
            ) from None
        text = found.text(given)
        message = types.PromptMessage(role="user", content=types.TextContent(text=text))
        return types.GetPromptResult(description=found.prompt.description, messages=[message])
