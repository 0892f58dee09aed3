"""``alphadesk ask``, ``chat`` and ``portfolio`` on the rules model and bundled data."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app
from alphadesk.data.calendar import session_close
from alphadesk.pipelines.csp.models import CspResult, SuggestedPosition, Synthesis
from alphadesk.store import RunStore

pytestmark = pytest.mark.slow


def test_ask_prints_json_and_streams_text(cli: CliRunner) -> None:
    done = cli.invoke(app, ["ask", "sell a 0DTE SPY put", "--json"])
    assert done.exit_code == 0, done.output
    result = json.loads(done.output)
    assert result["status"] == "completed" and result["numbers"]["unverified"] == []
    assert "0DTE SPY put only" in result["answer"]
    streamed = cli.invoke(app, ["ask", "how does NVDA look technically", "--as-of", "2024-11-29"])
    assert streamed.exit_code == 0, streamed.output
    assert "NVDA: last close 138.25 (2024-11-29)" in streamed.output
    assert "→ get_technical_indicators(symbol=NVDA)" in streamed.output


def test_chat_keeps_a_session_and_the_audit_log_shows_it(cli: CliRunner) -> None:
    done = cli.invoke(app, ["chat"], input="hello\nwhat are my positions\n/history\n/quit\n")
    assert done.exit_code == 0, done.output
    assert "Hello! I answer questions" in done.output
    assert "user: what are my positions" in done.output
    audit = cli.invoke(app, ["chat", "audit", "--json"])
    entries = [json.loads(line) for line in audit.output.splitlines()]
    assert {e["tool"] for e in entries if e["kind"] == "tool_call"} >= {"get_positions"}
    sessions = cli.invoke(app, ["chat", "sessions"])
    assert "4" in sessions.output  # two exchanges


def _csp_run(store: RunStore) -> str:
    as_of = session_close(date(2024, 11, 29))
    put = SuggestedPosition(symbol="NVDA", strike=130, expiration=date(2024, 12, 13), dte=14,
                            premium=2.03, delta=-0.24, weekly_roc=0.78, annualized_roc=40.7,
                            capital_required=13_000, max_profit=203, breakeven=127.97)  # fmt: skip
    result = CspResult(symbol="NVDA", as_of=as_of, decision="select",
                       synthesis=Synthesis(rationale="Uptrend.", risk_factors=[],
                                           suggested_position=put))  # fmt: skip
    run_id = store.start(kind="csp", title="csp NVDA", request={}, as_of=as_of, model="rules")
    store.finish(run_id, status="select", result=result)
    return run_id


def test_portfolio_orders_by_hand_and_from_a_desk_decision(cli: CliRunner, tmp_path: Path) -> None:
    run_id = _csp_run(RunStore(tmp_path / "alphadesk.sqlite"))
    followed = cli.invoke(app, ["portfolio", "follow", run_id, "--contracts", "2"])
    assert "sell 2 NVDA 2024-12-13 130P at 2.03" in followed.output, followed.output
    bought = cli.invoke(app, ["portfolio", "buy", "NVDA", "50", "--as-of", "2024-11-29"])
    assert "buy 50 NVDA at 138.25" in bought.output, bought.output
    refused = cli.invoke(app, ["portfolio", "sell", "NVDA", "80", "--date", "2024-11-29"])
    assert refused.exit_code == 1 and "held 50 then" in refused.output
    shown = cli.invoke(app, ["portfolio", "--as-of", "2024-12-31", "--json"])
    report = json.loads(shown.output)
    # cash = 100000 + 2*203 - 50*138.25 = 93493.50
    assert report["cash"] == pytest.approx(93_493.50)
    put = next(p for p in report["positions"] if p["position"] == "NVDA 2024-12-13 130P")
    assert put["mark"] == 0 and "expired" in put["mark_basis"]  # NVDA closed above 130
    orders = cli.invoke(app, ["portfolio", "orders"])
    assert f"csp run {run_id}" in orders.output
    cli.invoke(app, ["portfolio", "reset", "--yes", "--cash", "5000"])
    empty = json.loads(cli.invoke(app, ["portfolio", "--json"]).output)
    assert empty["account_value"] == 5000 and empty["positions"] == []
