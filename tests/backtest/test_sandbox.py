"""The strategy sandbox: the static check, hostile strategies contained, a benign one exact.

Every hostile strategy in ``hostile/`` is refused by the static check. The runtime ones
then run with the check skipped, to show the sandbox itself contains them: nothing
escapes (a canary file outside the sandbox keeps its content, a listening socket on the
host accepts nothing) and each run ends killed (with the limit) or crashed.
"""

from __future__ import annotations

import importlib.util
import socket
import sys
import threading
import time
from pathlib import Path

import backtrader as bt
import pandas as pd
import pytest

import alphadesk
from alphadesk.backtest import BacktestConfig, Costs, Sizing
from alphadesk.backtest.broker import backtrader_broker
from alphadesk.backtest.checks import check_strategy_code
from alphadesk.backtest.native import result_from_report, run_strategy_class
from alphadesk.backtest.sandbox import (
    Limits,
    SandboxCancelled,
    SandboxUnavailable,
    find_sandbox,
    run_in_sandbox,
)

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
HOSTILE = HERE / "hostile"
REPO = HERE.parents[1]

try:
    find_sandbox()
    _NO_SANDBOX = ""
except SandboxUnavailable as exc:  # the refusal itself is tested below
    _NO_SANDBOX = str(exc)
needs_sandbox = pytest.mark.skipif(bool(_NO_SANDBOX), reason=f"no sandbox: {_NO_SANDBOX}")

QUICK = Limits(wall_seconds=20, cpu_seconds=10, memory_mb=1024, processes=32, output_kb=64)


@pytest.fixture(scope="module")
def frame(bars) -> pd.DataFrame:
    return bars("MSFT", "2008-01-01", "2008-03-31")  # 61 bars: each run stays short


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    path = tmp_path / "canary.txt"
    path.write_text("original")
    return path


def _code(name: str) -> str:
    return (HOSTILE / name).read_text()


def _sandbox_processes(grace: float = 5.0) -> list[str]:
    """Live processes of the users the sandbox runs strategies as (when started as root),
    after up to ``grace`` seconds for the kernel to finish tearing a namespace down."""
    deadline = time.monotonic() + grace
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                status = (entry / "status").read_text()
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")[:120]
            except OSError:
                continue
            uid = int(status.split("Uid:")[1].split()[0])
            state = status.split("State:")[1].split()[0]
            if 0x40000000 <= uid < 0x50000000 and state != "Z":
                found.append(f"{entry.name} {state} {command.decode(errors='replace')}")
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


# ---------------------------------------------------------------- static check


STATIC = {
    "net_local.py": "import of 'socket'",
    "net_external.py": "import of 'socket'",
    "read_files.py": "import of 'os'",
    "write_files.py": "'open' is not allowed",
    "fork_bomb.py": "import of 'os'",
    "dunder_import.py": "'__import__' is not allowed",
    "importlib_import.py": "import of 'importlib'",
    "subclasses_walk.py": "'__bases__' is not allowed",
    "builtins_getattr.py": "'__builtins__' is not allowed",
    "sys_modules.py": "import of 'sys'",
    "pickle_trick.py": "import of 'pickle'",
    "marshal_trick.py": "import of 'marshal'",
    "ctypes_libc.py": "import of 'ctypes'",
    "format_string.py": "mentions '__init__'",
    "eval_exec.py": "'eval' is not allowed",
    "numpy_files.py": "`.read_csv` reads or writes files",
    "two_strategies.py": "exactly one backtrader Strategy subclass (found: One, Two)",
    "top_level_code.py": "module-level while statement",
    "big_file.py": "'open' is not allowed",
    "env_secrets.py": "import of 'os'",
    "forged_report.py": "'getattr' may only be called directly",
    "peek_bars_file.py": "`.read_parquet` reads or writes files",
    "getattr_chain.py": "'getattr' may only be called directly",
}
# Allowed by the static check: only the sandbox's limits (or its streamed bars) stop them.
RUNTIME_ONLY = {"memory_bomb.py", "busy_loop.py", "sleeper.py", "huge_output.py"}
RUNTIME_ONLY |= {"peek_next_bar.py", "peek_stream.py"}


def test_every_hostile_file_is_classified() -> None:
    files = {p.name for p in HOSTILE.glob("*.py")}
    assert files == set(STATIC) | RUNTIME_ONLY | {"syntax_error.py"}


@pytest.mark.parametrize("name", sorted(STATIC))
def test_static_check_refuses(name: str) -> None:
    check = check_strategy_code(_code(name))
    assert not check.ok
    assert STATIC[name] in check.summary(limit=50), check.summary(limit=50)
    assert all(f.line for f in check.findings if f.rule != "structure")


def test_static_check_reports_the_syntax_error_line() -> None:
    check = check_strategy_code(_code("syntax_error.py"))
    (finding,) = check.findings
    assert (finding.rule, finding.line) == ("syntax", 5)
    assert "line 5: syntax error" in check.summary()


@pytest.mark.parametrize(
    ("snippet", "message"),
    [
        ("import os", "import of 'os'"),
        ("from os import system", "import of 'os'"),
        ("import numpy.ctypeslib", "'numpy.ctypeslib' is not allowed"),
        ("from numpy import ctypeslib", "numpy.ctypeslib is not allowed"),
        ("from backtrader import feeds", "backtrader.feeds is not allowed"),
        ("from . import x", "relative imports"),
        ("from math import *", "import *"),
        ("x = [].__class__.__mro__", "'__mro__'"),
        ("x = (lambda: 0).__globals__", "'__globals__'"),
        ("x = type.__subclasses__(object)", "'__subclasses__'"),
        ("x = getattr(object, '__subclasses__')", "getattr() on '__subclasses__'"),
        ("x = getattr(object, 'a' + 'b')", "getattr() needs a literal"),
        ("x = vars()", "'vars' is not allowed"),
        ("x = globals()", "'globals' is not allowed"),
        ("x = __loader__", "'__loader__' is not allowed"),
        ("x = '__builtins__'", "mentions '__builtins__'"),
        ("x = bt.sys.modules", "`.sys` reads or writes files"),
        ("x = bt.utils.sys", "`.sys`"),
        ("x = pd.io.parsers", "`.io`"),
        ("x = (i for i in []).gi_frame.f_globals", "`.gi_frame`"),
        ("x = functools.reduce(getattr, ['o' + 's'], bt)", "'getattr' may only be called"),
        ("x = list(map(getattr, [bt], ['os']))", "'getattr' may only be called"),
        ("grab = getattr", "'getattr' may only be called"),
        ("x = getattr(bt, 'os')", "getattr() on 'os' is not allowed"),
        ("x = getattr(bt, *['os'])", "getattr() needs an object and a literal"),
        ("x = bt.utils.py3.getattr", "`.getattr`"),
        ("x = pd.eval('1 + 1')", "`.eval`"),
    ],
)
def test_static_check_snippets(snippet: str, message: str) -> None:
    imports = "import backtrader as bt\nimport functools\nimport pandas as pd\n"
    code = f"{imports}{snippet}\n\nclass S(bt.Strategy):\n    pass\n"
    check = check_strategy_code(code)
    assert message in check.summary(limit=50)


def test_static_check_passes_a_plain_strategy() -> None:
    code = (HERE / "sma_cross_strategy.py").read_text()
    check = check_strategy_code(code)
    assert check.ok and check.strategy == "SmaCross"
    derived = (
        "from backtrader import Strategy\nimport math\n\n"
        "class Base(Strategy):\n    pass\n\n"
        "class Mine(Base):\n    def next(self):\n        super().__init__()\n"
        "        x = math.sqrt(self.__class__.__name__.count('a'))\n"
    )
    assert check_strategy_code(derived).strategy == "Mine"


def test_a_main_block_is_not_checked_and_never_runs(frame) -> None:
    # Backtrader's quickstart style: the file also runs itself with its own Cerebro.
    code = (
        "import backtrader as bt\n\nclass Quick(bt.Strategy):\n"
        "    params = (('maperiod', 15), ('printlog', False))\n\n"
        "    def __init__(self):\n"
        "        self.sma = bt.indicators.SMA(self.datas[0], period=self.p.maperiod)\n"
        "\n    def next(self):\n"
        "        if not self.position and self.datas[0].close[0] > self.sma[0]:\n"
        "            self.buy()\n"
        "        elif self.position and self.datas[0].close[0] < self.sma[0]:\n"
        "            self.sell()\n\n"
        "if __name__ == '__main__':\n    import os\n    cerebro = bt.Cerebro()\n"
        "    cerebro.adddata(bt.feeds.YahooFinanceCSVData(dataname=os.path.expanduser('~/x')))\n"
        "    cerebro.run()\n"
    )
    assert check_strategy_code(code).ok
    if _NO_SANDBOX:
        pytest.skip(f"no sandbox: {_NO_SANDBOX}")
    outcome = run_in_sandbox(code, frame, limits=QUICK, params={"maperiod": "5"})
    assert outcome.ok, outcome
    assert outcome.result is not None and outcome.result.strategy is not None
    assert outcome.result.strategy["params"] == {"maperiod": 5, "printlog": False}
    assert len(outcome.result.fills) > 2
    unguarded = code.replace("if __name__ == '__main__':", "if True:")
    assert "module-level if statement" in check_strategy_code(unguarded).summary(limit=50)


# ------------------------------------------------------------ refusal, no fallback


def test_no_bubblewrap_is_a_typed_refusal(monkeypatch: pytest.MonkeyPatch, frame) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxUnavailable, match="install bubblewrap"):
        find_sandbox()
    code = (HERE / "sma_cross_strategy.py").read_text()
    outcome = run_in_sandbox(code, frame)
    assert outcome.status == "sandbox_unavailable" and outcome.result is None
    assert "apt-get install -y bubblewrap" in outcome.reason


def test_an_installation_holding_home_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # A virtual environment created in the home folder itself would expose all of it.
    monkeypatch.setattr("sys.prefix", str(Path.home()))
    with pytest.raises(SandboxUnavailable, match="virtual environment of its own"):
        find_sandbox()


def test_refused_code_never_starts(frame) -> None:
    outcome = run_in_sandbox(_code("dunder_import.py"), frame)
    assert outcome.status == "rejected" and outcome.check is not None
    assert "__import__" in outcome.reason and outcome.seconds == 0


# ------------------------------------------------------------------ containment


def _run(name: str, frame: pd.DataFrame, limits: Limits = QUICK, **params: object):
    return run_in_sandbox(
        _code(name),
        frame,
        limits=limits,
        params={k: str(v) for k, v in params.items()},
        skip_static_check=True,
    )


@needs_sandbox
def test_no_connection_reaches_the_host(frame) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        outcome = _run("net_local.py", frame, port=listener.getsockname()[1])
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert outcome.status == "crashed", outcome
    assert "ESCAPED" not in outcome.log
    assert "Network is unreachable" in outcome.log or "Connection refused" in outcome.log


@needs_sandbox
def test_no_connection_leaves(frame) -> None:
    outcome = _run("net_external.py", frame)
    assert outcome.status == "crashed" and "blocked: 1.1.1.1" in outcome.log, outcome
    assert "ESCAPED" not in outcome.log


@needs_sandbox
def test_files_outside_the_view_cannot_be_read(frame, canary: Path) -> None:
    targets = ["/etc/passwd", "/etc/shadow", str(Path.home() / ".ssh"), str(canary)]
    targets += [str(REPO / "pyproject.toml"), str(REPO / ".git"), "/proc/1/root/etc/passwd"]
    outcome = _run("read_files.py", frame, target="|".join(targets))
    assert outcome.status == "crashed" and "blocked: /etc/passwd" in outcome.log, outcome
    assert "ESCAPED" not in outcome.log
    assert outcome.log.count("Error") >= len(targets)


@needs_sandbox
def test_no_secret_from_the_environment(frame, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-canary")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-canary")
    outcome = _run("env_secrets.py", frame)
    assert outcome.status == "crashed" and "blocked: environment is" in outcome.log, outcome
    assert "canary" not in outcome.log and "ESCAPED" not in outcome.log


@needs_sandbox
def test_nothing_outside_scratch_can_be_written(frame, canary: Path) -> None:
    package = Path(alphadesk.__file__).parent
    targets = [str(canary), str(package / "pwned.py"), "/usr/pwned", "/sandbox/in/job.json"]
    outcome = _run("write_files.py", frame, target="|".join(targets))
    assert outcome.status == "crashed" and "blocked:" in outcome.log, outcome
    assert "ESCAPED" not in outcome.log
    assert canary.read_text() == "original"
    assert not (package / "pwned.py").exists()


@needs_sandbox
@pytest.mark.parametrize(
    "name",
    [
        "dunder_import.py",
        "importlib_import.py",
        "subclasses_walk.py",
        "builtins_getattr.py",
        "sys_modules.py",
        "pickle_trick.py",
        "ctypes_libc.py",
        "getattr_chain.py",
    ],
)
def test_indirect_imports_stay_inside(name: str, frame, canary: Path) -> None:
    # They reach os/subprocess/libc inside the sandbox, but the shell they start sees the
    # same empty view: the canary outside is untouched.
    outcome = _run(name, frame, target=canary)
    assert outcome.status == "crashed", outcome
    assert "ESCAPED" not in outcome.log
    assert canary.read_text() == "original"


@needs_sandbox
def test_fork_bomb_hits_the_process_limit(frame) -> None:
    outcome = _run("fork_bomb.py", frame, Limits(wall_seconds=10, processes=16, output_kb=64))
    # The run ends at the first fork the limit refuses the strategy's own process; its
    # children may keep it churning (never past 16 processes) until the wall clock.
    assert outcome.status == "killed" and outcome.limit in ("processes", "wall"), outcome
    if outcome.limit == "processes":
        assert "BlockingIOError: [Errno 11] Resource temporarily unavailable" in outcome.log
    assert _sandbox_processes() == []  # the PID namespace went down with it


@needs_sandbox
def test_memory_bomb_hits_the_memory_limit(frame) -> None:
    outcome = _run("memory_bomb.py", frame, Limits(wall_seconds=20, memory_mb=800))
    assert (outcome.status, outcome.limit) == ("killed", "memory"), outcome
    assert "allocating" in outcome.log


@needs_sandbox
def test_busy_loop_is_killed(frame) -> None:
    outcome = _run("busy_loop.py", frame, Limits(wall_seconds=15, cpu_seconds=4))
    assert outcome.status == "killed" and outcome.limit in ("cpu", "wall"), outcome
    assert "looping" in outcome.log
    assert outcome.seconds < 15 + 30  # killed by its limits; margin: 30 s to reap it when busy


@needs_sandbox
def test_a_cancelled_run_is_killed_at_once(frame) -> None:
    cancel = threading.Event()
    raised: list[BaseException] = []

    def run() -> None:
        try:
            run_in_sandbox(_code("busy_loop.py"), frame, limits=Limits(wall_seconds=120,
                           cpu_seconds=120), cancel=cancel)  # fmt: skip
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(3)  # the strategy loops by now
    assert worker.is_alive()
    cancel.set()
    worker.join(timeout=60)  # margin: half the run's 120 s limits, for a busy machine
    assert not worker.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], SandboxCancelled), raised
    assert _sandbox_processes(grace=1) == []


@needs_sandbox
def test_sleeper_meets_the_wall_clock(frame) -> None:
    # The wall clock counts the interpreter's start-up too (seconds on a busy machine).
    outcome = _run("sleeper.py", frame, Limits(wall_seconds=12, cpu_seconds=60))
    assert (outcome.status, outcome.limit) == ("killed", "wall"), outcome
    assert "sleeping" in outcome.log
    assert 12 <= outcome.seconds < 12 + 30  # not before the limit; margin: 30 s to reap it
    assert _sandbox_processes() == []


@needs_sandbox
def test_huge_output_is_cut(frame) -> None:
    outcome = _run("huge_output.py", frame, Limits(wall_seconds=20, output_kb=32))
    assert (outcome.status, outcome.limit) == ("killed", "output"), outcome
    assert len(outcome.log) <= 32 * 1024


@needs_sandbox
def test_big_file_hits_the_file_size_limit(frame) -> None:
    outcome = _run("big_file.py", frame, Limits(wall_seconds=20, file_mb=2, scratch_mb=16))
    assert (outcome.status, outcome.limit) == ("killed", "file_size"), outcome


@needs_sandbox
def test_a_crash_keeps_the_traceback(frame) -> None:
    code = (
        "import backtrader as bt\n\nclass Boom(bt.Strategy):\n"
        "    def next(self):\n        raise ZeroDivisionError('bar ' + str(len(self)))\n"
    )
    outcome = run_in_sandbox(code, frame, limits=QUICK)
    assert outcome.status == "crashed"
    assert "ZeroDivisionError: bar 1" in outcome.reason
    assert 'File "strategy.py", line 5, in next' in outcome.log


@needs_sandbox
def test_a_forged_report_gives_the_truth_or_an_error(frame) -> None:
    # It writes a report of a curve rising 1 % a day to every descriptor it has (the
    # runner's report channel among them) and leaves before the runner reports. Its figures
    # are recomputed outside from its orders (none): a flat account, or an error.
    first = frame.index[20]
    outcome = run_in_sandbox(
        _code("forged_report.py"), frame, limits=QUICK, trade_from=first, skip_static_check=True
    )
    if outcome.ok:
        result = outcome.result
        assert result is not None and result.equity.index[0] == first
        assert set(result.equity) == {100_000.0} and result.fills == []
        assert result.metrics().cumulative_return == 0.0 and result.metrics().sharpe is None
    else:
        assert outcome.status == "crashed", outcome


@needs_sandbox
def test_a_strategy_that_stops_before_the_last_bar_is_an_error(frame) -> None:
    code = (
        "import backtrader as bt\n\nclass Quitter(bt.Strategy):\n"
        "    def next(self):\n        if len(self) == 10:\n            self.env.runstop()\n"
    )
    outcome = run_in_sandbox(code, frame, limits=QUICK)
    assert outcome.status == "crashed", outcome
    assert f"stopped after 10 of {len(frame)} bars" in outcome.reason


# ------------------------------------------------------------------ no look-ahead


def _preloaded_value(name: str, frame: pd.DataFrame, **params: object) -> float:
    """The final value of a hostile file run the way Backtrader runs by default (and the
    sandbox did before bars were streamed): every bar preloaded, so the future is there."""
    spec = importlib.util.spec_from_file_location(f"hostile_{name[:-3]}", HOSTILE / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # backtrader looks its strategies' modules up
    spec.loader.exec_module(module)
    (cls,) = [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == spec.name]
    feed = frame[["open", "high", "low", "close", "volume"]].copy()
    feed.index = feed.index.tz_convert("UTC").tz_localize(None)
    cerebro = bt.Cerebro(stdstats=False)
    cerebro.adddata(bt.feeds.PandasData(dataname=feed, openinterest=None))
    cerebro.broker = backtrader_broker(BacktestConfig())
    cerebro.addsizer(bt.sizers.PercentSizerInt, percents=95)
    cerebro.addstrategy(cls, **params)
    return float(cerebro.run()[0].broker.getvalue())


@pytest.fixture(scope="module")
def year(bars) -> pd.DataFrame:
    return bars("AAPL", "2010-01-01", "2010-12-31")


@needs_sandbox
def test_reading_the_next_bar_is_an_error(year: pd.DataFrame) -> None:
    # Preloaded, it reads tomorrow's close at every bar but the last (which it catches).
    assert _preloaded_value("peek_next_bar.py", year, guarded=1) > 200_000
    outcome = run_in_sandbox(_code("peek_next_bar.py"), year, limits=QUICK)
    assert outcome.status == "crashed", outcome
    assert "IndexError" in outcome.reason and "strategy.py" in outcome.log


@needs_sandbox
@pytest.mark.parametrize("trade_from", [None, "2010-03-01"], ids=["no_warm_up", "warm_up"])
def test_a_peek_that_catches_the_error_gains_nothing(year: pd.DataFrame, trade_from) -> None:
    # It never finds a later bar, so it never trades: the figures of a blind strategy.
    assert _preloaded_value("peek_next_bar.py", year, guarded=1) > 200_000
    outcome = run_in_sandbox(
        _code("peek_next_bar.py"), year, limits=QUICK, params={"guarded": "1"},
        trade_from=None if trade_from is None else pd.Timestamp(trade_from),
    )  # fmt: skip
    assert outcome.ok and outcome.result is not None, outcome
    assert outcome.result.fills == [] and set(outcome.result.equity) == {100_000.0}


@needs_sandbox
def test_no_data_frame_or_bars_file_reaches_the_strategy(year: pd.DataFrame) -> None:
    assert _preloaded_value("peek_bars_file.py", year) > 200_000
    outcome = _run("peek_bars_file.py", year)
    assert outcome.ok and outcome.result is not None, outcome
    assert "blocked: FileNotFoundError" in outcome.log
    assert outcome.result.fills == [] and set(outcome.result.equity) == {100_000.0}


class _Momentum(bt.Strategy):
    """Holds 100 shares after a close above the one before, none after one below."""

    def next(self) -> None:
        if len(self) < 2:
            return
        if self.data.close[0] > self.data.close[-1] and not self.position:
            self.buy(size=100)
        elif self.data.close[0] < self.data.close[-1] and self.position:
            self.close()


@needs_sandbox
def test_answering_out_of_turn_gains_nothing(year: pd.DataFrame) -> None:
    # It answers for today itself to pull tomorrow's bar: its orders count from then,
    # so it trades exactly as a strategy comparing today's close with yesterday's.
    outcome = run_in_sandbox(_code("peek_stream.py"), year, limits=QUICK)
    assert outcome.ok and outcome.result is not None, outcome
    config = BacktestConfig()
    blind = result_from_report(run_strategy_class(_Momentum, year, config), year, config)
    assert len(outcome.result.fills) == len(blind.fills) > 50
    assert outcome.result.equity.tolist() == blind.equity.tolist()


# ------------------------------------------------------------------ benign runs


class _Reference(bt.Strategy):
    """The benign file's crossover, sized the same way, run directly (no sandbox)."""

    params = (("fast", 20), ("slow", 50))

    def __init__(self) -> None:
        fast = bt.indicators.SMA(self.data.close, period=self.p.fast)
        slow = bt.indicators.SMA(self.data.close, period=self.p.slow)
        self.cross = bt.indicators.CrossOver(fast, slow)

    def next(self) -> None:
        if self.cross[0] > 0 and not self.position:
            self.buy(size=int(0.95 * self.broker.getvalue() / self.data.close[0]))
        elif self.cross[0] < 0 and self.position:
            self.close()


@needs_sandbox
def test_benign_strategy_matches_backtrader_run_directly(bars) -> None:
    frame = bars("AAPL", "2004-01-01", "2008-12-31")
    config = BacktestConfig(costs=Costs(0.001, slippage=0.0005), sizing=Sizing(fraction=0.95))
    code = (HERE / "sma_cross_strategy.py").read_text()
    outcome = run_in_sandbox(code, frame, config, params={"fast": "10", "slow": "30"})
    assert outcome.ok, outcome
    result = outcome.result
    assert result is not None

    cerebro = bt.Cerebro(stdstats=False)
    feed = frame.copy()
    feed.index = feed.index.tz_convert("UTC").tz_localize(None)
    cerebro.adddata(bt.feeds.PandasData(dataname=feed, openinterest=None))
    cerebro.broker = bt.brokers.BackBroker(
        cash=100_000.0, slip_perc=0.0005, slip_open=True, slip_match=True, slip_out=False
    )
    cerebro.broker.setcommission(commission=0.001)
    cerebro.addstrategy(_Reference, fast=10, slow=30)
    reference = cerebro.run()[0]

    assert result.final_value == pytest.approx(reference.broker.getvalue(), abs=1e-6)
    closed = [t for ts in reference._trades[reference.data].values() for t in ts if t.isclosed]
    assert len(result.closed_trades) == len(closed) > 10
    assert result.strategy == {"name": "SmaCross", "params": {"fast": 10, "slow": 30}}
    assert len(result.equity) == len(frame)


@needs_sandbox
def test_warm_up_bars_trade_nothing(bars) -> None:
    frame = bars("AAPL", "2004-01-01", "2008-12-31")
    code = (HERE / "sma_cross_strategy.py").read_text()
    outcome = run_in_sandbox(code, frame, trade_from=pd.Timestamp("2006-01-01"))
    assert outcome.ok and outcome.result is not None, outcome
    result = outcome.result
    assert result.equity.index[0] == frame.index[frame.index >= "2006-01-01"][0]
    assert all(f.time >= result.equity.index[0] for f in result.fills)
    assert result.equity.iloc[0] == 100_000.0
