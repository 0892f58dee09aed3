"""The fund over HTTP, on a real server: the same decision as the pipeline called in this
process, a stream of each desk's step then the result, its orders followed into the paper
account once; bad input a typed error with no run recorded."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.pipelines.fund.book import fund_request
from alphadesk.pipelines.fund.pipeline import Fund
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.store import RunStore
from tests.api.conftest import DAY, run_count
from tests.support.live_api import LiveApi

BODY = {"symbols": ["aapl", "JPM", "PG"], "as_of": "2025-05-15", "account": "fundapi"}


@pytest.fixture(scope="module")
def fund_run(api: LiveApi) -> dict[str, Any]:
    with api.client() as client:
        assert client.post("/portfolio/accounts", json={"name": "fundapi"}).status_code == 201
        response = client.post("/fund", json=BODY)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_fund_decides_as_the_pipeline_does_and_records_the_run(
    api: LiveApi, fund_run: dict[str, Any]
) -> None:
    assert fund_run["symbols"] == ["AAPL", "JPM", "PG"]
    assert fund_run["book"]["account"] == "fundapi" and fund_run["book"]["cash"] == 100_000.0
    store = RunStore(api.settings.store_path)
    assert store.get(fund_run["run_id"]).kind == "fund"
    assert {store.get(d["run_id"]).kind for d in fund_run["desks"]} == {"desk"}
    market = build_provider(api.settings)
    request = fund_request(market, api.settings.store_path, session_close(_day()),
                           symbols=["AAPL", "JPM", "PG"], account="fundapi")  # fmt: skip
    here = asyncio.run(PipelineRunner(api.settings, Fund(api.settings, market)).analyze(request))
    assert here is not None
    served = Fund.result_type.model_validate(fund_run)
    assert served.decided() == here.decided()


def _day() -> Any:
    from datetime import date

    return date(2025, 5, 15)


def test_its_orders_are_followed_once_into_the_account(
    client: httpx.Client, fund_run: dict[str, Any]
) -> None:
    assert fund_run["orders"], "the rules buy something of an empty book on this day"
    body = {"run_id": fund_run["run_id"], "account": "fundapi"}
    placed = client.post("/portfolio/follow", json=body)
    assert placed.status_code == 201, placed.text
    orders = placed.json()
    assert [(o["side"], o["contract"]["symbol"], o["quantity"]) for o in orders] == [
        (o["side"], o["contract"]["symbol"], o["quantity"]) for o in fund_run["orders"]
    ]
    again = client.post("/portfolio/follow", json=body)
    assert again.status_code == 409 and "followed" in again.json()["error"]["message"]
    valued = client.get("/portfolio", params={"account": "fundapi", "as_of": "2025-05-15"})
    assert valued.json()["cash"] == pytest.approx(fund_run["cash_after"])


def test_fund_stream_sends_each_desk_then_the_result(api: LiveApi, client: httpx.Client) -> None:
    body = {"symbols": ["KO"], "as_of": DAY, "depth": "quick"}
    events = api.stream(client, "/fund/stream", body)
    names = [e.event for e in events]
    assert names[0] == "accepted" and names[-1] == "result"
    assert events[0].json()["pipeline"] == "fund"
    steps = [e.json() for e in events if e.event in ("step_started", "step_finished")]
    assert [(s["kind"], s["agent"]) for s in steps] == [
        ("step_started", "desk"),
        ("step_finished", "desk"),
        ("step_started", "portfolio_manager"),
        ("step_finished", "portfolio_manager"),
    ]
    assert events[-1].json()["symbols"] == ["KO"]


@pytest.mark.parametrize(
    ("body", "status", "kind"),
    [
        ({"symbols": ["ZZZZQ"], "as_of": "2025-05-15"}, 404, "no_data"),
        ({"symbols": ["AAPL"], "as_of": "1995-05-15"}, 404, "no_data"),
        ({"universe": "nasdaq100", "as_of": "1990-01-02"}, 404, "no_data"),
        ({"universe": "ftse", "as_of": "2025-05-15"}, 422, "validation_error"),
        ({"as_of": "2025-05-15"}, 422, "validation_error"),
        ({"symbols": ["AAPL"], "universe": "dow30"}, 422, "validation_error"),
        ({"symbols": ["AAPL"], "account": "nobody", "as_of": "2025-05-15"}, 404,
         "account_not_found"),
        ({"symbols": []}, 422, "validation_error"),
    ],
)  # fmt: skip
def test_bad_input_is_a_typed_error_and_records_nothing(
    api: LiveApi, client: httpx.Client, body: dict[str, Any], status: int, kind: str
) -> None:
    before = run_count(api.settings)
    for path in ("/fund", "/fund/stream"):
        response = client.post(path, json=body)
        assert response.status_code == status, response.text
        assert response.json()["error"]["type"] == kind
    assert run_count(api.settings) == before
