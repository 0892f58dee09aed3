"""Recorded desk runs: resumed after an interruption, run through LiteLLM against a real
HTTP server and replayed from the cache, and driven from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.agents.desk import default_agents
from alphadesk.cli.app import app
from alphadesk.config import CacheMode, ModelSettingsConfig, Settings
from alphadesk.data.base import MarketData
from alphadesk.llm.rules import RulesModel
from alphadesk.pipelines.desk.models import DeskRequest
from alphadesk.pipelines.desk.pipeline import TradingDesk
from alphadesk.pipelines.runner import PipelineRunner, replay
from alphadesk.store import RunStore
from tests.pipelines.conftest import close_of
from tests.pipelines.desk.answers import (
    absent,
    filed,
    indicators_of,
    market_answer,
    position,
    turn,
    view,
)
from tests.support.counting import Counted
from tests.support.openai_server import OpenAIServer, reply_text, reply_tool_calls

pytestmark = pytest.mark.slow


async def test_a_run_interrupted_mid_debate_resumes_without_redoing_a_turn(
    settings: Settings, market: MarketData
) -> None:
    agents = default_agents()
    models = {spec.name: Counted(RulesModel(spec.policy)) for spec in agents.all}
    runner = PipelineRunner(settings, TradingDesk(settings, market, models=models))
    request = DeskRequest(symbol="AAPL", as_of=close_of("2012-03-30"))

    # stopped after the arguments, before the rebuttals that answer them
    assert await runner.analyze(request, interrupt_after=["debate"]) is None
    store = RunStore(settings.store_path)
    (run,) = store.recent(kind="desk")
    assert run.status == "interrupted" and "--resume" in (run.error or "")
    before = {name: model.calls for name, model in models.items()}
    assert all(before[name] > 0 for name in ("market", "news", "bull", "bear"))
    assert before["bull"] == before["bear"] == 1
    assert before["manager"] == before["trader"] == before["judge"] == 0

    result = await runner.analyze(request, resume_run_id=run.id)
    assert result is not None and result.decision == "BUY"
    for name in ("market", "sentiment", "news", "fundamentals"):
        assert models[name].calls == before[name], name  # not redone
    assert models["bull"].calls == models["bear"].calls == 2  # the rebuttals only
    assert models["judge"].calls == 1
    finished = store.get(run.id)
    assert finished.status == "BUY"
    assert {a.name for a in store.artifacts(run.id)} >= {
        "report.md",
        "result.json",
        "chart_AAPL.png",
    }
    assert len(store.ledger(run.id)) == sum(m.calls for m in models.values())
    # the rebuttals answered the arguments spoken before the interruption
    assert [(e.speaker, e.part) for e in result.debate] == [
        ("bull", "argument"),
        ("bear", "argument"),
        ("bull", "rebuttal"),
        ("bear", "rebuttal"),
    ]
    bear_argument, bull_rebuttal = result.debate[1].turn, result.debate[2].turn
    assert bull_rebuttal.rebuttal is not None
    assert bear_argument.evidence[0].fact in bull_rebuttal.rebuttal


async def test_a_run_without_charts_draws_none(settings: Settings, market: MarketData) -> None:
    runner = PipelineRunner(settings, TradingDesk(settings, market), charts=False)
    result = await runner.analyze(DeskRequest(symbol="AAPL", as_of=close_of("2012-03-30")))
    assert result is not None and result.decision == "BUY" and result.chart is None
    assert result.run_id is not None
    run_dir = settings.runs_dir / result.run_id
    assert not list(run_dir.glob("*.png"))
    artifacts = {a.name for a in RunStore(settings.store_path).artifacts(result.run_id)}
    assert artifacts == {"report.md", "result.json"}


async def test_full_run_through_litellm_then_replayed_with_zero_model_calls(
    settings: Settings, market: MarketData, openai_server: OpenAIServer
) -> None:
    symbol, day = "NVDA", "2024-11-29"
    ind = await indicators_of(market, symbol, day)
    price = ind["current_price"]
    fenced = {
        name: f"My answer.\n```json\n{json.dumps(body)}\n```"
        for name, body in {
            "market": market_answer(ind),
            "sentiment": absent("social_available"),
            "news": absent("news_available"),
            "fundamentals": filed(),
            "bull": turn(price, 0.7),
            "bear": turn(price, 0.4),
            "manager": {
                "recommendation": "BUY",
                "confidence": 0.6,
                "winning_side": "bull",
                "rationale": "The bull case holds.",
            },
            "trader": position(price),
            "risky": view("adjust", 0.3),
            "safe": view("adjust", 0.1),
            "neutral": view("support", 0.2),
            "judge": position(price),
        }.items()
    }
    rebuttals = {
        "bull": turn(price, 0.7, "The bear ignores the trend."),
        "bear": turn(price, 0.4, "The bull ignores the valuation."),
        "risky": view("adjust", 0.3, "Safe is too timid."),
        "safe": view("adjust", 0.1, "Risky is too bold."),
        "neutral": view("support", 0.2, "The middle holds."),
    }
    openai_server.script(
        reply_tool_calls([("get_technical_indicators", {"symbol": symbol})]), model="market"
    )
    for name, text in fenced.items():
        openai_server.script(reply_text(text, usage=(500, 60)), model=name)
    for name, body in rebuttals.items():  # each debater's second turn: its rebuttal
        openai_server.script(reply_text(json.dumps(body), usage=(500, 60)), model=name)
    per_agent = {name: f"openai/{name}" for name in fenced}
    models = ModelSettingsConfig(
        api_base=openai_server.api_base, max_retries=0, timeout_s=60, per_agent=per_agent
    )
    recording = settings.model_copy(update={"models": models, "cache": CacheMode.RECORD})
    request = DeskRequest(symbol=symbol, as_of=close_of(day))

    first = await PipelineRunner(recording, TradingDesk(recording, market)).analyze(request)
    assert first is not None and first.decision == "BUY", first.reason
    assert len(openai_server.requests) == 18
    openai_server.assert_consumed()
    assert {a.model for a in first.agents} == {f"openai/{name}" for name in fenced}
    assert sum(a.tokens for a in first.agents) == 17 * 560 + 29
    market_tools = openai_server.requests_for("market")[0].tool_names
    assert "get_technical_indicators" in market_tools and "render_chart" in market_tools
    assert openai_server.requests_for("bull")[0].tools == []  # researchers argue, no tools
    assert first.final is not None and first.final.entry == price

    assert first.run_id is not None
    replayed, same = await replay(recording, market, first.run_id)
    assert same and replayed.decision == "BUY"
    assert sum(a.requests for a in replayed.agents) == 0
    assert len(openai_server.requests) == 18  # nothing reached the provider


def test_the_cli_decides_saves_and_replays(tmp_path: Path) -> None:
    runner = CliRunner()
    env = {"ALPHADESK_DATA_DIR": str(tmp_path / "d"), "COLUMNS": "200"}
    args = [
        "desk",
        "KO",
        "--as-of",
        "2015-06-30",
        "--analysts",
        "market,sentiment",
        "--rounds",
        "2",
        "--risk-rounds",
        "1",
        "--json",
    ]
    decided = runner.invoke(app, args, env=env)
    assert decided.exit_code == 0, decided.output
    result = json.loads(decided.stdout)
    assert result["decision"] == "SELL"
    assert [(e["round"], e["part"]) for e in result["debate"]] == [
        (n, part) for n in (1, 2) for part in ("argument", "argument", "rebuttal", "rebuttal")
    ]
    assert result["news"] is None and len(result["risk_debate"]) == 6

    shown = runner.invoke(app, ["runs", "show", result["run_id"]], env=env)
    assert shown.exit_code == 0 and "Investment debate" in shown.output
    again = runner.invoke(app, ["runs", "replay", result["run_id"]], env=env)
    assert again.exit_code == 0, again.output
    assert "identical decision (SELL)" in again.output

    live = runner.invoke(app, ["desk", "AAPL", "--as-of", "2012-03-30", "--rounds", "1"], env=env)
    assert live.exit_code == 0, live.output
    assert "AAPL: BUY" in live.output and "investment r1 bull" in live.output

    wrong = runner.invoke(app, ["desk", "KO", "--analysts", "market,astrology"], env=env)
    assert wrong.exit_code == 2 and "analysts.1: must be 'market'" in wrong.output
    assert "(got 'astrology')" in wrong.output
    unknown = runner.invoke(app, ["desk", "KOO", "--as-of", "2015-06-30"], env=env)
    assert unknown.exit_code == 1 and "KO" in unknown.output


def test_the_cli_resumes_with_the_recorded_request_and_refuses_another_symbol(
    tmp_path: Path,
) -> None:
    runner = CliRunner()
    env = {"ALPHADESK_DATA_DIR": str(tmp_path / "d"), "COLUMNS": "200"}
    decided = runner.invoke(app, ["desk", "KO", "--as-of", "2015-06-30", "--json"], env=env)
    assert decided.exit_code == 0, decided.output
    run_id = json.loads(decided.stdout)["run_id"]
    again = runner.invoke(app, ["desk", "KO", "--resume", run_id], env=env)
    said = " ".join(again.output.split())
    assert again.exit_code == 1 and "already finished (SELL): nothing to resume" in said
    assert "No provider has current data" not in said  # its date is the recorded one
    assert "symbol" not in said  # no empty table of agents that never ran
    other = runner.invoke(app, ["desk", "MSFT", "--resume", run_id], env=env)
    assert other.exit_code == 2 and f"run {run_id} is about KO, not MSFT" in other.output
    kind = runner.invoke(app, ["csp", "KO", "--resume", run_id], env=env)
    assert kind.exit_code == 2 and f"run {run_id} is a desk run, not a csp run" in kind.output
