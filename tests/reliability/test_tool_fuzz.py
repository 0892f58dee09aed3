"""Every registered tool, fuzzed over its argument schema: a result or a typed error, never
a crash and never a hang.

A typed error is what the agent loop turns into something the model can act on:
``ModelRetry`` (and the ValidationError/ValueError of the argument check, which the loop
sends back as a retry) or a ``DataError`` (no data, provider down). Anything else would end
the agent's run as a crashed tool.
"""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from pydantic import ValidationError

from alphadesk.agent import ModelRetry, RunContext
from alphadesk.agent.tools import Tool, render_result
from alphadesk.data.calendar import session_close
from alphadesk.data.errors import DataError
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.portfolio import PaperPortfolio
from alphadesk.tools.assistant.deps import ChatDeps
from alphadesk.tools.catalog import tool_catalog
from tests.support.fuzzing import arguments_for

AS_OF = session_close(date(2024, 11, 29))
EXAMPLES = 25  # per tool in the test suite; bench/chaos.py tries more
TIMEOUT_S = 20.0
TOOLS = list(tool_catalog())
_MARKET = BundledProvider()


class Crash(AssertionError):
    """A tool raised something other than a typed error, or hung."""


async def call_once(tool: Tool, raw: str, deps: Any) -> str:
    """One fuzzed call as the agent loop makes it; returns how it ended."""
    ctx = RunContext(deps=deps, as_of=AS_OF, run_id="fuzz", agent="fuzz", tool_name=tool.name)
    try:
        kwargs = tool.validate(raw)
    except (ValidationError, ValueError):
        return "invalid arguments"
    try:
        async with asyncio.timeout(TIMEOUT_S):
            value = await tool.call(ctx, kwargs)
        render_result(value)
    except ModelRetry:
        return "retry"
    except DataError:
        return "data error"
    except TimeoutError as exc:
        raise Crash(f"{tool.name}({raw[:300]}) hung for {TIMEOUT_S} s") from exc
    except Exception as exc:
        raise Crash(f"{tool.name}({raw[:300]}) crashed: {type(exc).__name__}: {exc}") from exc
    return "result"


def deps_for(folder: Path) -> ChatDeps:
    return ChatDeps(
        market=_MARKET,
        run_dir=folder / "run",
        portfolio=PaperPortfolio(folder / "portfolio.sqlite"),
    )


@pytest.mark.parametrize("entry", TOOLS, ids=[e.name for e in TOOLS])
@pytest.mark.slow
def test_a_fuzzed_tool_returns_a_result_or_a_typed_error(entry: Any, tmp_path: Path) -> None:
    deps = deps_for(tmp_path)
    endings: list[str] = []

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(raw=arguments_for(entry.tool.spec.parameters))
    def fuzz(raw: str) -> None:
        endings.append(asyncio.run(call_once(entry.tool, raw, deps)))

    fuzz()
    assert endings  # the loop ran
    json.dumps(endings)
