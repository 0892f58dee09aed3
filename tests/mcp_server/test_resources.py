"""What a client reads (recorded runs, saved evaluations, the data universe) and the
prompts it gets, over stdio; anything that names nothing is an MCP error, and no secret
from the server's environment reaches a client."""

from __future__ import annotations

import asyncio
import base64
import json
from datetime import date
from pathlib import Path

import pytest
from mcp import types
from mcp.shared.exceptions import MCPError

from alphadesk.config import Settings
from alphadesk.pipelines.evaluation import EvalSpec, evaluate
from alphadesk.store.runs import RunStore
from tests.mcp_server.client import cli_json, mcp_session

pytestmark = pytest.mark.slow

_PNG = b"\x89PNG\r\n\x1a\n"
_SECRET = "QZQZXWXW7Y"  # as a provider key in the server's environment


def _text(contents: types.ReadResourceResult, mime_type: str) -> list[str]:
    return [
        c.text
        for c in contents.contents
        if isinstance(c, types.TextResourceContents) and c.mime_type == mime_type
    ]


async def test_a_desk_run_is_listed_and_readable_as_report_result_and_chart(
    data_dir: Path,
) -> None:
    async with mcp_session(data_dir) as session:
        verdict = await session.call_tool("run_csp_desk", {"symbol": "NVDA", "as_of": "2025-02-14"})
        assert verdict.structured_content is not None
        run_id = verdict.structured_content["run_id"]
        listed = [str(r.uri) for r in (await session.list_resources()).resources]
        templates = [
            t.uri_template for t in (await session.list_resource_templates()).resource_templates
        ]
        recent = json.loads((await session.read_resource("alphadesk://runs")).contents[0].text)  # type: ignore[union-attr]
        whole = await session.read_resource(f"alphadesk://runs/{run_id}")
        report = await session.read_resource(f"alphadesk://runs/{run_id}/report")
        result = await session.read_resource(f"alphadesk://runs/{run_id}/result")
    assert listed[:3] == ["alphadesk://runs", "alphadesk://evals", "alphadesk://data/universe"]
    assert f"alphadesk://runs/{run_id}/report" in listed
    assert "alphadesk://runs/{run_id}" in templates and "alphadesk://evals/{name}" in templates
    assert recent[0]["id"] == run_id and recent[0]["kind"] == "csp"
    record = RunStore(Settings(data_dir=data_dir).store_path).get(run_id)
    # The report is the file the run saved; the result is the run as recorded.
    saved = (Settings(data_dir=data_dir).runs_dir / run_id / "report.md").read_text()
    assert _text(report, "text/markdown") == [saved] == _text(whole, "text/markdown")
    (body,) = _text(result, "application/json")
    assert json.loads(body)["status"] == record.status == verdict.structured_content["decision"]
    assert json.loads(body)["result"] == record.result
    charts = [c for c in whole.contents if isinstance(c, types.BlobResourceContents)]
    assert charts and all(base64.b64decode(c.blob).startswith(_PNG) for c in charts)
    assert all(c.mime_type == "image/png" for c in charts)


async def test_saved_evaluations_and_the_universe_are_readable(data_dir: Path) -> None:
    settings = Settings(data_dir=data_dir)
    spec = EvalSpec(
        desk="csp", symbols=["AAPL"], start=date(2011, 2, 1), end=date(2011, 3, 31), every=20
    )
    folder = (await asyncio.to_thread(asyncio.run, evaluate(settings, spec))).folder
    async with mcp_session(data_dir) as session:
        listed = await session.read_resource("alphadesk://evals")
        table = await session.read_resource(f"alphadesk://evals/{folder.name}")
        equity = await session.read_resource(f"alphadesk://evals/{folder.name}/equity.png")
        universe = await session.read_resource("alphadesk://data/universe")
    (evaluation,) = json.loads(listed.contents[0].text)  # type: ignore[union-attr]
    assert evaluation["name"] == folder.name and evaluation["spec"]["symbols"] == ["AAPL"]
    on_disk = json.loads((folder / "table.json").read_text())
    assert json.loads(table.contents[0].text) == on_disk  # type: ignore[union-attr]
    blob = equity.contents[0]
    assert isinstance(blob, types.BlobResourceContents)
    assert base64.b64decode(blob.blob) == (folder / "equity.png").read_bytes()
    listed_by_cli = cli_json(data_dir, "data", "list")
    assert json.loads(universe.contents[0].text) == listed_by_cli  # type: ignore[union-attr]


async def test_an_address_that_names_nothing_is_a_clear_error(data_dir: Path) -> None:
    async with mcp_session(data_dir) as session:
        for uri, said in [
            ("alphadesk://runs/20990101-000000-abcdef", "no recorded run '20990101-000000-abcdef'"),
            ("alphadesk://evals/nothing", "no saved evaluation 'nothing'"),
            ("alphadesk://evals/../../etc/passwd", "no resource"),
            ("alphadesk://prices/NVDA", "no resource 'alphadesk://prices/NVDA'"),
        ]:
            with pytest.raises(MCPError, match=said.replace(".", r"\.")):
                await session.read_resource(uri)
        assert (await session.read_resource("alphadesk://runs")).contents


async def test_prompts_are_listed_and_filled_in(data_dir: Path) -> None:
    async with mcp_session(data_dir) as session:
        prompts = {p.name: p for p in (await session.list_prompts()).prompts}
        csp = await session.get_prompt("csp_candidate", {"symbol": "nvda", "as_of": "2025-02-14"})
        buy = await session.get_prompt("should_i_buy", {"symbol": "AAPL"})
        screen = await session.get_prompt("screen_universe", {"symbols": "KO, PEP"})
        verdict = await session.call_tool("run_csp_desk", {"symbol": "NVDA", "as_of": "2025-02-14"})
        assert verdict.structured_content is not None
        run_id = verdict.structured_content["run_id"]
        explained = await session.get_prompt("explain_run", {"run_id": run_id})
        errors = []
        for name, arguments in [("csp_candidate", {}), ("csp_candidate", {"symbol": "NV DA!"}),
                                ("should_i_buy", {"symbol": "NVDA", "as_of": "2025-13-01"}),
                                ("explain_run", {"run_id": "nope"}), ("haiku", {})]:  # fmt: skip
            with pytest.raises(MCPError) as caught:
                await session.get_prompt(name, arguments)
            errors.append(str(caught.value))
    assert set(prompts) == {"csp_candidate", "should_i_buy", "screen_universe", "explain_run"}
    assert [a.name for a in prompts["csp_candidate"].arguments or []] == ["symbol", "as_of"]
    text = csp.messages[0].content.text  # type: ignore[union-attr]
    assert 'run_csp_desk with symbol "NVDA" with as_of "2025-02-14"' in text
    assert 'run_trading_desk with symbol "AAPL"' in buy.messages[0].content.text  # type: ignore[union-attr]
    assert "symbols ['KO', 'PEP']" in screen.messages[0].content.text  # type: ignore[union-attr]
    report = (Settings(data_dir=data_dir).runs_dir / run_id / "report.md").read_text()
    assert explained.messages[0].content.text.endswith(report)  # type: ignore[union-attr]
    assert "needs symbol" in errors[0] and "symbol" in errors[1].lower()
    assert "YYYY-MM-DD" in errors[2] and "no recorded run 'nope'" in errors[3]
    assert "no prompt 'haiku'" in errors[4] and "csp_candidate" in errors[4]


async def test_no_result_resource_or_prompt_carries_a_secret(data_dir: Path) -> None:
    question = f"my broker key is {_SECRET}; how does NVDA look?"
    async with mcp_session(data_dir, BROKER_API_KEY=_SECRET) as session:
        answer = await session.call_tool("ask", {"question": question, "as_of": "2025-02-14"})
        assert answer.structured_content is not None
        run_id = answer.structured_content["run_id"]
        seen = [
            answer.model_dump_json(),
            (await session.read_resource(f"alphadesk://runs/{run_id}")).model_dump_json(),
            (await session.read_resource("alphadesk://runs")).model_dump_json(),
            (await session.list_resources()).model_dump_json(),
            (await session.get_prompt("explain_run", {"run_id": run_id})).model_dump_json(),
        ]
    assert not answer.is_error
    assert "NVDA" in answer.structured_content["question"]
    for shown in seen:
        assert _SECRET not in shown
    assert "[REDACTED]" in seen[0]
