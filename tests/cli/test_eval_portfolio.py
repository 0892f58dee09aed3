"""``alphadesk eval --portfolio``: symbols run as one book on any window of the bundled
data, offline; the same bytes on a rerun, continued from its journal after an
interruption, its bad input refused before anything is decided, and its weighting a seam
another rule plugs into."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app
from alphadesk.config import Settings
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.pipelines.evaluation.desk_book import (
    DESK_ROW,
    EQUAL_LONGS,
    MANAGED,
    Weighting,
    evaluate_desk_book,
)
from alphadesk.pipelines.evaluation.journal import JOURNAL
from alphadesk.pipelines.evaluation.stockbench import HOLD, Protocol

NAMES = ("AAPL", "MSFT", "IBM")
START, END = date(2012, 3, 1), date(2012, 3, 16)
ARGS = ["eval", "--portfolio", "-s", ",".join(NAMES), "--from", str(START), "--to", str(END)]
ARGS += ["--every", "5", "--workers", "1", "--json"]
COSTS = 0.001 + 0.0005  # eval's default commission and slippage
DESK = DESK_ROW.format(model="rules", weighting=EQUAL_LONGS.label)
MANAGED_ROW = DESK_ROW.format(model="rules", weighting=MANAGED.label)


def _eval(cli: CliRunner, out: Path, *extra: str) -> dict[str, Any]:
    done = cli.invoke(app, [*ARGS, "--out", str(out), *extra])
    assert done.exit_code == 0, done.output
    payload: dict[str, Any] = json.loads(done.stdout)
    return payload


def _held(cash: float) -> float:
    """Equal weight held, from the bars themselves: a third of the cash less the costs in
    each name at the window's first open, valued at its last open (no dividend then)."""
    market = BundledProvider()
    as_of = datetime(2012, 3, 31, tzinfo=UTC)
    value = 0.0
    for symbol in NAMES:
        frame = market.daily_bars(symbol, as_of).frame
        days = frame.index.date
        opens = frame["open"][(days >= START) & (days <= END)]
        value += cash / 3 / (1 + COSTS) * float(opens.iloc[-1]) / float(opens.iloc[0])
    return value / cash - 1


def test_the_portfolio_runs_as_one_book_and_reruns_to_the_same_bytes(
    cli: CliRunner, tmp_path: Path
) -> None:
    out = tmp_path / "book"
    payload = _eval(cli, out)
    rows = {r["name"]: r for r in payload["rows"]}
    rules = {"equal weight, rebalanced daily", "trend 20 (close > 20-day mean)"}
    assert set(rows) == {HOLD, *rules, DESK, MANAGED_ROW}
    assert payload["protocol"]["kind"] == "portfolio"
    assert payload["protocol"]["commission_bps"] == pytest.approx(COSTS * 1e4)
    assert rows[HOLD]["final_return"] == pytest.approx(100 * _held(100_000), abs=0.006)
    assert rows[DESK]["excess_low"] is not None  # intervals against equal weight held
    book = json.loads((out / "book.json").read_text())
    assert book["sessions"][0] == "2012-03-01" and book["sessions"][-1] == "2012-03-16"
    decided = (out / JOURNAL).read_text().splitlines()[1:]
    assert len(decided) == 3 * 3  # three names at the closes before 03-01, 03-08, 03-15
    before = {n: (out / n).read_bytes() for n in ("book.json", "book.md")}
    again = _eval(cli, out)
    assert again["manifest"]["decided_now"] == 0
    assert {n: (out / n).read_bytes() for n in before} == before


def test_an_interrupted_portfolio_continues_from_its_journal(
    cli: CliRunner, tmp_path: Path
) -> None:
    protocol = Protocol(
        kind="portfolio", symbols=NAMES, start=START, end=END, commission_bps=COSTS * 1e4
    )
    settings = Settings(data_dir=tmp_path)
    cut = tmp_path / "cut"

    def stop_after_two(record: object, seen: list[object] = []) -> None:  # noqa: B006
        seen.append(record)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(
            evaluate_desk_book(
                settings, protocol, every=5, out=cut, workers=1, on_decision=stop_after_two
            )
        )
    assert len((cut / JOURNAL).read_text().splitlines()) == 1 + 2
    assert not (cut / "book.json").exists()
    resumed = _eval(cli, cut)
    assert resumed["manifest"]["resumed"] == 2 and resumed["manifest"]["decided_now"] == 7
    whole = tmp_path / "whole"
    _eval(cli, whole)
    for name in ("book.json", "book.md"):
        assert (cut / name).read_bytes() == (whole / name).read_bytes(), name


def test_another_weighting_plugs_into_the_same_walk(tmp_path: Path) -> None:
    protocol = Protocol(kind="portfolio", symbols=NAMES, start=START, end=END)
    heard: list[tuple[int, list[str], float]] = []

    def first_long(decisions: Any, session: Any) -> dict[str, float]:
        heard.append((session.i, [r.symbol for r in decisions], float(session.weights.sum())))
        longs = sorted(r.symbol for r in decisions if (r.position or 0) > 0)
        return {longs[0]: 0.5} if longs else {}

    result = asyncio.run(
        evaluate_desk_book(
            Settings(data_dir=tmp_path),
            protocol,
            every=5,
            out=tmp_path / "w",
            workers=1,
            weightings=(Weighting("half in its first long", first_long),),
        )
    )
    assert [names for _, names, _ in heard] == [list(NAMES)] * 3
    assert heard[0][0] == protocol.warmup and heard[1][0] == protocol.warmup + 5
    assert heard[0][2] == 0.0  # all cash before the first trade
    row = next(r for r in result.rows if r.name == "desk (rules): half in its first long")
    held = next(r for r in result.rows if r.name == HOLD)
    assert abs(row.final_return) < abs(held.final_return)  # half the book in one name


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--long-short"], "one long-only book"),
        (["--cash", "0"], "greater than 0"),
    ],
)
def test_bad_input_is_refused_before_anything_is_decided(
    cli: CliRunner, tmp_path: Path, extra: list[str], said: str
) -> None:
    out = tmp_path / "bad"
    done = cli.invoke(app, [*ARGS, "--out", str(out), *extra])
    assert done.exit_code == 2
    assert said in " ".join(done.output.split())
    assert not out.exists()


def test_a_name_without_opens_is_named_and_nothing_is_decided(
    cli: CliRunner, tmp_path: Path
) -> None:
    out = tmp_path / "amd"
    args = ["eval", "--portfolio", "-s", "AAPL,AMD", "--from", "2012-03-01", "--to", "2012-03-16"]
    done = cli.invoke(app, [*args, "--out", str(out)])
    assert done.exit_code == 2
    text = " ".join(done.output.split())
    assert "AMD's data has no opens and closes" in text and "drop it" in text
    assert not (out / JOURNAL).exists()


def test_reused_reports_make_the_same_book_with_fewer_model_calls(
    cli: CliRunner, tmp_path: Path
) -> None:
    whole, reusing = _eval(cli, tmp_path / "whole"), _eval(cli, tmp_path / "r", "--reuse-reports")
    for name in ("book.json", "book.md"):
        assert (tmp_path / "r" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    assert reusing["manifest"]["model_calls"] < whole["manifest"]["model_calls"]
    said = [json.loads(line) for line in (tmp_path / "r" / JOURNAL).read_text().splitlines()[1:]]
    plain = [json.loads(line) for line in (tmp_path / "whole" / JOURNAL).read_text().splitlines()]
    decided = {(d["symbol"], d["as_of"]): d["decision"] for d in plain[1:]}
    assert {(d["symbol"], d["as_of"]): d["decision"] for d in said} == decided


def test_reuse_is_refused_without_a_book(cli: CliRunner, tmp_path: Path) -> None:
    done = cli.invoke(app, ["eval", "-s", "IBM", "--reuse-reports", "--out", str(tmp_path / "x")])
    assert done.exit_code == 2 and "add --portfolio" in " ".join(done.output.split())


def test_an_index_gives_its_members_of_the_first_day_with_data(
    cli: CliRunner, tmp_path: Path
) -> None:
    args = ["eval", "--portfolio", "--universe", "dow30", "--from", "2025-03-03"]
    args += ["--to", "2025-03-07", "--every", "5", "--workers", "1", "--json"]
    done = cli.invoke(app, [*args, "--out", str(tmp_path / "dow")])
    assert done.exit_code == 0, done.output
    said = " ".join(done.stderr.split())
    assert "Dow Jones Industrial Average on 2025-03-03: 30 members, 20 with daily bars" in said
    names = json.loads(done.stdout)["protocol"]["symbols"]
    assert len(names) == 20 and {"AAPL", "JPM", "PG"} <= set(names) and "NVDA" not in names


def test_a_triaged_book_asks_the_desk_less_updates_on_news_and_carries_the_rest(
    cli: CliRunner, tmp_path: Path
) -> None:
    """Where the triage asks the whole desk, its decision is the full desk's on the same
    day; where it asks an update, the decision is the quick desk's (`alphadesk desk` with
    the news analyst and no rounds); every other day carries the name's last decision,
    said so; a rerun writes the same bytes."""
    args = ["eval", "--portfolio", "-s", "AAPL,JPM", "--from", "2025-03-03", "--to"]
    args += ["2025-03-11", "--every", "1", "--workers", "1", "--json", "--out"]

    def run(folder: Path, *extra: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        done = cli.invoke(app, [*args, str(folder), *extra])
        assert done.exit_code == 0, done.output
        lines = (folder / JOURNAL).read_text().splitlines()[1:]
        return json.loads(done.stdout), [json.loads(line) for line in lines]

    full, everyday = run(tmp_path / "full")
    triaged, asked = run(tmp_path / "triage", "--depth", "triage")
    manifest = triaged["manifest"]
    calls = [json.loads(line) for line in (tmp_path / "triage" / "triage.jsonl").open()]
    counted = {ask: sum(c["ask"] == ask for c in calls) for ask in ("full", "update", "carry")}
    assert counted["update"] > 0 and counted["carry"] > 0, counted
    assert (manifest["update calls"], manifest["carry calls"]) == (
        counted["update"],
        counted["carry"],
    )
    assert len(asked) + counted["carry"] == len(everyday) == 2 * 7
    by_day = {(d["symbol"], d["as_of"]): d["decision"] for d in everyday}
    made = {(d["symbol"], d["as_of"]): d["decision"] for d in asked}
    for call in calls:
        key = (call["symbol"], call["as_of"])
        if call["ask"] == "full":
            assert made[key] == by_day[key], call
        elif call["ask"] == "update":
            quick = ["desk", call["symbol"], "--as-of", call["as_of"][:10], "--analysts", "news"]
            quick += ["--rounds", "0", "--risk-rounds", "0", "--no-memory", "--json"]
            done = cli.invoke(app, quick, env={"ALPHADESK_DATA_DIR": str(tmp_path / "q")})
            assert done.exit_code == 0, done.output
            assert made[key] == json.loads(done.stdout)["decision"], call
    assert manifest["model_calls"] < full["manifest"]["model_calls"]
    names = {r["name"] for r in triaged["rows"]}
    assert DESK_ROW.format(model="rules, triage", weighting=EQUAL_LONGS.label) in names
    before = {n: (tmp_path / "triage" / n).read_bytes() for n in ("book.json", "book.md")}
    run(tmp_path / "triage", "--depth", "triage")
    assert {n: (tmp_path / "triage" / n).read_bytes() for n in before} == before


def test_memory_is_refused_with_workers(cli: CliRunner, tmp_path: Path) -> None:
    args = ["eval", "--portfolio", "-s", "AAPL", "--memory", "--workers", "2"]
    done = cli.invoke(app, [*args, "--out", str(tmp_path / "x")])
    assert done.exit_code == 2 and "drop --workers" in " ".join(done.output.split())
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("option", [["--depth", "triage"], ["--memory"]])
def test_triage_and_memory_are_refused_without_a_book(
    cli: CliRunner, tmp_path: Path, option: list[str]
) -> None:
    done = cli.invoke(app, ["eval", "-s", "IBM", *option, "--out", str(tmp_path)])
    assert done.exit_code == 2 and "add --portfolio" in " ".join(done.output.split())
