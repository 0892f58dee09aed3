"""``alphadesk eval --anonymize``: the evaluation beside its disguised twin, and the gap."""

from __future__ import annotations

import json as jsonlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from alphadesk.cli.common import BAD_INPUT, console, err_console, fail, settings_from
from alphadesk.cli.progress import DecisionBar
from alphadesk.cli.tables import Column, FitTable

if TYPE_CHECKING:
    from alphadesk.pipelines.evaluation.anonymize import Anonymized
    from alphadesk.pipelines.evaluation.models import EvalSpec

__all__ = ["run_anonymized"]

_HINT = "see `alphadesk eval --help`"


def run_anonymized(
    ctx: typer.Context,
    spec: EvalSpec,
    out: Path | None,
    *,
    seed: int | None,
    json: bool,
    **how: Any,
) -> None:
    """Run both evaluations and print the side-by-side table (or it as JSON); ``how``:
    where and whether afresh they decide (``cluster``, ``workers``, ``fresh``)."""
    from alphadesk.pipelines.evaluation.anonymize import DEFAULT_SEED

    result = _run(ctx, spec, out, DEFAULT_SEED if seed is None else seed, how)
    if json:
        payload = {"folder": str(result.folder), "spec": spec.model_dump(mode="json")}
        payload |= jsonlib.loads((result.folder / "anonymized.json").read_text(encoding="utf-8"))
        typer.echo(jsonlib.dumps(payload, indent=2, default=str))
        return
    _print(result)


def _run(
    ctx: typer.Context, spec: EvalSpec, out: Path | None, seed: int, how: dict[str, Any]
) -> Anonymized:
    import asyncio

    from alphadesk.data import DataError
    from alphadesk.llm.base import CacheMiss
    from alphadesk.pipelines.evaluation import EvaluationError, LookAheadError
    from alphadesk.pipelines.evaluation.anonymize import evaluate_anonymized

    settings = settings_from(ctx)
    with DecisionBar() as progress:
        try:
            return asyncio.run(
                evaluate_anonymized(
                    settings,
                    spec,
                    seed=seed,
                    out=out,
                    on_start=progress.start,
                    on_decision=progress.record,
                    on_resume=progress.skip,
                    **how,
                )
            )
        except (EvaluationError, DataError) as exc:
            raise fail(str(exc), _HINT, BAD_INPUT) from None
        except LookAheadError as exc:
            raise fail(f"the evaluation is void: {exc}") from None
        except CacheMiss as exc:
            raise fail(
                str(exc), "delete the evaluations' manifest.json to record the answers again"
            ) from None


def _print(result: Anonymized) -> None:
    from alphadesk.pipelines.evaluation.anonymize import GAP_COLUMNS, gap_cells

    spec, disguise = result.spec, result.disguise
    title = (
        f"{spec.desk} ({spec.model}) on {', '.join(spec.symbols)}, {spec.start} to {spec.end}, "
        f"every {spec.every} sessions: original | disguised | gap"
    )
    headers = [header for _key, header in GAP_COLUMNS]
    table = FitTable(headers[0], *(Column(h, right=True) for h in headers[1:]), title=title)
    for i, row in enumerate(result.rows):
        table.add_row(*gap_cells(row), end_section=i + 2 == len(result.rows))
    console.print(table)
    names = ", ".join(f"{s} as {disguise.names[s]} ×{disguise.factors[s]:g}" for s in spec.symbols)
    err_console.print(
        f"[dim]disguise {disguise.seed}: {names}; dates {disguise.years:+d} years. "
        f"{len(result.differing)} decisions differ (anonymized.json lists them); files in "
        f"{result.folder}[/]"
    )
