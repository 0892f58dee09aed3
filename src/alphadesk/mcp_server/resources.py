"""What a client can read: the recorded runs (``alphadesk://runs/{id}`` with its report,
result and charts), the saved evaluations and the data universe. Every text is redacted
on the way out, whatever was recorded."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mcp import types
from mcp.shared.exceptions import MCPError

from alphadesk.config import Settings
from alphadesk.data.base import MarketData
from alphadesk.store.redact import redact, redact_json
from alphadesk.store.runs import Artifact, RunNotFound, RunRecord, RunStore

__all__ = ["Resources"]

_SCHEME = "alphadesk://"
_RECENT = 20  # runs listed (and their reports offered) by list_resources
_JSON, _MARKDOWN, _PNG = "application/json", "text/markdown", "image/png"

Contents = list[types.TextResourceContents | types.BlobResourceContents]

_TEMPLATES = [
    types.ResourceTemplate(
        name="run", uri_template=_SCHEME + "runs/{run_id}", mime_type=_MARKDOWN,
        description="A recorded run: its Markdown report, its result as JSON and its charts "
        "as PNG, each also at its own address below.",
    ),
    types.ResourceTemplate(
        name="run-report", uri_template=_SCHEME + "runs/{run_id}/report", mime_type=_MARKDOWN,
        description="A recorded run's report.",
    ),
    types.ResourceTemplate(
        name="run-result", uri_template=_SCHEME + "runs/{run_id}/result", mime_type=_JSON,
        description="A recorded run as JSON: status, request, result (or the error).",
    ),
    types.ResourceTemplate(
        name="run-chart", uri_template=_SCHEME + "runs/{run_id}/chart", mime_type=_PNG,
        description="A recorded run's charts (the runs that draw them).",
    ),
    types.ResourceTemplate(
        name="run-chart-file", uri_template=_SCHEME + "runs/{run_id}/charts/{name}",
        mime_type=_PNG, description="One of a recorded run's charts, by its file name.",
    ),
    types.ResourceTemplate(
        name="evaluation", uri_template=_SCHEME + "evals/{name}", mime_type=_JSON,
        description="A saved evaluation's table: the spec and a row per strategy and symbol.",
    ),
    types.ResourceTemplate(
        name="evaluation-chart", uri_template=_SCHEME + "evals/{name}/{chart}", mime_type=_PNG,
        description="A saved evaluation's pooled equity.png or drawdown.png.",
    ),
]  # fmt: skip

_FIXED = [
    types.Resource(
        name="runs", uri=_SCHEME + "runs", mime_type=_JSON,
        description=f"The {_RECENT} most recent runs, newest first: id, kind, title, status.",
    ),
    types.Resource(
        name="evaluations", uri=_SCHEME + "evals", mime_type=_JSON,
        description="The saved evaluations, newest first: name and spec.",
    ),
    types.Resource(
        name="universe", uri=_SCHEME + "data/universe", mime_type=_JSON,
        description="The symbols the data holds: bars (fields, date range), years of SEC "
        "fundamentals and earnings releases (as `alphadesk data list`).",
    ),
]  # fmt: skip


def _not_found(what: str, hint: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, f"{what}; {hint}")


def _text(uri: str, text: str, mime_type: str) -> types.TextResourceContents:
    return types.TextResourceContents(uri=uri, text=redact(text), mime_type=mime_type)


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


def _json(uri: str, value: Any) -> types.TextResourceContents:
    return _text(uri, json.dumps(redact_json(value), indent=2, default=_iso), _JSON)


def _png(uri: str, path: Path) -> types.BlobResourceContents:
    data = base64.b64encode(path.read_bytes()).decode()
    return types.BlobResourceContents(uri=uri, blob=data, mime_type=_PNG)


def _summary(run: RunRecord) -> dict[str, Any]:
    return {"id": run.id, "kind": run.kind, "title": run.title, "status": run.status,
            "created_at": run.created_at, "finished_at": run.finished_at,
            "as_of": run.as_of, "model": run.model, "uri": f"{_SCHEME}runs/{run.id}"}  # fmt: skip


@dataclass(frozen=True)
class Resources:
    """The resources of one server, read from its settings' stores and its market."""

    settings: Settings
    market: MarketData

    @property
    def runs(self) -> RunStore:
        return RunStore(self.settings.store_path)

    @property
    def evals_dir(self) -> Path:
        return self.settings.data_dir / "evals"

    def listed(self) -> list[types.Resource]:
        """The fixed resources, then the recent runs' reports."""
        reports = [
            types.Resource(
                name=f"run {run.id}",
                title=redact(run.title),
                mime_type=_MARKDOWN,
                uri=f"{_SCHEME}runs/{run.id}/report",
                description=f"{run.kind} run, {run.status}",
            )
            for run in self.runs.recent(limit=_RECENT)
        ]
        return [*_FIXED, *reports]

    @staticmethod
    def templates() -> list[types.ResourceTemplate]:
        return _TEMPLATES

    def read(self, uri: str) -> Contents:
        """The contents at ``uri``; an address that names nothing is an MCP error."""
        for pattern, reader in self._routes():
            match = re.fullmatch(pattern, uri)
            if match:
                return reader(uri, *match.groups())
        raise _not_found(
            f"no resource {uri[:120]!r}",
            "list the resources (resources/list) and templates (resources/templates/list)",
        )

    def _routes(self) -> list[tuple[str, Callable[..., Contents]]]:
        name = r"([A-Za-z0-9_.\-]+)"  # never a path: no slash, and never '..' (checked)
        runs = re.escape(_SCHEME + "runs")
        evals = re.escape(_SCHEME + "evals")
        return [
            (runs, self._recent),
            (re.escape(_SCHEME + "data/universe"), self._universe),
            (evals, self._evaluations),
            (f"{runs}/{name}", self._run),
            (f"{runs}/{name}/report", self._report),
            (f"{runs}/{name}/result", self._result),
            (f"{runs}/{name}/chart", self._charts),
            (f"{runs}/{name}/charts/{name}", self._chart),
            (f"{evals}/{name}", self._evaluation),
            (f"{evals}/{name}/(equity\\.png|drawdown\\.png)", self._evaluation_chart),
        ]  # fmt: skip

    # -- runs -------------------------------------------------------------------------------

    def _recent(self, uri: str) -> Contents:
        return [_json(uri, [_summary(run) for run in self.runs.recent(limit=_RECENT)])]

    def _record(self, run_id: str) -> RunRecord:
        try:
            return self.runs.get(run_id)
        except RunNotFound:
            raise _not_found(
                f"no recorded run {run_id!r}", f"{_SCHEME}runs lists the recent ones"
            ) from None

    def _artifacts(self, run_id: str, wanted: Callable[[Artifact], bool]) -> list[Artifact]:
        return [a for a in self.runs.artifacts(run_id) if wanted(a) and a.path.is_file()]

    def _run(self, uri: str, run_id: str) -> Contents:
        base = f"{_SCHEME}runs/{run_id}"
        record = self._record(run_id)
        contents: Contents = []
        if self._artifacts(run_id, lambda a: a.name == "report.md"):
            contents += self._report(f"{base}/report", run_id)
        contents += self._result(f"{base}/result", run_id, record)
        contents += self._charts(f"{base}/chart", run_id, required=False)
        return contents

    def _report(self, uri: str, run_id: str) -> Contents:
        self._record(run_id)
        found = self._artifacts(run_id, lambda a: a.name == "report.md")
        if not found:
            status = self._record(run_id).status
            raise _not_found(f"run {run_id} has no report ({status})",
                             f"read {_SCHEME}runs/{run_id}/result for its status")  # fmt: skip
        return [_text(uri, found[0].path.read_text(encoding="utf-8"), _MARKDOWN)]

    def _result(self, uri: str, run_id: str, record: RunRecord | None = None) -> Contents:
        run = record or self._record(run_id)
        names = [a.name for a in self.runs.artifacts(run_id)]
        body = {**_summary(run), "request": run.request, "result": run.result,
                "error": run.error, "artifacts": names}  # fmt: skip
        return [_json(uri, body)]

    def _charts(self, uri: str, run_id: str, *, required: bool = True) -> Contents:
        self._record(run_id)
        charts = self._artifacts(run_id, lambda a: a.media_type == _PNG)
        if required and not charts:
            raise _not_found(f"run {run_id} recorded no chart",
                             f"read {_SCHEME}runs/{run_id}/report")  # fmt: skip
        base = f"{_SCHEME}runs/{run_id}/charts"
        return [_png(f"{base}/{chart.name}", chart.path) for chart in charts]

    def _chart(self, uri: str, run_id: str, name: str) -> Contents:
        self._record(run_id)
        found = self._artifacts(run_id, lambda a: a.media_type == _PNG and a.name == name)
        if not found:
            raise _not_found(f"run {run_id} has no chart {name!r}",
                             f"read {_SCHEME}runs/{run_id}/result for its artifacts")  # fmt: skip
        return [_png(uri, found[0].path)]

    # -- evaluations and data ---------------------------------------------------------------

    def _evaluations(self, uri: str) -> Contents:
        from alphadesk.pipelines.evaluation.files import saved_evaluations

        return [_json(uri, saved_evaluations(self.evals_dir))]

    def _evaluation_folder(self, name: str) -> Path:
        """The folder of a saved evaluation, by a name the list gave (never a client's path)."""
        from alphadesk.pipelines.evaluation.files import saved_evaluations

        if name not in {entry["name"] for entry in saved_evaluations(self.evals_dir)}:
            raise _not_found(f"no saved evaluation {name!r}", f"{_SCHEME}evals lists them")
        return self.evals_dir / name

    def _evaluation(self, uri: str, name: str) -> Contents:
        table = self._evaluation_folder(name) / "table.json"
        return [_json(uri, json.loads(table.read_text(encoding="utf-8")))]

    def _evaluation_chart(self, uri: str, name: str, chart: str) -> Contents:
        path = self._evaluation_folder(name) / chart
        if not path.is_file():
            raise _not_found(f"evaluation {name!r} has no {chart}", f"read {_SCHEME}evals/{name}")
        return [_png(uri, path)]

    def _universe(self, uri: str) -> Contents:
        return [_json(uri, [c.model_dump(mode="json") for c in self.market.coverage()])]
