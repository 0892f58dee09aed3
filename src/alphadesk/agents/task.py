"""Reading a task message back: what the rules policies know of their assignment.

The task templates name the symbol as ``<SYMBOL> as of <DATE>`` and carry structured
context in fenced JSON blocks, which an LLM reads as easily as a policy parses them.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

from alphadesk.llm.rules import Transcript

__all__ = ["task_date", "task_json", "task_symbol"]

_SUBJECT = re.compile(r"(\S+) as of (\d{4}-\d{2}-\d{2})")
_BLOCK = re.compile(r"```json\s*\n(.*?)```", re.DOTALL)


def task_symbol(t: Transcript) -> str:
    match = _SUBJECT.search(t.prompt)
    if match is None:
        raise ValueError("the task names no '<SYMBOL> as of <DATE>'")
    return match.group(1)


def task_date(t: Transcript) -> date:
    """The analysis date the task names."""
    match = _SUBJECT.search(t.prompt)
    if match is None:
        raise ValueError("the task names no '<SYMBOL> as of <DATE>'")
    return date.fromisoformat(match.group(2))


def task_json(t: Transcript, index: int) -> Any:
    """The ``index``-th fenced JSON block of the task (None when it is not JSON)."""
    blocks = _BLOCK.findall(t.prompt)
    if index >= len(blocks):
        raise ValueError(f"the task has {len(blocks)} JSON blocks, not {index + 1}")
    try:
        return json.loads(blocks[index])
    except json.JSONDecodeError:
        return None
