"""`alphadesk backtest` through typer's CliRunner, offline (bundled data)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.analytics.overfitting import deflated_sharpe_ratio
from alphadesk.analytics.performance import returns_from_equity
from alphadesk.backtest import BacktestConfig, Costs, run_strategy
from alphadesk.cli.app import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def _private_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")


def test_sma_cross_on_aapl_prints_a_table(bars) -> None:
    result = runner.invoke(
        app, ["backtest", "sma_cross", "AAPL", "--from", "2005-01-01", "--to", "2010-12-31"]
    )
    assert result.exit_code == 0, result.output
    for text in ("sma_cross(fast=20, slow=50)", "Sharpe", "max drawdown", "buy & hold"):
        assert text in result.output
    assert "2005-01-03 to 2010-12-31" in result.output
    # The table's final value is the engine's (indicators warm up on bars before --from).
    frame = bars("AAPL", "2000-01-01", "2010-12-31")
    config = BacktestConfig(costs=Costs(0.001, slippage=0.0005))
    expected = run_strategy("sma_cross", frame, config=config, trade_from="2005-01-01")
    assert f"{expected.final_value:,.2f}" in result.output


def test_json_from_the_backtrader_engine_agrees_with_the_fast_one() -> None:
    args = ["backtest", "macd", "MSFT", "--from", "2008-01-01", "--to", "2009-12-31", "--json"]
    fast = json.loads(runner.invoke(app, args).output)
    reference = json.loads(runner.invoke(app, [*args, "--engine", "backtrader"]).output)
    assert (fast["engine"], reference["engine"]) == ("fast", "backtrader")
    assert fast["metrics"] == reference["metrics"]
    assert fast["trades"] == reference["trades"]
    assert fast["metrics"]["trades"] > 5


def test_charts_are_written(tmp_path: Path) -> None:
    folder = tmp_path / "charts"
    args = ["backtest", "zmr", "NVDA", "--from", "2016-01-01", "--to", "2017-12-31"]
    result = runner.invoke(app, [*args, "--chart", str(folder), "--trades", "0"])
    assert result.exit_code == 0, result.output
    for name in ("NVDA_zmr_equity.png", "NVDA_zmr_drawdown.png"):
        data = (folder / name).read_bytes()
        assert data.startswith(b"\x89PNG") and 5_000 < len(data) < 200_000


AAPL_2015_2019 = ["sma_cross", "AAPL", "--from", "2015-01-01", "--to", "2019-12-31"]


def test_trials_print_the_deflated_sharpe_of_the_runs_returns(bars) -> None:
    result = runner.invoke(app, ["backtest", *AAPL_2015_2019, "--trials", "20"])
    assert result.exit_code == 0, result.output
    frame = bars("AAPL", "2000-01-01", "2019-12-31")
    config = BacktestConfig(costs=Costs(0.001, slippage=0.0005))
    run = run_strategy("sma_cross", frame, config=config, trade_from="2015-01-01")
    expected = deflated_sharpe_ratio(returns_from_equity(run.equity), 20)
    assert f"deflated Sharpe ratio {expected.probability:.1%}" in result.output
    assert f"beats {expected.annualised()[1]:.2f}, the best of 20" in result.output
    assert "over 1,257 returns" in result.output


def _deflated_json(*extra: str) -> dict[str, float]:
    result = runner.invoke(app, ["backtest", *AAPL_2015_2019, "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["deflated_sharpe"]


def test_more_trials_or_wider_trials_deflate_more() -> None:
    few, many = _deflated_json("--trials", "2"), _deflated_json("--trials", "200")
    assert few["sharpe"] == many["sharpe"] and few["returns"] == 1257
    assert few["probability"] > many["probability"]
    wide = _deflated_json("--trials", "200", "--trials-sharpe-std", "1.0")
    assert wide["trials_sharpe_std"] == pytest.approx(1.0)
    assert wide["benchmark_sharpe"] > many["benchmark_sharpe"]
    assert wide["probability"] < many["probability"]
    assert "deflated_sharpe" not in json.loads(
        runner.invoke(app, ["backtest", *AAPL_2015_2019, "--json"]).output
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["turtle", "AAPL"], "unknown strategy 'turtle'"),
        (["./no_such_strategy.py", "AAPL"], "cannot read strategy file"),
        (["sma_cross", "NOSUCH"], "no provider had daily bars"),
        (["sma_cross", "MSFT", "--from", "2014-01-01", "--to", "2014-06-30"], "bars end 2013"),
        (["sma_cross", "MSFT", "--from", "2013-03-01", "--to", "2013-03-05"], "fewer than 2"),
        (["sma_cross", "AAPL", "--from", "2010-02-01", "--to", "2010-01-01"], "after --to"),
        (["sma_cross", "AAPL", "--from", "2010-02-30"], "is not a date"),
        (["sma_cross", "AAPL", "--engine", "zipline"], "'zipline' is not one of"),
        (["sma_cross", "AAPL", "-p", "period=3"], "no parameter 'period'"),
        (["sma_cross", "AAPL", "-p", "fast=60"], "must be shorter than slow"),
        (["sma_cross", "AAPL", "--slippage", "1.5"], "slippage must be"),
        (["sma_cross", "AAPL", "--trials", "0"], "greater than or equal to 1"),
        (["sma_cross", "AAPL", "--trials-sharpe-std", "0.5"], "needs --trials"),
        (
            ["sma_cross", "AAPL", "--from", "2019-12-01", "--to", "2019-12-31", "--trials", "5"],
            "needs at least 30 returns, but 20",
        ),
    ],
)
def test_bad_input_exits_2_with_a_message(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["backtest", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


HERE = Path(__file__).parents[1] / "backtest"  # the strategies the backtest tests share


@pytest.mark.slow
def test_a_strategy_file_runs_in_the_sandbox(bars) -> None:
    from alphadesk.backtest.sandbox import SandboxUnavailable, find_sandbox, run_in_sandbox

    try:
        find_sandbox()
    except SandboxUnavailable as exc:
        pytest.skip(f"no sandbox: {exc}")
    path = HERE / "sma_cross_strategy.py"
    args = ["backtest", str(path), "AAPL", "--from", "2005-01-01", "--to", "2008-12-31"]
    result = runner.invoke(app, [*args, "-p", "fast=10", "--trades", "2"])
    assert result.exit_code == 0, result.output
    for text in ("sma_cross_strategy(fast=10, slow=50)", "backtrader engine", "buy & hold"):
        assert text in result.output
    assert "strategy code run on Backtrader in the sandbox" in result.output
    # The table's final value is the sandboxed run's (indicators warm up before --from).
    frame = bars("AAPL", "2000-01-01", "2008-12-31")
    config = BacktestConfig(costs=Costs(0.001, slippage=0.0005))
    outcome = run_in_sandbox(
        path.read_text(), frame, config, params={"fast": "10"}, trade_from="2005-01-01"
    )
    assert outcome.result is not None
    assert f"{outcome.result.final_value:,.2f}" in result.output


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("hostile/dunder_import.py", "refused by the static check"),
        ("hostile/syntax_error.py", "line 5: syntax error"),
        ("hostile/busy_loop.py", "killed: the strategy"),
    ],
)
@pytest.mark.slow
def test_a_refused_or_killed_file_exits_2(name: str, message: str) -> None:
    args = ["backtest", str(HERE / name), "MSFT", "--from", "2008-01-01", "--to", "2008-03-31"]
    result = runner.invoke(app, [*args, "--time-limit", "4"])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_no_sandbox_refuses_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    path = HERE / "sma_cross_strategy.py"
    result = runner.invoke(app, ["backtest", str(path), "AAPL", "--to", "2008-12-31"])
    assert result.exit_code == 2, result.output
    assert "sandbox_unavailable" in result.output and "bubblewrap" in result.output
    assert "never run outside the sandbox" in result.output


def test_a_backtest_is_recorded_as_a_run(tmp_path: Path) -> None:
    from alphadesk.config import Settings
    from alphadesk.store.runs import RunStore

    args = ["backtest", "macd", "MSFT", "--from", "2008-01-01", "--to", "2009-12-31"]
    printed = json.loads(runner.invoke(app, [*args, "--json"]).output)
    refused = runner.invoke(app, ["backtest", "turtle", "MSFT"])  # nothing to record
    too_short = runner.invoke(
        app, ["backtest", "sma_cross", "MSFT", "--from", "2013-03-01", "--to", "2013-03-05"]
    )
    assert refused.exit_code == too_short.exit_code == 2
    store = RunStore(Settings(data_dir=tmp_path).store_path)
    failed, done = store.recent(kind="backtest")
    assert (done.id, done.status) == (printed["run_id"], "completed")
    assert done.title == "backtest macd MSFT"
    assert done.result is not None and done.result["metrics"] == printed["metrics"]
    assert done.request["params"] == {"fast": 12, "slow": 26, "signal": 9}
    assert [a.name for a in store.artifacts(done.id)] == [
        "MSFT_macd_drawdown.png", "MSFT_macd_equity.png", "report.md", "result.json"
    ]  # fmt: skip
    assert failed.status == "failed" and "fewer than 2 bars" in (failed.error or "")
    assert f"recorded as run {failed.id}" in too_short.output
    folder = Settings(data_dir=tmp_path).runs_dir / done.id  # only its owner may read it
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in ("report.md", "result.json"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
