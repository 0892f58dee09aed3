"""The decisions of an evaluation as they are made: ``decisions.jsonl`` in its folder.

The first line says what was asked (the spec's deciding fields and, for the disguised half
of an anonymized evaluation, the disguise it was asked in); every later line is one
decision, appended and flushed as soon as it is made, so an evaluation stopped in any way
(Ctrl-C, a killed process, a closed laptop) keeps every decision it finished. Flushed, not
fsynced: what reached the operating system survives the process, and only a power cut can
drop the last few lines (they are decided again). Running the same evaluation again
continues from these lines; a half-written last line is dropped and decided again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pydantic import ValidationError

from .models import DecisionRecord, EvalSpec, EvaluationError

if TYPE_CHECKING:
    from alphadesk.data.disguise import Disguise

__all__ = ["JOURNAL", "DecisionJournal"]

JOURNAL = "decisions.jsonl"

Key = tuple[str, datetime]


class DecisionJournal:
    """Append-only record of one evaluation's decisions; ``recorded`` are those found when
    it was opened (the last line for a symbol and date wins)."""

    def __init__(self, path: Path, recorded: dict[Key, DecisionRecord]) -> None:
        self.path, self.recorded = path, recorded
        self._file: IO[str] | None = None

    @classmethod
    def open(
        cls,
        folder: Path,
        spec: EvalSpec,
        *,
        fresh: bool = False,
        disguise: Disguise | None = None,
        walk: Mapping[str, object] | None = None,
    ) -> DecisionJournal:
        """The folder's journal for ``spec`` (asked in ``disguise``, by a ``walk`` that
        decides otherwise than one desk per decision, e.g. a book's depth and memory):
        continued if it holds one asked the same, started (with its header) if none, or,
        with ``fresh``, started over.

        Raises:
            EvaluationError: The folder holds the decisions of another spec or disguise.
        """
        path, asked = folder / JOURNAL, _asked(spec, disguise) | dict(walk or {})
        if fresh or not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"spec": asked}) + "\n", encoding="utf-8")
            return cls(path, {})
        lines = _complete_lines(path)
        header = _header(path, lines[0] if lines else "")
        if header != asked:
            raise EvaluationError(_mismatch(path, header, asked))
        recorded: dict[Key, DecisionRecord] = {}
        for number, line in enumerate(lines[1:], start=2):
            try:
                record = DecisionRecord.model_validate_json(line)
            except ValidationError as exc:
                raise EvaluationError(
                    f"{path}, line {number}, is not a decision ({exc.errors()[0]['msg']}); "
                    "--fresh decides everything again"
                ) from None
            recorded[(record.symbol, record.as_of)] = record
        return cls(path, recorded)

    def append(self, records: Iterable[DecisionRecord]) -> None:
        """Record ``records`` now: one write and one flush for the lot."""
        if self._file is None:
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write("".join(r.model_dump_json() + "\n" for r in records))
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _asked(spec: EvalSpec, disguise: Disguise | None) -> dict[str, Any]:
    """What decides a journal's decisions: the spec's deciding fields and the disguise
    they were asked in (a seed alone does not say: see :meth:`Disguise.fingerprint`)."""
    asked = spec.deciding()
    return asked if disguise is None else asked | {"disguise": disguise.fingerprint()}


def _complete_lines(path: Path) -> list[str]:
    """The journal's whole lines; a last line cut short by a kill is cut off the file, so
    the next append starts on a line of its own."""
    data = path.read_bytes()
    whole = data[: data.rfind(b"\n") + 1]
    if len(whole) != len(data):
        with path.open("r+b") as file:
            file.truncate(len(whole))
    lines = whole.decode("utf-8").splitlines()
    good = []
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            break  # nothing after a broken line can be trusted to be in order
        good.append(line)
    return good


def _header(path: Path, line: str) -> dict[str, Any]:
    try:
        header = json.loads(line)["spec"]
    except (ValueError, KeyError, TypeError):
        raise EvaluationError(
            f"{path} is not an evaluation's decisions file; remove it, or pass another --out"
        ) from None
    if not isinstance(header, dict):
        raise EvaluationError(f"{path} has no spec on its first line; remove it")
    return header


def _mismatch(path: Path, recorded: dict[str, Any], asked: dict[str, Any]) -> str:
    differ = sorted(k for k in recorded.keys() | asked.keys() if recorded.get(k) != asked.get(k))
    said = "; ".join(
        f"{k}: {_short(recorded.get(k))} there, {_short(asked.get(k))} asked" for k in differ
    )
    if "disguise" in differ:
        said += "; what a seed draws depends on the tickers the data holds"
    return (
        f"{path.parent} holds the decisions of another evaluation ({said}); "
        "pass another --out, ask for the same evaluation to continue it, "
        "or --fresh to discard its decisions"
    )


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
