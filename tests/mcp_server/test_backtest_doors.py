"""One backtest behind every door: ``alphadesk backtest`` and the MCP ``backtest`` tool of
the same strategy record the same run (request, result, artifacts) with the same figures,
per-share commission included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from alphadesk.config import Settings
from alphadesk.store.runs import RunStore
from tests.mcp_server.client import cli_json, mcp_session

pytestmark = pytest.mark.slow


def _without_run_id(result: Any) -> Any:
    return {k: v for k, v in result.items() if k != "run_id"}


@pytest.mark.parametrize(
    ("cli", "mcp"),
    [
        (["-p", "fast=10"], {"params": {"fast": 10}}),
        (
            ["--commission", "0.02", "--per-share"],
            {"commission": 0.02, "commission_type": "per_share"},
        ),
    ],
    ids=["percent", "per_share"],
)
async def test_cli_and_mcp_record_the_same_run(
    data_dir: Path, cli: list[str], mcp: dict[str, Any]
) -> None:
    days = {"start": "2019-01-02", "end": "2021-12-31"}
    printed = cli_json(data_dir, "backtest", "sma_cross", "NVDA", "--from", days["start"],
                       "--to", days["end"], *cli)  # fmt: skip
    async with mcp_session(data_dir) as session:
        called = await session.call_tool(
            "backtest", {"symbol": "NVDA", "strategy": "sma_cross", **days, **mcp}
        )
    assert not called.is_error, called.content
    outcome = called.structured_content
    assert outcome is not None
    store = RunStore(Settings(data_dir=data_dir).store_path)
    by_cli, by_mcp = store.get(printed["run_id"]), store.get(outcome["run_id"])
    assert by_cli.id != by_mcp.id
    for run in (by_cli, by_mcp):
        assert (run.kind, run.status) == ("backtest", "completed")
    assert by_cli.request == by_mcp.request
    assert (by_cli.title, by_cli.as_of) == (by_mcp.title, by_mcp.as_of)
    assert _without_run_id(by_cli.result) == _without_run_id(by_mcp.result)
    assert [a.name for a in store.artifacts(by_cli.id)] == [
        a.name for a in store.artifacts(by_mcp.id)
    ]
    # The CLI prints the figures it recorded.
    assert printed["metrics"] == outcome["metrics"] == by_cli.result["metrics"]
    if "commission_type" in mcp:
        # Per share: $0.02 on every share traded, whatever its price.
        shares = sum(abs(t["size"]) * (2 if t["exit_time"] else 1) for t in printed["trades"])
        assert shares > 0
        assert printed["metrics"]["commission"] == pytest.approx(0.02 * shares, abs=1e-9)
        assert by_mcp.request["commission_type"] == "per_share"
