"""Recorded runs and the paper portfolio over HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from alphadesk.store import RunStore
from tests.api.conftest import DAY
from tests.support.live_api import LiveApi


@pytest.fixture(scope="module")
def desk_run(api: LiveApi) -> dict[str, Any]:
    with api.client() as client:
        response = client.post("/analyze", json={"symbol": "NVDA", "as_of": DAY})
    assert response.status_code == 200, response.text
    return dict(response.json())


@pytest.mark.slow
def test_runs_list_filters_by_kind_and_limit(
    api: LiveApi, client: httpx.Client, desk_run: dict[str, Any]
) -> None:
    listed = client.get("/runs", params={"kind": "desk", "limit": 500}).json()
    assert listed and {r["kind"] for r in listed} == {"desk"}
    assert desk_run["run_id"] in [r["id"] for r in listed]
    assert [r["created_at"] for r in listed] == sorted(
        (r["created_at"] for r in listed), reverse=True
    )
    assert len(client.get("/runs", params={"limit": 1}).json()) == 1
    assert client.get("/runs", params={"kind": "nothing"}).json() == []
    mine = next(r for r in listed if r["id"] == desk_run["run_id"])
    assert mine["status"] == desk_run["decision"] and mine["model"] == "rules"
    ledger = RunStore(api.settings.store_path).ledger(desk_run["run_id"])
    assert mine["requests"] == len(ledger) > 0 and mine["cost_usd"] == 0.0


def test_run_detail_report_chart_and_events(client: httpx.Client, desk_run: dict[str, Any]) -> None:
    run_id = desk_run["run_id"]
    detail = client.get(f"/runs/{run_id}").json()
    assert detail["result"] == desk_run and detail["request"]["symbol"] == "NVDA"
    assert {"report.md", "result.json"} <= set(detail["artifacts"])
    report = client.get(f"/runs/{run_id}/report")
    assert report.headers["content-type"].startswith("text/markdown")
    assert report.text.startswith(f"# NVDA: {desk_run['decision']}")
    chart = client.get(f"/runs/{run_id}/chart")
    assert chart.headers["content-type"] == "image/png"
    assert chart.content[:8] == b"\x89PNG\r\n\x1a\n"
    events = client.get(f"/runs/{run_id}/events").json()
    assert events[0]["run_id"] == run_id and any(e["kind"] == "debate_message" for e in events)


@pytest.mark.slow
def test_replay_decides_the_same_without_a_model_call(
    client: httpx.Client, desk_run: dict[str, Any]
) -> None:
    replay = client.post(f"/runs/{desk_run['run_id']}/replay")
    assert replay.status_code == 200, replay.text
    body = replay.json()
    assert body["same_decision"] is True and body["decision"] == desk_run["decision"]
    assert body["run_id"] != desk_run["run_id"]
    assert client.get(f"/runs/{body['run_id']}").json()["status"] == desk_run["decision"]


def test_unknown_runs_are_typed_404s(client: httpx.Client) -> None:
    for path in ("/runs/nope", "/runs/nope/report", "/runs/nope/chart", "/runs/nope/events"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.json()["error"]["type"] == "run_not_found"
        assert "nope" in response.json()["error"]["message"]
    assert client.post("/runs/nope/replay").status_code == 404


def test_an_unfinished_run_has_no_report_and_cannot_replay(
    api: LiveApi, client: httpx.Client
) -> None:
    from datetime import UTC, datetime

    store = RunStore(api.settings.store_path)
    run_id = store.start(
        kind="desk",
        title="desk X",
        request={"symbol": "X"},
        as_of=datetime(2021, 6, 30, 20, tzinfo=UTC),
        model="rules",
    )
    store.finish(run_id, status="interrupted", error="stopped")
    assert client.get(f"/runs/{run_id}/report").json()["error"]["type"] == "no_report"
    replay = client.post(f"/runs/{run_id}/replay")
    assert replay.status_code == 409 and "did not finish" in replay.json()["error"]["message"]


def test_portfolio_follows_a_run_and_values_it(
    client: httpx.Client, desk_run: dict[str, Any]
) -> None:
    account = "followtest"
    assert client.post("/portfolio/accounts", json={"name": account}).status_code == 201
    followed = client.post(
        "/portfolio/follow", json={"run_id": desk_run["run_id"], "quantity": 10, "account": account}
    )
    final = desk_run["final"]
    assert final["action"] == "BUY"  # NVDA at the close of 2021-06-30
    assert followed.status_code == 201, followed.text
    order = followed.json()
    assert order["contract"]["symbol"] == "NVDA" and order["price"] == final["entry"]
    assert order["side"] == ("buy" if final["action"] == "BUY" else "sell")
    signed = 10 if order["side"] == "buy" else -10
    positions = client.get("/portfolio/positions", params={"account": account}).json()
    assert positions["cash"] == pytest.approx(100_000 - signed * final["entry"])
    assert [(p["contract"]["symbol"], p["quantity"]) for p in positions["positions"]] == [
        ("NVDA", signed)
    ]
    assert [
        o["id"] for o in client.get("/portfolio/transactions", params={"account": account}).json()
    ] == [order["id"]]
    valued = client.get("/portfolio", params={"account": account, "as_of": "2021-07-30"}).json()
    held = valued["positions"][0]
    assert held["position"] == "NVDA" and held["mark"] is not None
    assert valued["account_value"] == pytest.approx(valued["cash"] + held["mark"] * signed)


def test_manual_orders(client: httpx.Client) -> None:
    account = "manual"
    assert client.post("/portfolio/accounts", json={"name": account}).status_code == 201
    bought = client.post(
        "/portfolio/orders",
        json={"side": "buy", "symbol": "jpm", "quantity": 5, "as_of": DAY, "account": account},
    )
    assert bought.status_code == 201, bought.text
    close = client.get("/portfolio", params={"account": account, "as_of": DAY}).json()
    assert bought.json()["price"] == pytest.approx(close["positions"][0]["mark"])
    option = client.post(
        "/portfolio/orders",
        json={
            "side": "sell",
            "symbol": "JPM",
            "quantity": 1,
            "right": "put",
            "strike": 150,
            "expiration": "2021-07-16",
            "account": account,
        },
    )
    assert option.status_code == 422 and option.json()["error"]["type"] == "price_required"
    half = client.post(
        "/portfolio/orders",
        json={
            "side": "sell",
            "symbol": "JPM",
            "quantity": 1,
            "right": "put",
            "price": 2.0,
            "account": account,
        },
    )
    assert half.status_code == 422 and half.json()["error"]["type"] == "invalid_contract"
    unknown = client.post("/portfolio/follow", json={"run_id": "nope"})
    assert unknown.status_code == 404


@pytest.mark.slow
def test_a_hold_places_no_order(client: httpx.Client) -> None:
    hold = client.post("/analyze", json={"symbol": "KO", "as_of": DAY}).json()
    assert hold["decision"] == "HOLD"
    followed = client.post("/portfolio/follow", json={"run_id": hold["run_id"]})
    assert followed.status_code == 409
    assert followed.json()["error"]["type"] == "no_order"
    assert "no order to place" in followed.json()["error"]["message"]
