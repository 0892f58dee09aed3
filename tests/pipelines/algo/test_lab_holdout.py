"""The lab cannot fool itself: a holdout its search never sees, and a gate that asks the
trial figures (deflated Sharpe ratio, PBO) besides the goal.

Whole offline runs with the ``rules`` agents on synthetic markets in a ``local`` folder;
variants run on the sandbox's engine in-process (``in_process``), so the many runs stay
quick (the sandbox itself is exercised by ``test_lab_rules``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from alphadesk.agents.algo import default_agents
from alphadesk.cli.app import app
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.data.sealed import SealedData, seal
from alphadesk.llm.messages import AssistantMessage, Message, RequestSettings, ToolSpec
from alphadesk.llm.rules import RulesModel
from alphadesk.llm.testing import FunctionModel
from alphadesk.pipelines.algo.backtests import WindowTooShort, minimum_window, plan_periods
from alphadesk.pipelines.algo.models import AlgoRequest, AlgoResult
from alphadesk.pipelines.algo.pipeline import StrategyLab
from alphadesk.pipelines.algo.report import render_report
from alphadesk.pipelines.algo.tracker import load_experiments
from alphadesk.pipelines.desk.memory import Recalled
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.store import RunStore
from tests.pipelines.algo.conftest import in_process
from tests.pipelines.algo.synthetic import (
    noise,
    planted_trend,
    synthetic_settings,
    write_bars,
)

_DAYS = 1010  # four years of sessions: search 606, validation 202, holdout 202 bars


class _Lessons:
    """A memory that keeps what the lab writes (and recalls nothing)."""

    def __init__(self) -> None:
        self.written: list[dict[str, Any]] = []

    def remember(self, **fields: Any) -> str:
        self.written.append(fields)
        return str(len(self.written))

    def recall(
        self, symbol: str, situation: str, *, as_of: datetime, k: int = 2
    ) -> Sequence[Recalled]:
        return []


def _recording_models() -> dict[str, FunctionModel]:
    """Each agent's rules policy behind a model that records every request it gets."""
    models = {}
    for spec in default_agents().all:
        rules = RulesModel(spec.policy)

        async def respond(
            messages: Sequence[Message],
            tools: Sequence[ToolSpec],
            s: RequestSettings,
            rules: RulesModel = rules,
        ) -> AssistantMessage:
            return (await rules.request(messages, tools, s)).message

        models[spec.name] = FunctionModel(respond, name="rules")
    return models


class _Run:
    """One whole lab run on a synthetic market, and everything its loop read or wrote."""

    def __init__(self, root: Path, returns: np.ndarray, **request: Any) -> None:
        self.root = root
        days = write_bars(root / "market", "SYN", returns)
        self.settings = synthetic_settings(root)
        self.models, self.lessons = _recording_models(), _Lessons()
        lab = StrategyLab(
            self.settings,
            build_provider(self.settings),
            models=self.models,
            memory=self.lessons,  # type: ignore[arg-type]
            backtester=in_process,
        )
        fields = {
            "symbol": "SYN",
            "as_of": session_close(days[-1]),
            "start": days[0],
            "goal": "Sharpe above 1 with drawdown under 20%",
            "variants": 3,
            "iterations": 4,
        } | request
        result = asyncio.run(PipelineRunner(self.settings, lab).analyze(AlgoRequest(**fields)))
        assert result is not None
        self.result: AlgoResult = result
        self.days = days

    def prompts(self) -> dict[str, list[str]]:
        """Every message each agent was sent (tool results included), the run's id and
        folder out."""
        run_id, root = self.result.run_id or "-", str(self.root)
        return {
            name: [
                str(m.content).replace(run_id, "RUN").replace(root, "ROOT")
                for request in model.requests
                for m in request.messages
            ]
            for name, model in self.models.items()
        }

    def experiment_lines(self) -> list[dict[str, Any]]:
        assert self.result.tracker_file is not None
        lines = Path(self.result.tracker_file).read_text().splitlines()
        return [json.loads(line) for line in lines]

    def searched(self) -> list[dict[str, Any]]:
        """The lines the loop wrote, without the run's id."""
        return [
            {k: v for k, v in line.items() if k != "run_id"}
            for line in self.experiment_lines()
            if line["period"] == "search"
        ]

    def written_lessons(self) -> list[dict[str, Any]]:
        return [{k: v for k, v in w.items() if k != "run_id"} for w in self.lessons.written]


# -- a market with a planted pattern, and what its holdout may not change -----------


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> _Run:
    return _Run(tmp_path_factory.mktemp("planted"), planted_trend(_DAYS, seed=2))


def test_a_planted_pattern_is_found_passes_the_gate_and_the_holdout_confirms(
    planted: _Run,
) -> None:
    result = planted.result
    assert result.decision == "SUCCESS", result.reason
    assert result.best is not None and result.best.approach in ("trend", "momentum")
    trials, bar = result.trials, result.trial_bar
    assert trials is not None and bar is not None
    assert (bar.min_deflated_sharpe, bar.max_pbo) == (0.95, 0.5)  # the settings' defaults
    assert trials.deflated_sharpe is not None and trials.deflated_sharpe > 0.95
    assert trials.pbo is not None and trials.pbo < 0.5
    holdout = result.holdout
    assert holdout is not None and holdout.variant_id == result.best.variant_id
    assert holdout.run is not None and holdout.passed
    assert (holdout.start, holdout.end) == result.holdout_period
    assert result.holdout_period[1] == planted.days[-1]  # type: ignore[index]
    assert result.out_of_sample and result.out_of_sample[1] < holdout.start


def test_the_periods_follow_the_shares_and_the_holdout_is_its_own_line(planted: _Run) -> None:
    result = planted.result
    assert result.in_sample and result.out_of_sample and result.holdout_period
    sessions = planted.days
    count = [
        sum(first <= d <= last for d in sessions)
        for first, last in (result.in_sample, result.out_of_sample, result.holdout_period)
    ]
    assert count == [606, 202, 202]
    lines = planted.experiment_lines()
    *searched, last = lines
    assert {line["period"] for line in searched} == {"search"}
    assert last["period"] == "holdout" and last["variant_id"] == result.best.variant_id  # type: ignore[union-attr]
    assert last["holdout_sharpe"] == result.holdout.run.metrics["sharpe"]  # type: ignore[union-attr]
    assert not any(k.startswith("holdout_") for line in searched for k in line)
    report = render_report(result)
    assert "## Holdout" in report and "**passed**" in report
    assert "(SUCCESS needs above 95%)" in report


def test_the_loop_never_reads_a_holdout_bar(planted: _Run) -> None:
    """Every tool call of the loop was made at the end of validation, on a market sealed
    there: the lessons are dated then, and no prompt names a later day."""
    result = planted.result
    assert result.out_of_sample is not None
    sealed_at = session_close(result.out_of_sample[1])
    assert {w["decided_at"] for w in planted.lessons.written} == {sealed_at}
    later = [d.isoformat() for d in planted.days if d > result.out_of_sample[1]]
    naming = {
        name
        for name, messages in planted.prompts().items()
        for text in messages
        if any(day in text for day in later[:40])
    }
    assert naming <= {"options_flow"}, naming  # an option's expiry lies ahead by nature


@pytest.mark.slow  # three whole lab runs
@hypothesis_settings(
    max_examples=3,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # a whole lab run per example: no shrinking
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 10_000),
    how=st.sampled_from(["scale", "noise", "crash"]),
)
def test_bars_inside_the_holdout_change_nothing_the_loop_reads_or_records(
    planted: _Run, tmp_path_factory: pytest.TempPathFactory, seed: int, how: str
) -> None:
    """Replace the holdout's bars (rescaled, fresh noise, a crash): every prompt, every
    experiment line of the search, every lesson and the chosen strategy stay the same."""
    returns = planted_trend(_DAYS, seed=2)
    holdout = 202
    rng = np.random.default_rng(seed)
    if how == "scale":
        returns[-holdout:] *= rng.uniform(-3, 3)
    elif how == "noise":
        returns[-holdout:] = rng.normal(0, 0.03, holdout)
    else:
        returns[-holdout:] = -0.02 + rng.normal(0, 0.01, holdout)
    other = _Run(tmp_path_factory.mktemp("perturbed"), returns)
    assert other.prompts() == planted.prompts()
    assert other.searched() == planted.searched()
    assert other.written_lessons() == planted.written_lessons()
    assert other.result.best is not None and planted.result.best is not None
    assert other.result.best.code == planted.result.best.code
    assert other.result.decision == planted.result.decision
    assert other.result.holdout_period == planted.result.holdout_period


# -- pure noise ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def luck(tmp_path_factory: pytest.TempPathFactory) -> _Run:
    """Six iterations of four variants on a driftless random walk, with a goal (Sharpe
    above 0.5) that luck meets in search and validation now and then."""
    return _Run(
        tmp_path_factory.mktemp("noise"),
        noise(_DAYS, seed=3),
        goal="Sharpe above 0.5",
        variants=4,
        iterations=6,
    )


@pytest.mark.slow  # the fixture: six iterations of four variants
def test_on_noise_the_gate_refuses_what_passes_by_luck(luck: _Run) -> None:
    result = luck.result
    assert result.decision != "SUCCESS"
    lucky = [v for v in result.variants if v.passed]
    assert lucky, "no variant passed search and validation by luck: the test shows nothing"
    for entry in result.iterations:
        assert entry.gate.decision != "SUCCESS"
        if any(v.passed for v in result.variants if v.iteration == entry.iteration):
            assert entry.failure is not None and entry.trials is not None
            assert entry.failure.root_cause.startswith("overfitting:")
            assert entry.trials.deflated_sharpe is not None
            assert entry.trials.deflated_sharpe <= 0.95 or (entry.trials.pbo or 0) >= 0.5
    frame = load_experiments(Path(result.tracker_file or ""))
    searched = frame[frame["period"] == "search"]
    assert list(searched["trials"]) == [
        int((searched["iteration"] <= i).sum()) for i in searched["iteration"]
    ]


@pytest.mark.slow
def test_on_noise_the_holdout_is_reported_as_it_came_out(luck: _Run) -> None:
    result = luck.result
    holdout = result.holdout
    assert holdout is not None and holdout.run is not None and result.best is not None
    assert holdout.variant_id == result.best.variant_id
    sharpe = holdout.run.metrics["sharpe"]
    assert sharpe is not None and holdout.passed == (sharpe >= 0.5)
    assert not holdout.passed  # luck in the search does not carry over
    report = render_report(result)
    assert "**failed**" in report and "overfitting:" in report
    # the holdout is nowhere in what the loop wrote
    assert all(w["outcome"].get("holdout") is None for w in luck.lessons.written)
    assert not any("holdout" in w["lesson"] for w in luck.lessons.written)


# -- the periods, the sealed view and bad input ---------------------------------------


def _sessions(n: int) -> list[date]:
    from alphadesk.data.calendar import sessions_between

    return sessions_between(date(2015, 1, 2), date(2030, 1, 1))[:n]


def test_the_minimum_window_is_exact() -> None:
    for validation, holdout in ((0.2, 0.2), (0.1, 0.3), (0.3, 0.4)):
        least = minimum_window(validation, holdout)
        plan_periods(_sessions(least), None, validation, holdout)
        with pytest.raises(WindowTooShort, match=f"needs {least} bars or more"):
            plan_periods(_sessions(least - 1), None, validation, holdout)


def test_a_window_too_short_for_cscv_names_its_blocks() -> None:
    # 200 bars at 30% and 40%: three periods of 60 or more, but 120 to search and validate
    with pytest.raises(WindowTooShort, match=r"160 or more \(CSCV's 16 blocks of 10 returns\)"):
        plan_periods(_sessions(200), None, 0.3, 0.4)


def test_a_sealed_market_answers_nothing_later(settings: Settings) -> None:
    market = build_provider(settings)
    until = session_close(date(2012, 6, 29))
    view = seal(market, until)
    bars = view.daily_bars("AAPL", until)
    assert bars.last_time == until
    with pytest.raises(SealedData, match="ends at 2012-06-29"):
        view.daily_bars("AAPL", session_close(date(2012, 7, 2)))
    with pytest.raises(SealedData):
        view.fundamentals("AAPL", session_close(date(2013, 1, 2)))
    assert all(c.end is None or c.end <= until.date() for c in view.coverage())


def test_the_cli_refuses_a_window_too_short_and_records_nothing(tmp_path: Path) -> None:
    env = {"ALPHADESK_DATA_DIR": str(tmp_path / "alphadesk")}
    args = [
        "algo",
        "AAPL",
        "--goal",
        "Sharpe above 1",
        "--from",
        "2012-01-03",
        "--to",
        "2012-12-31",
    ]
    shown = CliRunner().invoke(app, args, env=env)
    assert shown.exit_code == 2, shown.output
    said = " ".join(shown.output.split())
    assert "250 bars from 2012-01-03" in said
    assert f"the window needs {minimum_window(0.2, 0.2)} bars or more" in said
    store = tmp_path / "alphadesk" / "alphadesk.sqlite"
    assert not store.exists() or RunStore(store).recent(kind="algo") == []
    bad = CliRunner().invoke(app, [*args[:4], "--holdout", "0.6"], env=env)
    assert bad.exit_code == 2 and "--holdout" in bad.output
