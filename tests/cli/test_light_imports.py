"""What a greeting and ``--help`` import: no analytics, no graph library, no data frames.

A person who types "hello" waits for every module the command imports; the libraries
below cost seconds together and a greeting uses none of them. Each command runs in a
fresh interpreter (the test session has imported everything already) and reports the
modules it loaded; a heavy import that creeps back into these paths fails here, whatever
the machine's speed (figures are in ``bench/cli.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "alphadesk.analytics",
    "langgraph",
    "langchain_core",
    "langsmith",
    "scipy",
    "talib",
    "pandas",
    "polars",
    "litellm",
)
_RUN = """
import atexit, json, sys
atexit.register(lambda: print("MODULES=" + json.dumps(sorted(sys.modules))))
sys.argv = ["alphadesk", *json.loads(sys.argv[1])]
from alphadesk.cli.app import main
main()
"""


def _modules(args: list[str], home: Path) -> tuple[set[str], str]:
    env = os.environ | {"ALPHADESK_DATA_DIR": str(home), "NO_COLOR": "1"}
    done = subprocess.run(  # a generous margin: a busy machine takes seconds to start
        [sys.executable, "-c", _RUN, json.dumps(args)],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    line = next(x for x in done.stdout.splitlines() if x.startswith("MODULES="))
    return set(json.loads(line.removeprefix("MODULES="))), done.stdout


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY))


@pytest.mark.parametrize("args", [["ask", "hello"], ["ask", "thanks!"], ["chat", "--help"]])
def test_the_greeting_path_imports_nothing_heavy(args: list[str], tmp_path: Path) -> None:
    modules, output = _modules(args, tmp_path)
    assert _heavy(modules) == []
    if args[0] == "ask":
        assert "Hello!" in output  # it did answer, through the assistant pipeline
        assert "alphadesk.pipelines.assistant.pipeline" in modules


@pytest.mark.parametrize("args", [["--help"], ["desk", "--help"], ["csp", "--help"]])
def test_help_imports_neither_settings_nor_models(args: list[str], tmp_path: Path) -> None:
    """Help is text: no settings, no store, no event loop (asyncio), and at the root no
    pydantic (Typer itself builds a command's option parsers with it)."""
    modules, output = _modules(args, tmp_path)
    assert "Usage" in output and _heavy(modules) == []
    unused = {"alphadesk.config", "alphadesk.store.runs", "pydantic_settings", "numpy", "asyncio"}
    assert not unused & modules
    if args == ["--help"]:
        assert "pydantic" not in modules


def test_a_market_question_does_import_the_analytics(tmp_path: Path) -> None:
    """The check above can fail: the same probe sees the analytics when they are used."""
    modules, _ = _modules(["ask", "how does KO look technically"], tmp_path)
    assert "alphadesk.analytics" in modules and "langgraph" in modules


def test_the_analytics_load_talib_without_polars() -> None:
    """TA-Lib would import polars (no dependency of ours) to wrap its Series; the
    analytics import it without, and TA-Lib still takes pandas Series."""
    probe = (
        "import sys; import alphadesk.analytics; from alphadesk.analytics._talib import talib; "
        "import pandas as pd; sma = talib.SMA(pd.Series([1.0, 2.0, 3.0]), 2); "
        "print(type(sma).__name__, sma.iloc[-1], 'polars' in sys.modules)"
    )
    done = subprocess.run(  # a generous margin: a busy machine takes seconds to start
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["Series", "2.5", "False"]  # the mean of 2 and 3


@pytest.mark.slow
def test_a_desk_run_draws_its_chart_in_the_drawing_process(tmp_path: Path) -> None:
    """The report's chart is drawn by a drawing process started with the run: the run
    itself imports neither matplotlib nor mplfinance, and the chart is in its folder."""
    modules, _ = _modules(["desk", "AAPL", "--as-of", "2024-06-28"], tmp_path)
    assert "alphadesk.pipelines.desk.pipeline" in modules  # the probe saw the whole run
    assert not {"matplotlib", "mplfinance"} & modules
    (chart,) = (tmp_path / "runs").glob("*/chart_AAPL.png")
    assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
