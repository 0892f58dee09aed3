"""The web UI, run by Streamlit's own test harness against a real API server that asks for
a key: it renders what the API answers, only through the API, and never shows the key."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.serving import ServerConfig
from alphadesk.ui import app as ui_app
from alphadesk.ui.client import ApiClient, ApiFailure, parse_sse
from alphadesk.ui.progress import Progress
from tests.api.conftest import DAY, api_settings
from tests.support.live_api import LiveApi

pytestmark = pytest.mark.slow

APP = str(Path(ui_app.__file__))
KEY = "ui-test-key-7Qx9Zr2Lm"  # distinctive: found anywhere it leaked


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    config = ServerConfig(api_key=KEY, rate_per_minute=1_000_000, max_runs=64)
    with LiveApi(api_settings(tmp_path_factory.mktemp("ui")), config) as live:
        yield live


@pytest.fixture
def app(api: LiveApi, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("ALPHADESK_API_URL", api.url)
    monkeypatch.setenv("ALPHADESK_API_KEY", KEY)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [s.value for s in at.success]
    return "\n".join(str(p) for p in parts)


def _drawn(node: Any) -> Iterator[str]:
    """Every element the page is sent, as its message (what a browser receives)."""
    proto = getattr(node, "proto", None)
    if proto is not None:
        yield str(proto)
    for child in getattr(node, "children", {}).values():
        yield from _drawn(child)


def test_the_sidebar_says_where_the_api_is_and_never_holds_its_key(
    api: LiveApi, app: AppTest
) -> None:
    captions = [c.value for c in app.sidebar.caption]
    assert captions[:2] == [f"API: {api.url}", "API key: set on the server"]
    assert not app.sidebar.text_input  # neither the address nor the key can be changed here
    assert "model: rules" in captions[2]  # the API answered: the server sent the key
    app.tabs[3].selectbox(key="runs_kind").set_value("all").run()  # a rerun sends it again
    assert not any(KEY in message for message in _drawn(app._tree))


def test_without_the_key_the_ui_says_where_to_set_it(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ALPHADESK_API_KEY")
    app.run()
    assert [c.value for c in app.sidebar.caption][1] == "API key: not set"
    assert app.error[0].value.startswith("the API at http://127.0.0.1:")
    assert "a valid API key is required" in app.error[0].value
    assert "set ALPHADESK_API_KEY where `alphadesk ui` runs" in app.info[0].value


def test_every_date_is_optional_and_empty_means_the_last_close_the_data_covers(
    app: AppTest,
) -> None:
    dates = {d.key: d.value for d in app.date_input}
    assert dates == {
        "desk_as_of": None, "csp_as_of": None, "chat_as_of": None, "pf_as_of": None,
        "order_as_of": None, "order_expiration": None, "fund_as_of": None,
    }  # fmt: skip
    # With the defaults AAPL is analysed as of the last close its bundled bars cover.
    (last,) = [c.end for c in BundledProvider().coverage() if c.symbol == "AAPL"]
    app.text_input(key="desk_symbol").input("AAPL")
    app.button(key="desk_go").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert app.success[0].value.startswith("AAPL: ")
    assert app.status[0].label.startswith(f"AAPL as of {last}: done, run ")


def test_the_desk_tab_streams_a_decision_and_shows_its_report(app: AppTest) -> None:
    app.text_input(key="desk_symbol").input("NVDA")
    app.date_input(key="desk_as_of").set_value(date.fromisoformat(DAY))
    app.multiselect(key="desk_analysts").set_value(["market", "news"])
    app.button(key="desk_go").click().run()
    assert not app.exception, app.exception
    assert [s.value for s in app.success] == ["NVDA: BUY at 800.1"]  # the close as traded
    assert "# NVDA: BUY" in _texts(app)  # the run's report, fetched from /runs/{id}/report
    # Its chart is drawn from the bytes this server fetched (with its key), where the report
    # places it: no Markdown image pointing at a file on the API's machine.
    assert len(app.tabs[0].get("image")) == 1
    assert not any("![" in m.value for m in app.tabs[0].markdown)
    assert any(m.value.rstrip().endswith("## Chart") for m in app.tabs[0].markdown)
    table = app.dataframe[0].value
    assert set(table["agent"]) >= {"market", "news", "bull", "bear", "judge"}
    assert set(table["status"]) == {"completed"}


def test_the_fund_tab_streams_a_rebalance_and_shows_its_report(app: AppTest) -> None:
    app.date_input(key="fund_as_of").set_value(date(2025, 5, 15))
    app.button(key="fund_go").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    said = next(s.value for s in app.success)
    assert said.startswith("AAPL, JPM, PG: rebalance, 1 order(s), cash after $"), said
    texts = _texts(app)
    assert "# Fund: AAPL, JPM, PG as of 2025-05-15" in texts and "## Orders" in texts
    table = app.dataframe[-1].value
    assert list(table["agent"]).count("desk") == 3 and "portfolio_manager" in set(table["agent"])
    app.text_input(key="fund_symbols").input("AAPL ZZZQ")
    app.button(key="fund_go").click().run()
    assert next(e.value for e in app.error).startswith("ZZZQ: no provider had daily bars")


def test_the_csp_tab_and_an_unknown_symbol(app: AppTest) -> None:
    app.text_input(key="csp_symbol").input("ZZZQ")
    app.button(key="csp_go").click().run()
    assert next(e.value for e in app.error).startswith("ZZZQ: no provider had daily bars")
    app.text_input(key="csp_symbol").input("NVDA")
    app.button(key="csp_go").click().run()
    assert next(s.value for s in app.success).startswith("NVDA: select")


def test_the_csp_tab_sends_the_put_to_sell(api: LiveApi, app: AppTest) -> None:
    app.text_input(key="csp_symbol").input("NVDA")
    app.date_input(key="csp_as_of").set_value(date.fromisoformat(DAY))
    app.slider(key="csp_dte").set_value((20, 30))
    app.slider(key="csp_delta").set_value((0.10, 0.20))
    app.button(key="csp_go").click().run()
    assert not app.exception, app.exception
    said = next(s.value for s in app.success)  # NVDA as traded then (~$800) has such a put
    assert said == "NVDA: select", said
    with api.client() as client:
        (latest,) = client.get("/runs", params={"kind": "csp", "limit": 1}).json()
        run = client.get(f"/runs/{latest['id']}").json()
    assert run["request"]["constraints"] == {
        "dte_min": 20, "dte_max": 30, "delta_min": 0.10, "delta_max": 0.20,
        "min_weekly_roc": 0.3,
    }  # fmt: skip


def test_the_assistant_tab_streams_an_answer_as_of_its_date(app: AppTest) -> None:
    app.chat_input[0].set_value("how does NVDA look?").run()
    assert not app.exception, app.exception
    said = [m for m in app.chat_message]
    assert [m.name for m in said] == ["user", "assistant"]
    answer = said[1].markdown[0].value
    assert "NVDA" in answer and len(answer) > 40
    # Asked about AAPL as of a chosen date, it answers as of that close.
    app.date_input(key="chat_as_of").set_value(date(2012, 6, 29))
    app.chat_input[0].set_value("how does AAPL look?").run()
    assert not app.exception, app.exception
    answer = app.chat_message[-1].markdown[0].value
    assert "AAPL" in answer and "2012-06-29" in answer, answer


def test_the_runs_tab_shows_an_assistant_runs_question_answer_and_tool_calls(
    api: LiveApi, app: AppTest
) -> None:
    with api.client() as client:
        events = api.stream(client, "/chat/v3", {"question": "how does KO look?", "as_of": DAY})
    run_id = next(e.json()["result"]["run_id"] for e in events if e.event == "chat_finished")
    app.tabs[3].selectbox(key="runs_kind").set_value("assistant").run()
    app.tabs[3].selectbox(key="runs_pick").set_value(run_id).run()
    runs = app.tabs[3]
    assert not runs.error, [e.value for e in runs.error]
    question, answer = runs.chat_message
    assert question.markdown[0].value == "how does KO look?"
    assert "KO" in answer.markdown[0].value
    calls = runs.dataframe[-1].value
    assert list(calls.columns) == ["tool", "arguments", "seconds", "result"]
    assert len(calls) >= 2 and set(calls["result"]) == {"ok"}
    assert "get_technical_indicators" in set(calls["tool"])


def test_runs_and_portfolio_tabs_read_the_store(api: LiveApi, app: AppTest) -> None:
    with api.client() as client:
        run = client.post("/analyze", json={"symbol": "NVDA", "as_of": DAY}).json()
        client.post("/portfolio/follow", json={"run_id": run["run_id"], "quantity": 10})
    app.run()
    runs = app.tabs[3].dataframe[0].value
    assert list(runs.columns) == [
        "run", "kind", "title", "status", "as of", "model", "model calls", "cost"
    ]  # fmt: skip
    mine = runs[runs["run"] == run["run_id"]].iloc[0]
    assert (mine["as of"], mine["cost"]) == (DAY, "$0.0000")
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["cash"] == "$91,999.00"  # 10 NVDA bought at the judge's 800.10, as traded


def test_the_portfolio_tab_places_an_order_and_says_why_one_is_refused(app: AppTest) -> None:
    app.number_input(key="order_quantity").set_value(5.0)
    app.button(key="order_go").click().run()  # NVDA at the last close the data covers
    assert not app.exception, app.exception
    (filled,) = [s.value for s in app.success]
    assert filled.startswith("buy 5 NVDA at $") and " on 2025-02-14 (order " in filled
    transactions = app.tabs[5].dataframe[-1].value
    newest = transactions.iloc[0]
    assert (newest["trade date"], newest["contract"], newest["quantity"]) == (
        "2025-02-14",
        "NVDA",
        "5",
    )

    app.radio(key="order_kind").set_value("put")
    app.button(key="order_go").click().run()
    refused = [e.value for e in app.error]
    assert refused == [
        "an option needs right (put/call), strike and expiration "
        "(e.g. right=put, strike=120, expiration=2021-07-16)"
    ], refused
    app.number_input(key="order_strike").set_value(120.0)
    app.date_input(key="order_expiration").set_value(date(2021, 7, 16))
    app.button(key="order_go").click().run()
    refused = [e.value for e in app.error]
    assert refused == ["an option order needs a price (per share)"], refused
    assert {m.label for m in app.tabs[5].metric} >= {"cash"}  # the rest of the tab still drew


def test_a_position_without_a_price_says_so_in_a_word_and_explains_below(
    api: LiveApi, app: AppTest
) -> None:
    put = {"side": "buy", "symbol": "KO", "quantity": 1, "price": 1.0, "right": "put",
           "strike": 7.5, "expiration": "2021-07-16", "as_of": DAY}  # fmt: skip
    with api.client() as client:
        placed = client.post("/portfolio/orders", json=put)
    assert placed.status_code == 201, placed.text
    app.date_input(key="pf_as_of").set_value(date.fromisoformat(DAY)).run()
    portfolio = app.tabs[5]
    assert portfolio.caption[0].value.endswith("valued at the close of 2021-06-30")
    table = portfolio.dataframe[0].value
    row = table[table["position"] == "KO 2021-07-16 7.5P"].iloc[0]
    assert (row["mark"], row["mark basis"]) == ("–", "no price at this date")
    notes = [c.value for c in portfolio.caption[1:]]
    assert any(n.startswith("KO 2021-07-16 7.5P: ") and "chain" in n for n in notes), notes
    assert all(len(label) <= 32 for label in table["mark basis"])


def test_the_evaluation_tab_formats_percentages_and_missing_values(
    api: LiveApi, app: AppTest
) -> None:
    saved = api.settings.data_dir / "evals" / "by-hand"
    saved.mkdir(parents=True)
    spec = {"desk": "desk", "model": "rules", "start": DAY, "end": DAY, "every": 5}
    row = {"strategy": "desk", "symbol": "AAPL", "cumulative_return": 0.4005,
           "annualized_return": -0.0123, "sharpe": 1.016832, "max_drawdown": -0.262108,
           "win_rate": None, "trades": 1, "turnover": 1.584985, "costs": 1325.49,
           "model_calls": 112, "model_cost_usd": 0.0, "decisions": 7, "buy": 5, "hold": 1,
           "sell": 1, "failed": 0}  # fmt: skip
    baseline = row | {"strategy": "buy_hold", "decisions": None, "buy": None, "hold": None,
                      "sell": None, "failed": None, "model_calls": 0}  # fmt: skip
    table = {"spec": spec, "rows": [row, baseline]}
    (saved / "table.json").write_text(json.dumps(table), encoding="utf-8")
    try:
        app.run()
    finally:
        shutil.rmtree(saved)
    shown = app.tabs[4].dataframe[0].value
    assert list(shown.columns)[:7] == [
        "strategy", "symbol", "cum. return", "ann. return", "Sharpe", "max DD", "win rate"
    ]  # fmt: skip
    desk, buy_hold = shown.to_dict("records")
    assert (desk["cum. return"], desk["ann. return"], desk["max DD"]) == (
        "40.05%",
        "-1.23%",
        "-26.21%",
    )
    assert (desk["Sharpe"], desk["costs"], desk["win rate"]) == ("1.02", "1,325.49", "–")
    assert desk["decisions"] == "B 5 / H 1 / S 1 / fail 0"
    assert (buy_hold["decisions"], buy_hold["model calls"], buy_hold["model $"]) == ("–",) * 3
    assert not any(str(v) in ("None", "nan") for r in (desk, buy_hold) for v in r.values())


def test_a_tab_that_fails_says_so_and_the_tabs_after_it_still_draw(
    api: LiveApi, app: AppTest
) -> None:
    broken = api.settings.data_dir / "evals" / "broken"
    broken.mkdir(parents=True)
    spec = {"desk": "desk", "model": "rules", "start": DAY, "end": DAY, "every": 5}
    (broken / "table.json").write_text(json.dumps({"spec": spec}), encoding="utf-8")  # no rows
    try:
        app.run()
    finally:
        shutil.rmtree(broken)
    assert not app.exception, app.exception
    evaluation, portfolio = app.tabs[4], app.tabs[5]
    assert [e.value for e in evaluation.error] == ["this tab could not be drawn: KeyError: 'rows'"]
    assert {m.label for m in portfolio.metric} >= {"account value", "cash"}


def test_the_client_raises_typed_failures(api: LiveApi) -> None:
    client = ApiClient(api.url, KEY)
    with pytest.raises(ApiFailure) as caught:
        list(client.stream("/analyze/stream", {"symbol": "ZZZQ", "as_of": DAY}))
    assert caught.value.status == 404 and caught.value.kind == "no_data"
    events = list(client.stream("/csp/stream", {"symbol": "NVDA", "as_of": DAY}))
    progress = Progress()
    for event in events:
        progress.add(event.event, event.data)
    assert progress.result is not None and progress.run_id == progress.result["run_id"]
    assert {row["agent"] for row in progress.rows()} >= {"chart", "options"}
    client.close()


def test_the_sse_parser_reads_multiline_data_and_skips_comments() -> None:
    lines = [": ping", "event: a", 'data: {"x":', "data: 1}", "", "data: 2", ""]
    assert [(e.event, e.data) for e in parse_sse(lines)] == [("a", {"x": 1}), ("message", 2)]
