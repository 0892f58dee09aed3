"""The memorization control: the rules desk decides the same on the real and the disguised
market and no prompt of the disguised run names the real stock or date; a model that
remembers the period shows a large gap."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from alphadesk.agents.desk.models import FinalDecision
from alphadesk.config import DataSettings, Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import local_date
from alphadesk.data.disguised import disguise_of
from alphadesk.llm.base import Model
from alphadesk.llm.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    RequestSettings,
    SystemMessage,
    ToolSpec,
    Usage,
    UserMessage,
    text_of,
)
from alphadesk.llm.wrapper import ModelWrapper
from alphadesk.pipelines.evaluation import EvalSpec, EvaluationError, deciding
from alphadesk.pipelines.evaluation.anonymize import ANONYMIZED_FILES, evaluate_anonymized
from alphadesk.pipelines.evaluation.journal import DecisionJournal
from alphadesk.pipelines.evaluation.spread import decide_in_processes
from alphadesk.store.runs import RunStore

# IBM on 2012-05-25 was decided differently in the disguise while the sentiment analyst's
# S&P 500 (read by its name, ^GSPC) was renamed away.
SAME = EvalSpec(symbols=["IBM", "AAPL"], start=date(2012, 5, 11), end=date(2012, 5, 31))
REMEMBERED = EvalSpec(symbols=["IBM", "AAPL"], start=date(2012, 3, 1), end=date(2012, 5, 31))


class Recorded(ModelWrapper):
    """Answers as ``inner``, keeping the text of every message it was sent but the system
    prompt (the agent's fixed instructions and output schema, the same in every run)."""

    def __init__(self, inner: Model, into: list[str]) -> None:
        super().__init__(inner)
        self.into = into

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        self.into += [text_of(m.content) for m in messages if not isinstance(m, SystemMessage)]
        return await super().request(messages, tools, settings)


@pytest.mark.slow
def test_the_rules_desk_decides_the_same_and_no_prompt_names_the_real_stock_or_date(
    tmp_path: Path,
) -> None:
    runs: list[list[str]] = []  # the prompts of each evaluation, in order: real, disguised

    def recorded(agent: str, model: Model) -> Model:
        if agent == "market":  # the first agent built: a new evaluation begins
            runs.append([])
        return Recorded(model, runs[-1])

    settings = Settings(data_dir=tmp_path)
    result = asyncio.run(evaluate_anonymized(settings, SAME, seed=5, wrap_model=recorded))

    assert [d.decision for d in result.disguised.decisions] == [
        d.decision for d in result.original.decisions
    ]
    assert result.differing == []
    assert [r["symbol"] for r in result.rows] == ["IBM", "AAPL", "pooled"]
    for row in result.rows:
        assert row["agreement"] == 1.0 and row["decisions"] == (
            4 if row["symbol"] == "pooled" else 2
        )
        assert row["return"] == row["return_disguised"] and row["return_gap"] == 0.0
        assert row["sharpe_gap"] in (0.0, None)
        # The same curve twice: the gap is nought on every resampled path.
        assert row["ann_return_gap"] == row["ann_return_gap_low"] == 0.0
        assert row["ann_return_gap_high"] == 0.0
    # No real ticker, company name or date of this century reaches the disguised run's
    # prompts; the scan finds the tickers and years where they are, in the real run's.
    real, disguised = (" ".join(run) for run in runs)
    # (a year: not the tail of an escape such as \u2026, nor a price such as 2018.59)
    tickers, years = r"(?<![A-Z])(IBM|AAPL)(?![A-Z])", r"(?<![\w.])20[0-2]\d(?!\d|\.\d)"
    assert re.search(tickers, real) and re.search(years, real)
    for pattern in (tickers, years, r"(?i)international business machines|apple"):
        found = re.findall(pattern, disguised)
        assert not found, f"{pattern}: {found[:5]}"
    fake = result.disguise.names
    assert fake["IBM"] in disguised and fake["AAPL"] in disguised
    assert "1984-05-25" in disguised and "2012-05-25" in real
    table = json.loads((result.folder / "anonymized.json").read_text())
    assert table["rows"] == result.rows
    assert table["disguise"]["symbols"] == {"IBM": fake["IBM"], "AAPL": fake["AAPL"]}
    assert all((result.folder / name).stat().st_size for name in ANONYMIZED_FILES)


class Memorizer(ModelWrapper):
    """A judge that has read the period's prices: it finds the ticker and date in its
    prompt and buys before the rises it remembers, sells before the falls; what it does not
    recognise it sells. Its levels sit 1 % around the prompt's current price."""

    def __init__(self, inner: Model, memory: dict[str, pd.Series], horizon: int) -> None:
        super().__init__(inner)
        self.memory, self.horizon = memory, horizon

    def remembers_a_rise(self, prompt: str) -> bool:
        asked = re.match(r"(\S+) as of (\d{4}-\d\d-\d\d)", prompt)
        if asked is None or asked.group(1) not in self.memory:
            return False
        closes = self.memory[asked.group(1)]
        day = date.fromisoformat(asked.group(2))
        if day not in closes.index:
            return False
        at = closes.index.get_loc(day)
        later = closes.iloc[min(at + self.horizon, len(closes) - 1)]
        return bool(later > closes.iloc[at])

    async def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], settings: RequestSettings
    ) -> ModelResponse:
        prompt = next(text_of(m.content) for m in messages if isinstance(m, UserMessage))
        price = float(re.search(r'"market\.current_price": ([\d.]+)', prompt).group(1))  # type: ignore[union-attr]
        buy = self.remembers_a_rise(prompt)
        decision = FinalDecision(
            action="BUY" if buy else "SELL",
            size_fraction=0.5,
            entry=price,
            stop=round(price * (0.99 if buy else 1.01), 2),
            horizon_days=14,
            conviction=0.9,
            rationale="I remember what came next." if buy else "Nothing I remember rising.",
        )
        return ModelResponse(
            message=AssistantMessage(content=decision.model_dump_json()),
            model=self.name,
            usage=Usage(requests=1),
            finish_reason="stop",
        )


def _memory(settings: Settings, spec: EvalSpec) -> dict[str, pd.Series]:
    """Each symbol's closes by New York date, as far as the bundled data goes."""
    market = build_provider(settings)
    end = pd.Timestamp("2012-12-31 21:00", tz="UTC").to_pydatetime()
    memory = {}
    for symbol in spec.symbols:
        closes = market.daily_bars(symbol, end).prices()
        memory[symbol] = pd.Series(
            closes.to_numpy(), index=[local_date(t.to_pydatetime()) for t in closes.index]
        )
    return memory


@pytest.mark.slow
def test_a_model_that_remembers_the_period_shows_a_large_gap(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    memory = _memory(settings, REMEMBERED)

    def remembering(agent: str, model: Model) -> Model:
        return Memorizer(model, memory, REMEMBERED.every) if agent == "judge" else model

    result = asyncio.run(evaluate_anonymized(settings, REMEMBERED, wrap_model=remembering))

    # Real market: it buys exactly before each remembered rise (checked on the bars).
    for record in result.original.decisions:
        closes = memory[record.symbol]
        at = closes.index.get_loc(local_date(record.as_of))
        rose = closes.iloc[at + REMEMBERED.every] > closes.iloc[at]
        assert record.decision == ("BUY" if rose else "SELL"), record
    # Disguised market: it recognises nothing.
    assert {d.decision for d in result.disguised.decisions} == {"SELL"}
    pooled = result.rows[-1]
    assert pooled["symbol"] == "pooled" and pooled["decisions"] == 14
    assert pooled["return_disguised"] == 0.0  # never in the market
    assert pooled["return_gap"] > 0.03
    assert pooled["return"] > 0.03
    buys = sum(d.decision == "BUY" for d in result.original.decisions)
    assert pooled["agreement"] == pytest.approx(1 - buys / 14, abs=1e-6)
    assert 0 < buys < 14
    assert len(result.differing) == buys
    # The gap's interval, both curves resampled on the same days, lies above nought.
    assert pooled["ann_return_gap_low"] > 0
    assert pooled["ann_return_gap_low"] < pooled["ann_return_gap"] < pooled["ann_return_gap_high"]


@pytest.mark.slow
def test_in_worker_processes_the_rules_desk_decides_the_same_in_the_disguise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    views: list[object] = []  # what each half's worker processes were given to ask with

    async def spied(*args: Any, **kwargs: Any) -> None:
        views.append(kwargs["view"])
        await decide_in_processes(*args, **kwargs)

    monkeypatch.setattr(deciding, "decide_in_processes", spied)
    result = asyncio.run(evaluate_anonymized(Settings(data_dir=tmp_path), SAME, seed=5, workers=2))

    assert views == [None, result.disguise]
    original, disguised = result.original.decisions, result.disguised.decisions
    assert [d.decision for d in disguised] == [d.decision for d in original]
    assert "failed" not in {d.decision for d in disguised}
    assert result.differing == [] and result.rows[-1]["agreement"] == 1.0
    # The workers' desks were asked the disguised names and years; the records keep the real.
    store = RunStore(result.disguised.folder / "store" / "alphadesk.sqlite")
    runs = [store.get(d.run_id) for d in disguised if d.run_id]
    assert len(runs) == len(disguised) == 4
    assert {r.request["symbol"] for r in runs} == {result.disguise.names[s] for s in SAME.symbols}
    assert {r.as_of.year for r in runs if r.as_of} == {1984}
    assert {d.symbol for d in disguised} == set(SAME.symbols)


@pytest.mark.slow  # three anonymized evaluations
def test_a_rerun_continues_both_halves_and_fresh_discards_both(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    first = asyncio.run(evaluate_anonymized(settings, SAME, seed=5, workers=1))
    table = (first.folder / "anonymized.md").read_bytes()
    # The disguised half stopped after its first decision (its journal as a kill leaves it).
    journal = first.disguised.folder / "decisions.jsonl"
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:2]))
    heard: list[int] = []

    again = asyncio.run(
        evaluate_anonymized(settings, SAME, seed=5, workers=1, on_resume=heard.append)
    )

    assert heard == [4, 1]
    assert again.original.manifest["decided_now"] == 0
    assert again.disguised.manifest["decided_now"] == 3
    assert again.rows == first.rows and (again.folder / "anonymized.md").read_bytes() == table
    fresh = asyncio.run(evaluate_anonymized(settings, SAME, seed=5, workers=1, fresh=True))
    assert [fresh.original.manifest["decided_now"], fresh.disguised.manifest["decided_now"]] == [
        4,
        4,
    ]
    assert fresh.rows == first.rows


def test_a_disguised_folder_holding_another_evaluation_is_refused(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    other = SAME.model_copy(update={"symbols": ["IBM"]})
    DecisionJournal.open(tmp_path / "anon" / "disguised-5", other).close()

    with pytest.raises(EvaluationError, match=r"disguised-5 holds the decisions of another"):
        asyncio.run(evaluate_anonymized(settings, SAME, seed=5, workers=1, out=tmp_path / "anon"))


@pytest.mark.slow
def test_a_disguised_half_drawn_otherwise_from_the_same_seed_is_refused(tmp_path: Path) -> None:
    # The same seed draws another disguise once the data holds the ticker IBM was given
    # (a disguised name is never a real one): decisions asked in the first disguise must
    # not be taken for the second's.
    out = tmp_path / "anon"
    first = asyncio.run(
        evaluate_anonymized(Settings(data_dir=tmp_path), SAME, seed=5, workers=1, out=out)
    )
    taken = first.disguise.names["IBM"]
    bars = tmp_path / "mine" / "bars" / "1d"
    bars.mkdir(parents=True)
    (bars / f"{taken}.csv").write_text("date,close\n2012-05-11,10\n")
    mine = DataSettings(providers=["bundled", "local"], local_dir=bars.parents[1])
    settings = Settings(data_dir=tmp_path, data=mine)
    assert disguise_of(build_provider(settings), SAME.symbols, seed=5).names["IBM"] != taken

    with pytest.raises(EvaluationError, match=r"disguised-5 holds .* \(disguise: .*--fresh"):
        asyncio.run(evaluate_anonymized(settings, SAME, seed=5, workers=1, out=out))
    again = asyncio.run(evaluate_anonymized(settings, SAME, seed=5, workers=1, out=out, fresh=True))
    assert again.disguised.manifest["decided_now"] == 4
    drawn = json.loads((out / "anonymized.json").read_text())["disguise"]
    assert drawn["symbols"]["IBM"] == again.disguise.names["IBM"] != taken


def test_the_csp_desk_is_refused(tmp_path: Path) -> None:
    spec = EvalSpec(desk="csp", symbols=["IBM"], start=date(2012, 5, 11), end=date(2012, 5, 31))
    with pytest.raises(EvaluationError, match="trading desk only"):
        asyncio.run(evaluate_anonymized(Settings(data_dir=tmp_path), spec))
    assert not (tmp_path / "evals").exists()  # refused before anything ran
