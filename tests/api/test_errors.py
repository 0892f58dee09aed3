"""Bad requests: typed JSON errors, never a trace, and nothing stored."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.conftest import DAY, run_count
from tests.support.live_api import LiveApi

_RUN_ROUTES = ["/analyze", "/analyze/stream", "/csp", "/csp/stream"]


def _typed(response: httpx.Response, status: int, kind: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert set(error) == {"type", "message", "hint"} and error["message"]
    assert "Traceback" not in response.text
    if kind is not None:
        assert error["type"] == kind, error
    return dict(error)


@pytest.mark.parametrize("path", _RUN_ROUTES)
@pytest.mark.parametrize(
    "body",
    [
        {},
        {"symbol": 12},
        {"symbol": "NVDA", "depth": "abyssal"},
        {"symbol": "NVDA", "as_of": "30/06/2021"},
        {"symbol": "NVDA", "surprise": True},
        {"symbol": "NVDA", "model": "openai/gpt-4o"},
        {"symbol": "NV DA;rm"},
        {"symbol": "NVDA", "as_of": "1950-01-03"},
        {"symbol": "NVDA", "as_of": "2999-01-04"},
    ],
)
def test_bad_bodies_are_422_and_store_nothing(
    api: LiveApi, client: httpx.Client, path: str, body: dict[str, Any]
) -> None:
    before = run_count(api.settings)
    response = client.post(path, json=body)
    assert response.status_code in (404, 422), response.text
    _typed(response, response.status_code)
    assert run_count(api.settings) == before


def test_desk_only_fields_are_checked(client: httpx.Client) -> None:
    for body in ({"symbol": "NVDA", "rounds": 9}, {"symbol": "NVDA", "analysts": ["astrology"]},
                 {"symbol": "NVDA", "analysts": []}):  # fmt: skip
        _typed(client.post("/analyze", json=body), 422, "validation_error")


@pytest.mark.parametrize("path", _RUN_ROUTES)
def test_an_unknown_symbol_is_404_with_the_data_layers_message(
    api: LiveApi, client: httpx.Client, path: str
) -> None:
    before = run_count(api.settings)
    error = _typed(client.post(path, json={"symbol": "ZZZQ", "as_of": DAY}), 404, "no_data")
    assert "ZZZQ" in error["message"] and "no provider had daily bars" in error["message"]
    too_early = _typed(client.post(path, json={"symbol": "NVDA", "as_of": "1991-01-03"}), 404)
    assert "NVDA" in too_early["message"]
    assert run_count(api.settings) == before


def test_malformed_json_and_wrong_types(client: httpx.Client) -> None:
    raw = client.post(
        "/analyze", content=b"{not json", headers={"content-type": "application/json"}
    )
    _typed(raw, 422, "validation_error")
    _typed(client.post("/analyze", json=["NVDA"]), 422, "validation_error")
    _typed(client.post("/screen", json={"symbols": ["../../etc"]}), 422, "invalid_symbol")


def test_unknown_routes_and_methods(client: httpx.Client) -> None:
    _typed(client.get("/nowhere"), 404, "not_found")
    _typed(client.get("/runs", params={"limit": 0}), 422, "validation_error")


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [("GET", "/analyze", "POST"), ("DELETE", "/health", "GET"), ("PUT", "/runs", "GET"),
     ("GET", "/runs/some-id/replay", "POST")],
)  # fmt: skip
def test_a_wrong_method_is_405_with_allow(
    client: httpx.Client, method: str, path: str, allowed: str
) -> None:
    response = client.request(method, path)
    error = _typed(response, 405, "method_not_allowed")
    assert response.headers["allow"] == allowed
    assert f"{method} is not allowed on {path}" in error["message"]
    assert error["hint"] == f"use {allowed}"


def test_an_error_never_echoes_a_long_input_whole(client: httpx.Client) -> None:
    long = "A" * 10_000
    for response in (
        client.get(f"/runs/{long}"),
        client.get(f"/runs/{long}/events"),
        client.post(f"/runs/{long}/replay"),
        client.post("/analyze", json={"symbol": "NVDA", "model": long}),
        client.post("/chat/v3", json={"question": "hi", "session_id": long}),
        client.get("/runs", params={"kind": long}),
    ):
        body = response.text
        assert 400 <= response.status_code < 500, body[:300]
        assert "A" * 65 not in body and len(body) < 1_500, (response.url, body[:300])
    error = client.get(f"/runs/{long}").json()["error"]
    assert error["message"].startswith("no run '" + "A" * 64 + "…'")


def test_a_large_body_is_413(api: LiveApi, client: httpx.Client) -> None:
    before = run_count(api.settings)
    big = {"question": "x" * (api.config.max_body_bytes + 10)}
    _typed(client.post("/chat/v3", json=big), 413, "body_too_large")
    chunks = (b'{"question": "' + b"y" * 8192 for _ in range(20))  # no content-length
    _typed(client.post("/chat/v3", content=chunks), 413, "body_too_large")
    assert run_count(api.settings) == before


def test_openapi_documents_every_route_and_model(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    for path in ("/analyze", "/analyze/stream", "/chat/v3", "/csp", "/csp/stream", "/screen",
                 "/runs", "/runs/{run_id}", "/runs/{run_id}/report", "/runs/{run_id}/chart",
                 "/runs/{run_id}/events", "/runs/{run_id}/replay", "/portfolio",
                 "/portfolio/positions", "/portfolio/transactions", "/portfolio/orders",
                 "/portfolio/follow", "/health"):  # fmt: skip
        assert path in paths, path
    schemas = spec["components"]["schemas"]
    assert {"AnalyzeBody", "CspBody", "ScreenBody", "ChatBody", "DeskResult", "CspResult",
            "ErrorBody", "Health", "RunDetail"} <= set(schemas)  # fmt: skip
    assert "text/event-stream" in paths["/analyze/stream"]["post"]["responses"]["200"]["content"]
    assert client.get("/docs").status_code == 200


def test_health(client: httpx.Client) -> None:
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["version"]
    assert health["providers"] == ["bundled"] and health["default_model"] == "rules"
    assert health["models"] == ["rules"] and health["auth"] is False
