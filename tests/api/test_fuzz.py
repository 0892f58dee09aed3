"""Fuzzing every route's body and query: whatever arrives, the answer is never a 5xx, and
every error has the typed shape. Values mix plausible ones (real and unknown symbols, dates
in and out of the data and the calendar, allowed and unknown models) with arbitrary JSON."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from alphadesk.api.models import (
    AccountBody,
    AnalyzeBody,
    ChatBody,
    CspBody,
    FollowBody,
    OrderBody,
    ScreenBody,
)
from tests.support.live_api import LiveApi, parse_sse

pytestmark = pytest.mark.slow

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
# Per field: values a request may well hold (VALID), and near misses (INVALID).
_VALID: dict[str, st.SearchStrategy[Any]] = {
    "symbol": st.sampled_from(["NVDA", "nvda", " jpm ", "KO"]),
    "symbols": st.lists(st.sampled_from(["NVDA", "KO", "BTC-USD", "ZZZQ"]), min_size=1, max_size=2),
    "as_of": st.sampled_from(["2021-06-30", "2021-07-04", "2020-03-16"]),
    "model": st.sampled_from([None, "rules"]),
    "depth": st.sampled_from(["quick", "standard", "deep"]),
    "analysts": st.lists(
        st.sampled_from(["market", "news", "fundamentals", "sentiment"]), min_size=1, max_size=4
    ),
    "rounds": st.integers(1, 3),
    "risk_rounds": st.integers(1, 3),
    "concurrency": st.integers(1, 4),
    "question": st.sampled_from(["how does NVDA look?", "KO volatility", "hello"]),
    "session_id": st.sampled_from([None, "fuzz-session"]),
    "side": st.sampled_from(["buy", "sell"]),
    "quantity": st.integers(1, 20),
    "price": st.floats(0, 500, allow_nan=False) | st.none(),
    "strike": st.floats(1, 500, allow_nan=False) | st.none(),
    "right": st.sampled_from([None, "put", "call"]),
    "account": st.sampled_from(["paper", "fuzz"]),
    "force": st.booleans(),
    "name": st.sampled_from(["fuzz", "paper", "ira-2"]),
    "cash": st.floats(0, 1e7, allow_nan=False),
    "run_id": st.just("nope"),
    "memory": st.just(False),
    "parallel_research": st.booleans(),
    "expiration": st.sampled_from(["2021-07-16", "2021-08-20"]),
    "constraints": st.fixed_dictionaries(
        {},
        optional={
            "dte_min": st.integers(7, 20),
            "dte_max": st.integers(30, 60),
            "delta_min": st.floats(0.05, 0.15),
            "delta_max": st.floats(0.2, 0.4),
            "min_weekly_roc": st.floats(0, 1),
        },
    ),
}
_INVALID: dict[str, st.SearchStrategy[Any]] = {
    "symbol": st.sampled_from(["ZZZQ", "BTC-USD", "", "A" * 30, "../x", "^GSPC", "AAPL"]),
    "symbols": st.lists(st.sampled_from(["", "../x", "A" * 30]), max_size=2),
    "as_of": st.sampled_from(["1900-01-01", "2999-12-31", "0001-01-01", "2021-02-30",
                              "2021-06-30T20:00:00Z", "now"]),
    "model": st.sampled_from(["openai/gpt-4o", ""]),
    "depth": st.just("abyssal"),
    "analysts": st.lists(st.just("tea"), max_size=5),
    "rounds": st.integers(-1, 7),
    "risk_rounds": st.integers(-1, 7),
    "concurrency": st.integers(-1, 10),
    "question": st.text(max_size=40),
    "session_id": st.sampled_from(["../etc", "x" * 80]),
    "side": st.just("hold"),
    "quantity": st.integers(-5, 10**12) | st.floats(allow_nan=False, allow_infinity=False),
    "price": st.floats(-1, 1e10, allow_nan=False),
    "strike": st.floats(-1, 1e4, allow_nan=False),
    "right": st.just("straddle"),
    "account": st.sampled_from(["", "a/b", "x" * 50]),
    "force": st.sampled_from(["yes", 2]),
    "name": st.sampled_from(["", "a b", "x" * 50]),
    "cash": st.floats(-1, 1e13, allow_nan=False),
    "run_id": st.text(max_size=70),
    "memory": st.sampled_from(["maybe", 2]),
    "parallel_research": st.sampled_from(["yes please", 3]),
    "expiration": st.sampled_from(["2021-13-01", "soon"]),
    "constraints": st.fixed_dictionaries({"dte_min": st.integers(-5, 500),
                                          "delta_max": st.floats(-1, 2, allow_nan=False)}),
}  # fmt: skip


def _bodies(model: type[Any], required: tuple[str, ...]) -> st.SearchStrategy[Any]:
    """Valid requests (whole runs), near misses, and arbitrary JSON, in equal parts."""
    fields = list(model.model_fields)

    def dicts(values: dict[str, st.SearchStrategy[Any]], *also: str, **extra: Any) -> Any:
        needed = [n for n in fields if n in required or n in also]
        return st.fixed_dictionaries(
            {n: values[n] for n in needed},
            optional={n: values[n] for n in fields if n not in needed} | extra,
        )

    near = {n: _VALID[n] | _INVALID[n] | _JSON for n in fields}
    anything = st.fixed_dictionaries({}, optional={n: near[n] for n in fields} | {"x": _JSON})
    # without as_of a run is 'now', after the bundled data: valid ones name a date
    return st.one_of(dicts(_VALID, "as_of"), dicts(near), dicts(near, extra=_JSON), anything, _JSON)


def _screens() -> st.SearchStrategy[Any]:
    # A screen without symbols covers the whole universe: too slow for a fuzz example
    # (the route test covers it); every other body is fuzzed.
    return _bodies(ScreenBody, ("symbols",)).filter(lambda b: b != {})


_ROUTES: list[tuple[str, st.SearchStrategy[Any]]] = [
    ("/analyze", _bodies(AnalyzeBody, ("symbol",))),
    ("/analyze/stream", _bodies(AnalyzeBody, ("symbol",))),
    ("/csp", _bodies(CspBody, ("symbol",))),
    ("/csp/stream", _bodies(CspBody, ("symbol",))),
    ("/screen", _screens()),
    ("/chat/v3", _bodies(ChatBody, ("question",))),
    ("/portfolio/orders", _bodies(OrderBody, ("side", "symbol", "quantity"))),
    ("/portfolio/follow", _bodies(FollowBody, ("run_id",))),
    ("/portfolio/accounts", _bodies(AccountBody, ("name",))),
]


def _check(response: Any) -> None:
    event(f"HTTP {response.status_code}")
    assert response.status_code < 500, response.read()
    if response.status_code >= 400:
        assert set(response.json()["error"]) == {"type", "message", "hint"}


@pytest.mark.parametrize(("path", "bodies"), _ROUTES, ids=[p for p, _ in _ROUTES])
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_no_body_makes_a_5xx(
    api: LiveApi, path: str, bodies: st.SearchStrategy[Any], data: st.DataObject
) -> None:
    body = data.draw(bodies, label="body")
    with api.client() as client, client.stream("POST", path, json=body) as response:
        if response.headers["content-type"].startswith("text/event-stream"):
            events = list(parse_sse(response.iter_lines()))
            event(f"stream ending {events[-1].event if events else 'empty'}")
            errors = [e.json()["error"] for e in events if e.event == "error"]
            assert not [e for e in errors if e["type"] == "internal"], errors
            return
        response.read()
        _check(response)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    path=st.sampled_from(["/runs", "/portfolio", "/portfolio/positions", "/portfolio/accounts",
                          "/portfolio/transactions", "/runs/{x}", "/runs/{x}/events",
                          "/runs/{x}/report", "/runs/{x}/chart"]),
    params=st.dictionaries(st.sampled_from(["kind", "limit", "as_of", "account"]),
                           st.text(max_size=12) | _VALID["as_of"] | _INVALID["as_of"]
                           | st.integers(-5, 10**6).map(str)),
    x=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/?#"),
              min_size=1, max_size=20),
)  # fmt: skip
def test_no_query_makes_a_5xx(api: LiveApi, path: str, params: dict[str, str], x: str) -> None:
    with api.client() as client:
        _check(client.get(path.replace("{x}", quote(x, safe="")), params=params))
