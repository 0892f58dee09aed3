"""The alphadesk web UI (``alphadesk ui``): the desks with live progress, the assistant, the
recorded runs, the paper portfolio and the fund, all over the HTTP API.

This runs on the UI server: it alone talks to the API, at the address and with the key it
was started with. The browser sees what is drawn here, never the key.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from functools import partial
from typing import Any

import httpx
import pandas as pd
import streamlit as st

from alphadesk.ui.client import ApiClient, ApiFailure
from alphadesk.ui.format import (
    day,
    eval_table,
    inert,
    money,
    orders_table,
    positions_table,
    runs_table,
)
from alphadesk.ui.progress import Progress
from alphadesk.ui.views import show_run

_ANALYSTS = ["market", "sentiment", "news", "fundamentals"]
_KINDS = ["all", "desk", "fund", "csp", "assistant", "algo"]
_INDICES = ["", "dow30", "nasdaq100", "sp500"]
_EARLIEST = date(1970, 1, 1)


def _client() -> tuple[ApiClient, dict[str, Any]] | None:
    """The API this server was started with; the sidebar says where, and whether a key is
    set, never the key."""
    client = ApiClient.from_environment()
    st.sidebar.caption(inert(f"API: {client.url}"))
    st.sidebar.caption(inert(f"API key: {'set on the server' if client.has_key else 'not set'}"))
    try:
        health = client.get("/health")
    except ApiFailure as exc:
        client.close()
        st.error(inert(f"the API at {client.url} refused: {exc}"))
        if exc.status == 401:
            st.info("set ALPHADESK_API_KEY where `alphadesk ui` runs, then start it again")
        return None
    except httpx.HTTPError as exc:
        client.close()
        st.error(inert(f"the API at {client.url} does not answer: {exc}"))
        st.info("start it with `alphadesk serve`, then reload this page")
        return None
    st.sidebar.caption(
        inert(
            f"alphadesk {health['version']} · data: {', '.join(health['providers'])} · model: "
            f"{health['default_model']} · runs: {health['runs_active']}/{health['max_runs']}"
        )
    )
    return client, health


def _model(health: dict[str, Any], key: str) -> str | None:
    models = health["models"]
    if len(models) == 1:
        return None
    return str(st.selectbox("model", models, key=key))


def _as_of(key: str, label: str = "as of the close of", of: str = "the symbol") -> str | None:
    """A date, or None: the server then takes the last close the data covers."""
    chosen = st.date_input(
        f"{label} (empty: the last the data covers)",
        value=None,
        min_value=_EARLIEST,
        max_value=datetime.now(UTC).date(),
        key=key,
        help=f"Empty: the last close the data covers for {of} (or now, with live data).",
    )
    return chosen.isoformat() if isinstance(chosen, date) else None


def _stream_run(
    client: ApiClient, path: str, body: dict[str, Any], symbol: str | None = None
) -> Progress:
    """Run a desk over its stream, redrawing the agents and the debate as events arrive
    (``symbol``: what its status says it is about, default the body's symbol)."""
    progress = Progress()
    symbol = symbol or body["symbol"]
    status = st.status(inert(f"{symbol}: starting"), expanded=True)
    table, debate = status.empty(), status.empty()
    try:
        for event in client.stream(path, body):
            progress.add(event.event, event.data)
            if event.event in ("step_started", "step_finished", "tool_started", "result"):
                table.dataframe(pd.DataFrame(progress.rows()), hide_index=True)
                status.update(label=inert(f"{_at(symbol, progress)}: {progress.events} events"))
            elif event.event == "debate_message":
                debate.markdown(inert("\n\n".join(progress.debate[-6:])))
    except ApiFailure as exc:
        status.update(label=inert(f"{symbol}: refused"), state="error")
        st.error(inert(str(exc)))
        return progress
    if progress.error:
        status.update(label="failed", state="error")
        st.error(inert(progress.error.get("message", "the run failed")))
    else:
        label = f"{_at(symbol, progress)}: done, run {progress.run_id}"
        status.update(label=inert(label), state="complete")
    return progress


def _at(symbol: str, progress: Progress) -> str:
    return f"{symbol} as of {day(progress.as_of)}" if progress.as_of else symbol


def _desk_tab(client: ApiClient, health: dict[str, Any]) -> None:
    with st.form("desk"):
        symbol = st.text_input("symbol", "NVDA", key="desk_symbol")
        as_of = _as_of("desk_as_of")
        analysts = st.multiselect("analysts", _ANALYSTS, _ANALYSTS, key="desk_analysts")
        rounds = st.number_input("debate rounds", 1, 5, 1, key="desk_rounds")
        depth = st.selectbox("depth", ["quick", "standard", "deep"], 1, key="desk_depth")
        model = _model(health, "desk_model")
        go = st.form_submit_button("Decide", key="desk_go")
    if not go:
        return
    body = {"symbol": symbol, "as_of": as_of, "analysts": analysts, "rounds": int(rounds),
            "depth": depth, "model": model}  # fmt: skip
    progress = _stream_run(client, "/analyze/stream", body)
    if progress.result:
        result = progress.result
        final = result.get("final") or {}
        st.success(inert(f"{result['symbol']}: {result['decision']}"
                         + (f" at {final['entry']}" if final.get("entry") else "")))  # fmt: skip
        show_run(client, str(result["run_id"]))


def _fund_tab(client: ApiClient, health: dict[str, Any]) -> None:
    with st.form("fund"):
        names = st.text_input("symbols", "AAPL JPM PG", key="fund_symbols")
        universe = st.selectbox("or every member of", _INDICES, key="fund_universe")
        as_of = _as_of("fund_as_of", of="the symbols")
        account = st.text_input("paper account (its holdings and cash)", "paper",
                                key="fund_account")  # fmt: skip
        depth = st.selectbox("depth", ["quick", "standard", "deep"], 1, key="fund_depth")
        model = _model(health, "fund_model")
        go = st.form_submit_button("Rebalance", key="fund_go")
    if not go:
        return
    symbols = [s for s in names.replace(",", " ").split() if s] if not universe else None
    body = {"symbols": symbols, "universe": universe or None, "as_of": as_of,
            "account": account, "depth": depth, "model": model}  # fmt: skip
    progress = _stream_run(client, "/fund/stream", body, universe or " ".join(symbols or []))
    if progress.result:
        result = progress.result
        orders = len(result.get("orders") or [])
        after = result.get("cash_after")
        said = f"{result['symbol']}: {result['decision']}, {orders} order(s)"
        said += f", cash after {money(after)}" if after is not None else ""
        said += f" ({result['reason']})" if result.get("reason") else ""
        st.success(inert(said))
        show_run(client, str(result["run_id"]))


def _csp_tab(client: ApiClient, health: dict[str, Any]) -> None:
    with st.form("csp"):
        symbol = st.text_input("symbol", "NVDA", key="csp_symbol")
        as_of = _as_of("csp_as_of")
        depth = st.selectbox("depth", ["quick", "standard", "deep"], 1, key="csp_depth")
        model = _model(health, "csp_model")
        with st.expander("the put to sell"):
            dte = st.slider("days to expiry", 0, 120, (14, 45), key="csp_dte")
            delta = st.slider("|delta|", 0.05, 0.50, (0.15, 0.30), 0.01, key="csp_delta")
            roc = st.number_input("least premium, % of the strike a week", 0.0, 5.0, 0.3, 0.05,
                                  key="csp_roc")  # fmt: skip
        go = st.form_submit_button("Find a put", key="csp_go")
    if not go:
        return
    constraints = {"dte_min": dte[0], "dte_max": dte[1], "delta_min": delta[0],
                   "delta_max": delta[1], "min_weekly_roc": roc}  # fmt: skip
    body = {"symbol": symbol, "as_of": as_of, "depth": depth, "model": model,
            "constraints": constraints}  # fmt: skip
    progress = _stream_run(client, "/csp/stream", body)
    if progress.result:
        result = progress.result
        st.success(inert(f"{result['symbol']}: {result['decision']}"
                         + (f" ({result['reason']})" if result.get("reason") else "")))  # fmt: skip
        show_run(client, str(result["run_id"]))


def _chat_tab(client: ApiClient, health: dict[str, Any]) -> None:
    as_of = _as_of("chat_as_of", "answer as of the close of", "the symbols asked about")
    model = _model(health, "chat_model")
    history: list[tuple[str, str]] = st.session_state.setdefault("chat", [])
    for role, text in history:
        st.chat_message(role).markdown(inert(text))
    question = st.chat_input("Ask about a symbol, e.g. how does NVDA look?")
    if not question:
        return
    st.chat_message("user").markdown(inert(question))
    history.append(("user", question))
    body = {"question": question, "session_id": st.session_state.get("chat_session"),
            "as_of": as_of, "model": model}  # fmt: skip
    steps = st.status("thinking", expanded=False)
    answer = st.chat_message("assistant").empty()
    text = ""
    try:
        for event in client.stream("/chat/v3", body):
            data = event.data
            if event.event == "state":
                steps.update(label=inert(data["state"].lower()))
            elif event.event == "tool_started" and data["agent"] != "classifier":
                steps.write(inert(f"→ {data['tool']}"))
            elif event.event == "text_delta" and data["agent"] == "answer":
                text += data["text"]
                answer.markdown(inert(text))
            elif event.event == "chat_finished":
                result = data["result"]
                st.session_state["chat_session"] = result["session_id"]
                text = result["answer"] or result.get("error") or ""
                answer.markdown(inert(text))
                steps.write(inert(f"as of the close of {day(result.get('as_of'))}"))
    except ApiFailure as exc:
        st.error(inert(str(exc)))
        return
    steps.update(label="done", state="complete")
    history.append(("assistant", text))


def _runs_tab(client: ApiClient) -> None:
    kind = st.selectbox("kind", _KINDS, key="runs_kind")
    runs = client.get("/runs", limit=50, kind=None if kind == "all" else kind)
    if not runs:
        st.info("no runs yet: start one in a desk's tab or ask the assistant")
        return
    st.dataframe(runs_table(runs), hide_index=True)
    titles = {r["id"]: f"{r['id']} · {r['kind']} · {r['title']}" for r in runs}
    chosen = st.selectbox("run", list(titles), format_func=titles.__getitem__, key="runs_pick")
    if chosen:
        show_run(client, chosen)


def _portfolio_tab(client: ApiClient) -> None:
    as_of = _as_of("pf_as_of", "value at the close of", "the positions held")
    _order_form(client)
    report = client.get("/portfolio", as_of=as_of)
    st.caption(inert(f"paper account {report['account']}, valued at the close of "
                     f"{day(report['as_of'])}"))  # fmt: skip
    cols = st.columns(4)
    cols[0].metric("account value", money(report["account_value"]))
    cols[1].metric("cash", money(report["cash"]))
    cols[2].metric("positions", money(report["market_value"]))
    cols[3].metric("P&L", money(report["total_pnl"]), f"{report['total_pnl_pct']:+.2f}%")
    if report["positions"]:
        table, notes = positions_table(report["positions"])
        st.dataframe(table, hide_index=True)
        for note in notes:
            st.caption(inert(note))
    orders = client.get("/portfolio/transactions")
    if orders:
        st.markdown("**Orders**")
        st.dataframe(orders_table(orders), hide_index=True)
    if report.get("dividends"):
        st.markdown("**Dividends credited** (on the ex-date, to the shares held the close before)")
        st.dataframe(report["dividends"], hide_index=True)
    for note in report.get("dividend_basis", []):
        if note.startswith("no dividend records"):
            st.caption(inert(note))


def _order_form(client: ApiClient) -> None:
    """A paper order by hand, filled at the close of its trade date (a stock at that close)."""
    with st.expander("place an order"), st.form("order"):
        left, middle, right = st.columns(3)
        side = left.radio("side", ["buy", "sell"], horizontal=True, key="order_side")
        symbol = middle.text_input("symbol", "NVDA", key="order_symbol")
        quantity = right.number_input("quantity", 1.0, 1e6, 10.0, key="order_quantity")
        kind = left.radio("contract", ["stock", "put", "call"], horizontal=True, key="order_kind")
        strike = middle.number_input("strike (options)", 0.0, 1e6, 0.0, key="order_strike")
        expiration = right.date_input("expiration (options)", None, _EARLIEST,
                                      key="order_expiration")  # fmt: skip
        price = left.number_input("price per share (0: the close, stocks)", 0.0, 1e6, 0.0,
                                  key="order_price")  # fmt: skip
        with middle:
            as_of = _as_of("order_as_of", "trade date")
        go = st.form_submit_button("Place", key="order_go")
    if not go:
        return
    body: dict[str, Any] = {"side": side, "symbol": symbol, "quantity": quantity, "as_of": as_of,
                            "price": price or None}  # fmt: skip
    if kind != "stock":
        body |= {"right": kind, "strike": strike or None,
                 "expiration": expiration.isoformat() if expiration else None}  # fmt: skip
    try:
        order = client.post("/portfolio/orders", body)
    except ApiFailure as exc:  # refused (cash, a missing price...): said, the tab goes on
        st.error(inert(str(exc)))
        return
    st.success(inert(f"{order['side']} {order['quantity']:g} {order['contract']['symbol']} "
                     f"at {money(order['price'])} on {day(order.get('as_of'))} "
                     f"(order {order['id']})"))  # fmt: skip


def _evals_tab(client: ApiClient) -> None:
    saved = client.get("/evals")
    if not saved:
        st.info("no evaluation yet: run `alphadesk eval` (e.g. --symbols AAPL,MSFT) and reload")
        return
    name = st.selectbox("evaluation", [e["name"] for e in saved], key="eval_pick")
    table = client.get(f"/evals/{name}")
    spec = table["spec"]
    st.caption(inert(f"{spec['desk']} desk with {spec['model']}, {spec['start']} to "
                     f"{spec['end']}, every {spec['every']} sessions"))  # fmt: skip
    st.dataframe(eval_table(table["rows"]), hide_index=True)
    left, right = st.columns(2)
    for column, chart in ((left, "equity.png"), (right, "drawdown.png")):
        image = client.raw(f"/evals/{name}/{chart}")
        if image:
            column.image(image, caption=chart.removesuffix(".png"))


def main() -> None:
    st.set_page_config(page_title="alphadesk", layout="wide")
    st.title("alphadesk")
    connected = _client()
    if connected is None:
        return
    client, health = connected
    tabs: dict[str, Callable[[], None]] = {
        "Trading desk": partial(_desk_tab, client, health),
        "Cash-secured puts": partial(_csp_tab, client, health),
        "Assistant": partial(_chat_tab, client, health),
        "Runs": partial(_runs_tab, client),
        "Evaluation": partial(_evals_tab, client),
        "Portfolio": partial(_portfolio_tab, client),
        "Fund": partial(_fund_tab, client, health),
    }
    try:
        for container, draw in zip(st.tabs(list(tabs)), tabs.values(), strict=True):
            with container:
                _drawn(draw)
    finally:
        client.close()


def _drawn(draw: Callable[[], None]) -> None:
    """Draw one tab; what goes wrong in it is said in it, and the other tabs still draw."""
    try:
        draw()
    except ApiFailure as exc:
        st.error(inert(str(exc)))
    except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:  # an API gone or odd
        st.error(inert(f"this tab could not be drawn: {type(exc).__name__}: {exc}"))


if __name__ == "__main__":
    main()
