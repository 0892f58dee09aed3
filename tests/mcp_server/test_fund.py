"""The fund as an MCP tool over stdio: the same decision as ``alphadesk fund --json``, its
output within its schema, each desk and the fund recorded; bad input a tool error saying
what to fix, with nothing recorded."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
from mcp import types

from alphadesk.config import Settings
from alphadesk.pipelines.fund.models import FundResult
from alphadesk.store.runs import RunStore
from tests.mcp_server.client import cli_json, mcp_session

pytestmark = pytest.mark.slow

ARGUMENTS = {"symbols": ["aapl", "JPM", "PG"], "as_of": "2025-05-15"}


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_fund_decides_as_the_cli_does_and_records_its_runs(data_dir: Path) -> None:
    async with mcp_session(data_dir) as session:
        schema = next(t.output_schema for t in (await session.list_tools()).tools
                      if t.name == "fund")  # fmt: skip
        result = await session.call_tool("fund", ARGUMENTS)
        assert not result.is_error, _text(result)
    fund = result.structured_content
    assert fund is not None and schema is not None
    jsonschema.validate(fund, schema)
    assert f"alphadesk://runs/{fund['run_id']}" in _text(result)
    expected = cli_json(data_dir, "fund", "AAPL", "JPM", "PG", "--as-of", "2025-05-15")
    served, here = FundResult.model_validate(fund), FundResult.model_validate(expected)
    assert served.decided() == here.decided()
    store = RunStore(Settings(data_dir=data_dir).store_path)
    assert store.get(fund["run_id"]).kind == "fund"
    assert {store.get(d["run_id"]).kind for d in fund["desks"]} == {"desk"}


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"symbols": ["ZZZZQ"], "as_of": "2025-05-15"}, "ZZZZQ: no provider had daily bars"),
        ({"universe": "ftse", "as_of": "2025-05-15"}, "unknown index 'ftse'"),
        ({"as_of": "2025-05-15"}, "no symbol to decide on"),
        ({"symbols": ["AAPL"], "account": "nobody", "as_of": "2025-05-15"}, "no paper account"),
    ],
)
async def test_bad_input_is_a_tool_error_and_records_nothing(
    data_dir: Path, arguments: dict[str, object], said: str
) -> None:
    async with mcp_session(data_dir) as session:
        result = await session.call_tool("fund", arguments)
    assert result.is_error and said in _text(result), _text(result)
    assert RunStore(Settings(data_dir=data_dir).store_path).recent() == []
