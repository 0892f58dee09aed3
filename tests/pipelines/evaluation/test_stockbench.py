"""StockBench's protocol on the bundled data: its passive baseline reproduced, and the
command's table the same bytes twice."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app
from alphadesk.pipelines.evaluation.book import score_book
from alphadesk.pipelines.evaluation.stockbench import (
    PAPER,
    PROTOCOL,
    market_frames,
    passive_baseline,
)


def test_the_passive_baseline_matches_the_paper_s() -> None:
    opens, _, _ = market_frames()
    window = opens.iloc[PROTOCOL.warmup :]
    assert len(window) == 83  # the sessions of 2025-03-03..06-30
    assert window.index[0] == pd.Timestamp("2025-03-03")
    score = score_book(passive_baseline(window))
    paper = next(row for row in PAPER if row[0] == "Passive Baseline")
    assert 100 * score.final_return == pytest.approx(paper[1], abs=0.3)
    assert 100 * score.max_drawdown == pytest.approx(paper[2], abs=0.3)
    assert score.sortino == pytest.approx(paper[3], abs=0.002)
    # pinned: what it is on the bundled data (the paper rounds these)
    assert score.final_return == pytest.approx(0.0037812, abs=1e-6)
    assert score.max_drawdown == pytest.approx(-0.1520968, abs=1e-6)
    assert score.sortino == pytest.approx(0.0154898, abs=1e-6)


def test_the_baseline_is_stockbench_s_per_name_formula() -> None:
    opens, _, _ = market_frames()
    window = opens.iloc[PROTOCOL.warmup :]
    # build_per_symbol_bh_benchmark, by hand: shares = (C/n)/(1+fee)/p0, nav = shares*p/(C/n)
    per_name = {s: (1 / 1.0003) / window[s].iloc[0] * window[s] for s in window.columns}
    reference = pd.DataFrame(per_name).mean(axis=1)
    ours = passive_baseline(window).nav / PROTOCOL.cash
    assert ours.to_numpy() == pytest.approx(reference.to_numpy(), rel=1e-12)


@pytest.mark.slow
def test_the_command_prints_the_paper_beside_ours_and_the_same_bytes_twice(
    tmp_path: Path,
) -> None:
    env = {"COLUMNS": "240", "ALPHADESK_DATA_DIR": str(tmp_path)}
    # two names, three decision dates: the paper's window, so the paper's rows are shown
    args = ["eval", "--benchmark", "stockbench", "--symbols", "AAPL,JPM", "--every", "41"]
    args += ["--workers", "1", "--out", str(tmp_path / "sb")]
    first = CliRunner().invoke(app, args, env=env)
    assert first.exit_code == 0, first.output
    for name in ("Kimi-K2", "GPT-OSS-20B", "Passive Baseline", "passive baseline", "desk (rules)"):
        assert name in first.stdout
    assert "arXiv 2510.02209 v1" in first.stdout
    again = CliRunner().invoke(app, args, env=env)
    assert again.stdout == first.stdout
    assert "recorded before" in again.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--from", "2024-12-20"], "or the session before it"),
        (["--from", "2020-01-01"], "choose a later --from"),
        (["--from", "2025-03-xx"], "is not a date"),
        (["--desk", "csp"], "one long-only book"),
        (["--from", "2025-06-01", "--to", "2025-05-01"], "is after --to"),
    ],
)
def test_bad_benchmark_input_is_refused_with_a_reason(
    tmp_path: Path, args: list[str], said: str
) -> None:
    env = {"COLUMNS": "240", "ALPHADESK_DATA_DIR": str(tmp_path)}
    shown = CliRunner().invoke(app, ["eval", "--benchmark", "stockbench", *args], env=env)
    assert shown.exit_code == 2
    assert said in " ".join(shown.stderr.split())
    assert not (tmp_path / "evals").exists()  # nothing decided, nothing written
