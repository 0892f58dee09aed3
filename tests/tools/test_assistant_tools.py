"""The assistant's tools on the bundled real data: market overview, positions, the 0DTE
engine, deep thinking, web search and the desk tools."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from alphadesk.agent import ModelRetry, RunContext
from alphadesk.analytics.zero_dte import VolSurface, build_zero_dte, session_years
from alphadesk.data.calendar import session_close
from alphadesk.data.errors import DataError
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.data.rates import risk_free_rate
from alphadesk.data.web import TavilySearch
from alphadesk.portfolio import Contract, OrderRequest, PaperPortfolio
from alphadesk.tools.assistant.deps import ChatDeps, DeskVerdict
from alphadesk.tools.assistant.desks import DESK_TOOLS
from alphadesk.tools.assistant.overview import get_market_overview
from alphadesk.tools.assistant.positions import get_positions
from alphadesk.tools.assistant.reasoning import think_deeply, web_search
from alphadesk.tools.options.zero_dte import run_zero_dte_engine

CLOSE_2018 = session_close(date(2018, 12, 31))


def _ctx(deps: ChatDeps, as_of: datetime = CLOSE_2018) -> RunContext[ChatDeps]:
    return RunContext(deps=deps, as_of=as_of, run_id="t", agent="test")


@pytest.fixture
def chat_deps(bundled: BundledProvider, tmp_path: Path) -> ChatDeps:
    return ChatDeps(market=bundled, portfolio=PaperPortfolio(tmp_path / "p.sqlite"))


async def test_the_0dte_engine_runs_offline_on_the_index_and_vix(
    chat_deps: ChatDeps, bundled: BundledProvider
) -> None:
    report = await run_zero_dte_engine.call(_ctx(chat_deps), {"strategy": "strangle"})
    index = bundled.quote("^GSPC", CLOSE_2018).price
    vix = bundled.quote("^VIX", CLOSE_2018).price
    assert report.source.origin == "modeled" and "/ 10" in report.underlying_basis
    assert report.underlying_price == pytest.approx(index / 10, abs=0.01)
    assert report.vix == vix and report.session == date(2019, 1, 2)
    assert report.minutes_to_expiry == 390  # closed: the next session, from its open
    expected = build_zero_dte(
        index / 10,
        session_years(390),
        risk_free_rate(CLOSE_2018).rate,
        VolSurface(vix / 100),
        "strangle",
        target_delta=0.10,
    )
    assert [leg.strike for leg in report.legs] == [leg.strike for leg in expected.legs]
    assert report.credit_total == pytest.approx(expected.credit * 100, abs=0.01)
    assert report.max_loss_total is None  # a naked call
    assert report.probability_of_profit_pct == pytest.approx(expected.pop * 100, abs=0.05)
    condor = await run_zero_dte_engine.call(
        _ctx(chat_deps), {"strategy": "put_only", "wing_width": 5.0, "contracts": 2}
    )
    assert condor.max_loss_total == pytest.approx((5.0 - condor.credit) * 200, abs=1.0)


async def test_the_0dte_engine_uses_the_minutes_left_when_the_market_is_open(
    chat_deps: ChatDeps,
) -> None:
    noon = datetime(2018, 12, 31, 17, 0, tzinfo=UTC)  # 12:00 New York
    report = await run_zero_dte_engine.call(_ctx(chat_deps, noon), {})
    assert report.session == date(2018, 12, 31) and report.minutes_to_expiry == 240


@pytest.mark.parametrize(
    ("day", "price"),
    [(date(2025, 1, 7), 588.63), (date(2025, 3, 7), 575.92)],  # StockBench SPY closes
)
async def test_the_market_overview_reads_spy_on_its_days(
    chat_deps: ChatDeps, day: date, price: float
) -> None:
    overview = await get_market_overview.call(_ctx(chat_deps, session_close(day)), {})
    assert (overview.spy_price, overview.spy_origin) == (price, "observed")


async def test_a_2025_day_without_spy_or_the_index_says_spy_is_missing(
    chat_deps: ChatDeps,
) -> None:
    # SPY's last bar before 2025-01-15 is of 01-07 and the index ends in 2018: no price,
    # neither a stale one passed off as that day's nor a modeled one.
    overview = await get_market_overview.call(_ctx(chat_deps, session_close(date(2025, 1, 15))), {})
    assert overview.spy_price is None and overview.spy_origin is None
    assert any("SPY is missing on 2025-01-15" in m for m in overview.missing)
    with pytest.raises(DataError, match="SPY is missing on 2025-01-15"):
        await run_zero_dte_engine.call(_ctx(chat_deps, session_close(date(2025, 1, 15))), {})


async def test_the_market_overview_models_spy_from_the_index(chat_deps: ChatDeps) -> None:
    overview = await get_market_overview.call(_ctx(chat_deps), {})
    assert overview.spy_price == pytest.approx(overview.sp500 / 10, abs=0.01)
    assert "modeled" in (overview.spy_basis or "")
    assert overview.market_open is False and overview.zero_dte_session == date(2019, 1, 2)
    assert overview.vix is not None and overview.volatility_source == "vix"


async def test_positions_are_marked_at_the_instant(
    chat_deps: ChatDeps, bundled: BundledProvider
) -> None:
    as_of = session_close(date(2012, 6, 29))
    assert chat_deps.portfolio is not None
    aapl = Contract(symbol="AAPL")
    chat_deps.portfolio.place(OrderRequest(contract=aapl, side="buy", quantity=10, price=500.0,
                                           as_of=session_close(date(2012, 6, 1))))  # fmt: skip
    # Traded after the instant: not in its valuation.
    chat_deps.portfolio.place(OrderRequest(contract=aapl, side="buy", quantity=1, price=500.0,
                                           as_of=session_close(date(2012, 7, 2))))  # fmt: skip
    report = await get_positions.call(_ctx(chat_deps, as_of), {})
    close = bundled.quote("AAPL", as_of).price
    (row,) = report.positions
    assert row.mark == pytest.approx(close) and row.unrealized_pnl == pytest.approx(
        (close - 500.0) * 10, abs=0.01
    )
    assert report.account_value == pytest.approx(100_000 - 5_000 + close * 10, abs=0.01)


class _Thinker:
    model_name = "deep-test"

    async def think(self, ctx: RunContext[Any], query: str, context: str | None) -> str:
        return f"REASONING:\nVIX is high ({context}).\nCONCLUSION:\nTrade smaller."


async def test_think_deeply_splits_reasoning_and_conclusion(chat_deps: ChatDeps) -> None:
    deps = ChatDeps(market=chat_deps.market, thinker=_Thinker())
    thought = await think_deeply.call(_ctx(deps), {"query": "size?", "context": "VIX 28"})
    assert thought.reasoning == "VIX is high (VIX 28)." and thought.conclusion == "Trade smaller."
    assert thought.model == "deep-test"


@pytest.fixture
def search_server() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            ok = self.headers.get("authorization") == "Bearer k"
            payload = {
                "results": [
                    {"title": "SPY", "url": "https://x.test/spy", "content": body["query"] * 2}
                ]
            }
            data = json.dumps(payload if ok else {"detail": "bad key"}).encode()
            self.send_response(200 if ok else 401)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    poll = {"poll_interval": 0.05}  # shutting down waits for the next poll
    threading.Thread(target=server.serve_forever, kwargs=poll, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


async def test_web_search_is_honest_about_when_it_cannot_search(
    chat_deps: ChatDeps, search_server: str
) -> None:
    now = datetime.now(UTC)
    live = ChatDeps(market=chat_deps.market, web=TavilySearch("k", base_url=search_server))
    found = await web_search.call(_ctx(live, now), {"query": "spy"})
    assert found.available and found.results[0].snippet == "spyspy"
    historical = await web_search.call(_ctx(live), {"query": "spy"})
    assert not historical.available and "historical" in historical.missing[0]
    no_key = ChatDeps(market=chat_deps.market, web=TavilySearch(None, base_url=search_server))
    report = await web_search.call(_ctx(no_key, now), {"query": "spy"})
    assert not report.available and "TAVILY_API_KEY" in report.missing[0]
    bad_key = ChatDeps(market=chat_deps.market, web=TavilySearch("x", base_url=search_server))
    report = await web_search.call(_ctx(bad_key, now), {"query": "spy"})
    assert not report.available and "rejected" in report.missing[0]
    offline = ChatDeps(
        market=chat_deps.market, web=TavilySearch("k", base_url="http://127.0.0.1:9")
    )
    report = await web_search.call(_ctx(offline, now), {"query": "spy"})
    assert not report.available and "unavailable" in report.missing[0]


class _Desk:
    async def run(self, symbol: str, as_of: datetime) -> DeskVerdict:
        return DeskVerdict(desk="csp", symbol=symbol, decision="select", summary="ok")


async def test_the_desk_tool_runs_the_registered_desk(chat_deps: ChatDeps) -> None:
    tool = DESK_TOOLS.get("run_csp_desk")
    assert tool is not None and "cash-secured-put desk" in tool.spec.description
    deps = ChatDeps(market=chat_deps.market, desks={"csp": _Desk()})
    verdict = await tool.call(_ctx(deps), {"symbol": " nvda"})
    assert verdict.symbol == "NVDA" and verdict.decision == "select"
    with pytest.raises(ModelRetry, match="not available"):
        await tool.call(_ctx(chat_deps), {"symbol": "NVDA"})
