"""The web UI, run by Streamlit's own test harness against a real API server: it renders
what the API answers, and only through the API."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from alphadesk.ui import app as ui_app
from alphadesk.ui.client import ApiClient, ApiFailure, parse_sse
from alphadesk.ui.progress import Progress
from tests.api.conftest import DAY, api_settings
from tests.support.live_api import LiveApi

APP = str(Path(ui_app.__file__))


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    with LiveApi(api_settings(tmp_path_factory.mktemp("ui"))) as live:
        yield live


@pytest.fixture
def app(api: LiveApi, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("ALPHADESK_API_URL", api.url)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [s.value for s in at.success]
    return "\n".join(str(p) for p in parts)


def test_the_desk_tab_streams_a_decision_and_shows_its_report(app: AppTest) -> None:
    app.text_input(key="desk_symbol").input("NVDA")
    app.multiselect(key="desk_analysts").set_value(["market", "news"])
    app.button(key="desk_go").click().run()
    assert not app.exception, app.exception
    assert [s.value for s in app.success] == ["NVDA: BUY at 20.0"]
    assert "# NVDA: BUY" in _texts(app)  # the run's report, fetched from /runs/{id}/report
    assert app.tabs[0].get("image")  # and its chart
    table = app.dataframe[0].value
    assert set(table["agent"]) >= {"market", "news", "bull", "bear", "judge"}
    assert set(table["status"]) == {"completed"}


def test_the_csp_tab_and_an_unknown_symbol(app: AppTest) -> None:
    app.text_input(key="csp_symbol").input("ZZZQ")
    app.button(key="csp_go").click().run()
    assert next(e.value for e in app.error).startswith("ZZZQ: no provider had daily bars")
    app.text_input(key="csp_symbol").input("NVDA")
    app.button(key="csp_go").click().run()
    assert next(s.value for s in app.success).startswith("NVDA: select")


def test_the_csp_tab_sends_the_put_to_sell(api: LiveApi, app: AppTest) -> None:
    app.text_input(key="csp_symbol").input("NVDA")
    app.slider(key="csp_dte").set_value((20, 30))
    app.slider(key="csp_delta").set_value((0.10, 0.20))
    app.button(key="csp_go").click().run()
    assert not app.exception, app.exception
    said = next(s.value for s in app.success)  # none qualifies then: the desk says why
    assert said.startswith("NVDA: reject (options: No put between 20 and 30 days with |delta|")
    with api.client() as client:
        (latest,) = client.get("/runs", params={"kind": "csp", "limit": 1}).json()
        run = client.get(f"/runs/{latest['id']}").json()
    assert run["request"]["constraints"] == {
        "dte_min": 20, "dte_max": 30, "delta_min": 0.10, "delta_max": 0.20,
        "min_weekly_roc": 0.3,
    }  # fmt: skip


def test_the_assistant_tab_streams_an_answer(app: AppTest) -> None:
    app.chat_input[0].set_value("how does NVDA look?").run()
    assert not app.exception, app.exception
    said = [m for m in app.chat_message]
    assert [m.name for m in said] == ["user", "assistant"]
    answer = said[1].markdown[0].value
    assert "NVDA" in answer and len(answer) > 40


def test_runs_and_portfolio_tabs_read_the_store(api: LiveApi, app: AppTest) -> None:
    with api.client() as client:
        run = client.post("/analyze", json={"symbol": "NVDA", "as_of": DAY}).json()
        client.post("/portfolio/follow", json={"run_id": run["run_id"], "quantity": 10})
    app.run()
    runs = app.dataframe[0].value
    assert run["run_id"] in set(runs["id"])
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["cash"] == "$99,800.00"  # 10 NVDA bought at the judge's 20.00


def test_the_portfolio_tab_places_an_order_and_says_why_one_is_refused(app: AppTest) -> None:
    app.number_input(key="order_quantity").set_value(5.0)
    app.button(key="order_go").click().run()  # NVDA at the close of the portfolio's date
    assert not app.exception, app.exception
    (filled,) = [s.value for s in app.success]
    assert filled.startswith("buy 5 NVDA at ")
    transactions = app.tabs[5].dataframe[-1].value
    assert list(transactions["symbol"]).count("NVDA") >= 1 and 5 in set(transactions["quantity"])

    app.radio(key="order_kind").set_value("put")
    app.button(key="order_go").click().run()
    refused = [e.value for e in app.error]
    assert refused == [
        "an option needs right (put/call), strike and expiration "
        "(e.g. right=put, strike=120, expiration=2021-07-16)"
    ], refused
    app.number_input(key="order_strike").set_value(120.0)
    app.button(key="order_go").click().run()
    refused = [e.value for e in app.error]
    assert refused == ["an option order needs a price (per share)"], refused
    assert {m.label for m in app.tabs[5].metric} >= {"cash"}  # the rest of the tab still drew


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
    assert [e.value for e in evaluation.error] == [
        "this tab could not be drawn: KeyError: 'rows'"
    ]
    assert {m.label for m in portfolio.metric} >= {"account value", "cash"}


def test_the_client_raises_typed_failures(api: LiveApi) -> None:
    client = ApiClient(api.url)
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
