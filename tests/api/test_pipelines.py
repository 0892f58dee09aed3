"""The desks over HTTP: the same decisions as the pipeline called directly, every event of a
stream as recorded, and the run stored."""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Any

import httpx
import pytest

from alphadesk.data import build_provider
from alphadesk.data.calendar import close_on_or_before
from alphadesk.pipelines.base import build_pipeline
from alphadesk.pipelines.desk.models import DeskRequest
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.store import RunStore
from tests.api.conftest import DAY
from tests.support.live_api import LiveApi


def _decided(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("run_id", "agents", "chart")}


def _direct(api: LiveApi, kind: str, request: Any) -> dict[str, Any]:
    """The pipeline called the way the CLI calls it, in this process."""
    desk = build_pipeline(kind, api.settings, build_provider(api.settings))
    result = asyncio.run(PipelineRunner(api.settings, desk).analyze(request))
    assert result is not None
    return result.model_dump(mode="json")


@pytest.mark.slow
def test_analyze_decides_as_the_pipeline_does_and_records_the_run(
    api: LiveApi, client: httpx.Client
) -> None:
    response = client.post("/analyze", json={"symbol": "nvda", "as_of": DAY, "rounds": 2})
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["symbol"] == "NVDA" and result["decision"] in ("BUY", "HOLD", "SELL")
    assert result["as_of"] == "2021-06-30T20:00:00Z"  # the date's close
    assert {e["round"] for e in result["debate"]} == {1, 2}
    assert {a["model"] for a in result["agents"]} == {"rules"}
    stored = RunStore(api.settings.store_path).get(result["run_id"])
    assert stored.status == result["decision"] and stored.result == result
    request = DeskRequest.from_settings(
        api.settings, symbol="NVDA", as_of=close_on_or_before(date(2021, 6, 30)),
        rounds=2,
    )  # fmt: skip
    assert _decided(result) == _decided(_direct(api, "desk", request))


def test_analyze_stream_sends_every_event_then_the_decision(
    api: LiveApi, client: httpx.Client
) -> None:
    events = api.stream(client, "/analyze/stream", {"symbol": "JPM", "as_of": DAY})
    names = [e.event for e in events]
    assert names[0] == "accepted" and names[-1] == "result"
    accepted = events[0].json()
    assert accepted["pipeline"] == "desk" and accepted["request"]["symbol"] == "JPM"
    for kind in ("step_started", "run_started", "tool_started", "tool_finished",
                 "debate_message", "model_response", "step_finished"):  # fmt: skip
        assert kind in names, kind
    result = events[-1].json()
    assert result["decision"] in ("BUY", "HOLD", "SELL")
    assert result["run_id"] == accepted["run_id"]
    bodies = [e.json() for e in events[1:-1]]
    assert all(b["kind"] == e.event for b, e in zip(bodies, events[1:], strict=False))
    # event by event, what the stream sent is what the run recorded
    recorded = client.get(f"/runs/{result['run_id']}/events").json()
    assert bodies == recorded
    speakers = {b["agent"] for b in bodies if b["kind"] == "debate_message"}
    assert {"bull", "bear"} <= speakers
    assert client.get(f"/runs/{result['run_id']}").json()["result"] == result


def test_csp_json_and_stream_decide_the_same(api: LiveApi, client: httpx.Client) -> None:
    body = {"symbol": "HD", "as_of": DAY, "depth": "quick"}
    plain = client.post("/csp", json=body)
    assert plain.status_code == 200, plain.text
    events = api.stream(client, "/csp/stream", body)
    assert events[-1].event == "result"
    streamed = events[-1].json()
    assert plain.json()["decision"] in ("select", "reject")
    assert _decided(plain.json()) == _decided(streamed)
    assert plain.json()["run_id"] != streamed["run_id"]  # two recorded runs
    assert {e.event for e in events} >= {"step_started", "tool_started", "step_finished"}


def test_screen_filters_then_ranks(api: LiveApi, client: httpx.Client) -> None:
    response = client.post(
        "/screen", json={"symbols": ["NVDA", "KO", "BTC-USD"], "as_of": DAY, "concurrency": 2}
    )
    assert response.status_code == 200, response.text
    screen = response.json()
    checks = {c["symbol"]: c for c in screen["checks"]}
    assert set(checks) == {"NVDA", "KO", "BTC-USD"}
    assert not checks["BTC-USD"]["passed"]  # no listed puts on a coin
    assert {r["symbol"] for r in screen["results"]} == {s for s, c in checks.items() if c["passed"]}


def test_csp_constraints_choose_the_put_and_a_bad_range_is_a_422(client: httpx.Client) -> None:
    constraints = {"dte_min": 20, "dte_max": 30, "delta_min": 0.10, "delta_max": 0.20}
    body = {"symbol": "NVDA", "as_of": "2024-11-29", "constraints": constraints}
    response = client.post("/csp", json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["decision"] == "select"
    put = result["synthesis"]["suggested_position"]
    assert 20 <= put["dte"] <= 30 and 0.10 <= abs(put["delta"]) <= 0.20
    assert client.get(f"/runs/{result['run_id']}").json()["request"]["constraints"] == {
        **constraints, "min_weekly_roc": 0.3
    }  # fmt: skip

    backwards = {**body, "constraints": {"dte_min": 30, "dte_max": 20}}
    refused = client.post("/csp", json=backwards)
    assert refused.status_code == 422
    assert "dte_min 30 is above dte_max 20" in refused.json()["error"]["message"]
