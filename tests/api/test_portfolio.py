"""The paper portfolio over HTTP keeps its promises: short puts are cash-secured (also
under concurrent requests), orders are dated and valuations point in time, prices are
checked against the trade date's bar, and accounts exist only once opened."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import date
from typing import Any

import httpx
import pytest

from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.pipelines.csp.models import CspResult, SuggestedPosition, Synthesis
from alphadesk.store import RunStore
from tests.api.conftest import DAY
from tests.support.live_api import LiveApi
from tests.support.old_rows import write_account, write_order


def _open(client: httpx.Client, name: str, cash: float = 100_000) -> None:
    opened = client.post("/portfolio/accounts", json={"name": name, "cash": cash})
    assert opened.status_code == 201, opened.text


def _csp_run(api: LiveApi, strike: float, premium: float) -> str:
    """A recorded CSP run on JPM that selected a put (as the desk records one)."""
    as_of = session_close(date.fromisoformat(DAY))
    put = SuggestedPosition(symbol="JPM", strike=strike, expiration=date(2021, 7, 16), dte=16,
                            premium=premium, delta=-0.2, weekly_roc=0.5, annualized_roc=26.0,
                            capital_required=strike * 100, max_profit=premium * 100,
                            breakeven=strike - premium)  # fmt: skip
    result = CspResult(symbol="JPM", as_of=as_of, decision="select",
                       synthesis=Synthesis(rationale="Range-bound.", risk_factors=[],
                                           suggested_position=put))  # fmt: skip
    store = RunStore(api.settings.store_path)
    run_id = store.start(kind="csp", title="csp JPM", request={}, as_of=as_of, model="rules")
    store.finish(run_id, status="select", result=result)
    return run_id


def _bar(api: LiveApi, symbol: str, day: str) -> tuple[float, float]:
    """The day's low and high from the provider the server uses (the close when the data
    has closes only)."""
    bars = build_provider(api.settings).daily_bars(symbol, session_close(date.fromisoformat(day)))
    row = bars.frame.iloc[-1]
    if "low" in bars.fields and "high" in bars.fields:
        return float(row["low"]), float(row["high"])
    close = float(row[bars.price_field()])
    return close, close


def _error(response: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["type"] == kind, error
    return error


def test_following_a_csp_run_reserves_its_collateral(api: LiveApi, client: httpx.Client) -> None:
    run_id = _csp_run(api, strike=140, premium=1.5)
    _open(client, "secured")
    body = {"run_id": run_id, "account": "secured"}
    refused = client.post("/portfolio/follow", json=body | {"quantity": 1000})
    error = _error(refused, 409, "insufficient_cash")
    # 1,000 x 140 x 100 = $14M of collateral less $150,000 of premium, against $100,000.
    assert "$13,850,000.00 of free cash" in error["message"]
    assert "$100,000.00 free" in error["message"] and "at most 7 contracts" in error["message"]
    assert client.post("/portfolio/follow", json=body | {"quantity": 65_536}).status_code == 409
    placed = client.post("/portfolio/follow", json=body | {"quantity": 7})
    assert placed.status_code == 201, placed.text
    assert placed.json()["as_of"].startswith(DAY)  # dated the run's as-of, not today
    held = client.get("/portfolio/positions", params={"account": "secured", "as_of": DAY}).json()
    assert held["collateral"] == pytest.approx(7 * 140 * 100)
    assert held["cash"] == pytest.approx(100_000 + 7 * 150)
    _error(client.post("/portfolio/follow", json=body | {"quantity": 1}), 409, "insufficient_cash")


@pytest.mark.slow
def test_concurrent_follows_cannot_share_the_same_cash(api: LiveApi, client: httpx.Client) -> None:
    run_id = _csp_run(api, strike=140, premium=1.5)
    _open(client, "racing")
    body = {"run_id": run_id, "account": "racing", "quantity": 5}  # $70,000 each

    def follow(_: int) -> int:
        with api.client() as own:
            return own.post("/portfolio/follow", json=body).status_code

    with ThreadPoolExecutor(max_workers=4) as pool:
        codes = sorted(pool.map(follow, range(4)))
    assert codes == [201, 409, 409, 409]


def test_orders_are_dated_and_valuations_point_in_time(api: LiveApi, client: httpx.Client) -> None:
    _open(client, "dated")
    buy = {
        "side": "buy",
        "symbol": "KO",
        "quantity": 100,
        "as_of": "2022-06-30",
        "account": "dated",
    }
    placed = client.post("/portfolio/orders", json=buy).json()
    assert placed["as_of"].startswith("2022-06-30") and placed["placed_at"] > placed["as_of"]
    early = client.get("/portfolio", params={"account": "dated", "as_of": DAY}).json()
    assert early["positions"] == [] and early["cash"] == 100_000 and early["orders"] == 0
    params = {"account": "dated", "as_of": DAY}
    assert client.get("/portfolio/positions", params=params).json()["positions"] == []
    assert client.get("/portfolio/transactions", params=params).json() == []
    late = client.get("/portfolio", params={"account": "dated", "as_of": "2022-07-29"}).json()
    assert [(p["position"], p["quantity"]) for p in late["positions"]] == [("KO", 100)]

    low, _ = _bar(api, "KO", "2015-06-30")
    old_sale = buy | {"side": "sell", "as_of": "2015-06-30", "price": low}
    error = _error(client.post("/portfolio/orders", json=old_sale), 409, "order_rejected")
    assert "the account held 0 then" in error["message"]


def test_prices_are_checked_against_the_trade_dates_bar(api: LiveApi, client: httpx.Client) -> None:
    _open(client, "priced")
    order = {"side": "buy", "symbol": "KO", "quantity": 1, "as_of": DAY, "account": "priced"}
    zero = client.post("/portfolio/orders", json=order | {"price": 0})
    assert "greater than 0" in _error(zero, 422, "validation_error")["message"]
    low, high = _bar(api, "KO", DAY)
    off = client.post("/portfolio/orders", json=order | {"price": round(high * 1.2, 2)})
    assert "above KO's" in _error(off, 409, "price_not_verified")["message"]
    unknown = order | {"symbol": "ZZZQ", "price": 5}
    assert "no data" in _error(client.post("/portfolio/orders", json=unknown), 409,
                               "price_not_verified")["message"]  # fmt: skip
    fair = client.post("/portfolio/orders", json=order | {"price": round((low + high) / 2, 2)})
    assert fair.status_code == 201 and fair.json()["forced"] is False
    forced = client.post("/portfolio/orders", json=unknown | {"force": True})
    assert forced.status_code == 201 and forced.json()["forced"] is True
    listed = client.get("/portfolio/transactions", params={"account": "priced"}).json()
    assert [(o["contract"]["symbol"], o["forced"]) for o in listed] == [
        ("KO", False),
        ("ZZZQ", True),
    ]
    assert listed[1]["price_check"].startswith("forced: no data")


def test_accounts_are_opened_explicitly(client: httpx.Client) -> None:
    missing = _error(client.get("/portfolio", params={"account": "nope"}), 404,
                     "account_not_found")  # fmt: skip
    assert "'nope'" in missing["message"] and "accounts:" in missing["message"]
    order = {"side": "buy", "symbol": "KO", "quantity": 1, "as_of": DAY, "account": "nope"}
    _error(client.post("/portfolio/orders", json=order), 404, "account_not_found")
    for path in ("/portfolio/positions", "/portfolio/transactions"):
        _error(client.get(path, params={"account": "nope"}), 404, "account_not_found")
    assert "nope" not in [a["name"] for a in client.get("/portfolio/accounts").json()]
    _open(client, "opened", cash=5_000)
    _error(client.post("/portfolio/accounts", json={"name": "opened"}), 409, "account_exists")
    listed = {a["name"]: a["starting_cash"] for a in client.get("/portfolio/accounts").json()}
    assert listed["opened"] == 5_000
    assert client.get("/portfolio", params={"account": "opened"}).json()["cash"] == 5_000


def test_impossible_orders_are_refused_and_old_rows_do_not_break_the_account(
    api: LiveApi, client: httpx.Client
) -> None:
    _open(client, "strict", cash=1_000)
    put = {"side": "sell", "symbol": "KO", "quantity": 5, "price": 4.9, "right": "put",
           "strike": 5, "as_of": DAY, "account": "strict"}  # fmt: skip
    expired = client.post("/portfolio/orders", json=put | {"expiration": "2021-06-18"})
    words = "KO 2021-06-18 5P expired on 2021-06-18, before the trade date 2021-06-30"
    assert words in _error(expired, 409, "order_rejected")["message"]
    for day in ("2021-07-17", "1990-01-01"):
        bought = put | {"side": "buy", "quantity": 1, "price": 0.05, "expiration": day}
        saturday = client.post("/portfolio/orders", json=bought | {"force": True})
        assert (
            f"{day} is not an XNYS trading day"
            in _error(saturday, 409, "order_rejected")["message"]
        )
    huge = {"side": "buy", "symbol": "KO", "quantity": 1e308, "price": 1e-308, "force": True,
            "as_of": DAY, "account": "strict"}  # fmt: skip
    _error(client.post("/portfolio/orders", json=huge), 422, "validation_error")
    assert client.get("/portfolio/transactions", params={"account": "strict"}).json() == []

    # Rows an older version accepted: the account values, each row named.
    path = api.settings.store_path
    write_account(path, "old", 1_000)
    saturday_put = {"contract": {"symbol": "KO", "right": "put", "strike": 60,
                                 "expiration": "2021-07-17"},
                    "side": "buy", "quantity": 1, "price": 5.5}  # fmt: skip
    write_order(path, "old", DAY, saturday_put)
    gone = write_order(path, "old", DAY, {
        "contract": {"symbol": "KO", "right": "put", "strike": 5, "expiration": "2021-06-18"},
        "side": "sell", "quantity": 5, "price": 4.9})  # fmt: skip
    valued = client.get("/portfolio", params={"account": "old", "as_of": "2021-07-30"})
    assert valued.status_code == 200, valued.text
    report = valued.json()
    assert report["cash"] == 450 and len(report["positions"]) == 1
    assert "settled at the close of 2021-07-16" in report["positions"][0]["mark_basis"]
    assert any(f"order {gone} left out" in note for note in report["missing"])
    held = client.get("/portfolio/positions", params={"account": "old"})
    assert held.status_code == 200 and held.json()["cash"] == 450

    write_account(path, "broken", float("inf"))
    for route in ("/portfolio", "/portfolio/positions", "/portfolio/transactions"):
        broken = _error(client.get(route, params={"account": "broken"}), 409, "account_damaged")
        assert "stored starting cash of inf" in broken["message"]


def test_the_valuation_lists_the_dividends_credited(client: httpx.Client) -> None:
    _open(client, "income")
    buy = {"side": "buy", "symbol": "JPM", "quantity": 100, "as_of": "2025-04-01",
           "account": "income"}  # fmt: skip
    assert client.post("/portfolio/orders", json=buy).status_code == 201
    shown = client.get("/portfolio", params={"account": "income", "as_of": "2025-04-04"}).json()
    assert [(d["symbol"], d["ex_date"], d["shares"], d["amount"], d["cash"])
            for d in shown["dividends"]] == [("JPM", "2025-04-04", 100, 1.4, 140.0)]  # fmt: skip
    assert shown["cash"] == pytest.approx(100_000 - 100 * 243.66 + 140)  # the 04-01 close
