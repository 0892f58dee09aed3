"""Bounded text for agents' answers.

Every string and list an agent writes has a ceiling in its JSON schema (``maxLength``,
``maxItems``): a server that constrains decoding to the schema then has to end the answer,
and a model that rambles is refused with a clear message instead of filling ``max_tokens``.
The ceilings are generous for a good answer and far below a runaway one.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

__all__ = ["MAX_MISSING", "Code", "Name", "Paragraph", "Phrase", "at_most"]

Name = Annotated[str, Field(max_length=80)]
"""An identifier, a figure's key, a ticker, a tool name."""

Phrase = Annotated[str, Field(max_length=300)]
"""A short line: a headline, a level's kind, what was missing, one action."""

Paragraph = Annotated[str, Field(max_length=2_000)]
"""A summary, a rationale, an argument: a few sentences."""

Code = Annotated[str, Field(max_length=12_000)]
"""A complete strategy module."""

MAX_MISSING = 12
"""How many lines of missing data an answer lists (the rest are counted in the last)."""


def at_most(lines: list[str], items: int = MAX_MISSING, chars: int = 300) -> list[str]:
    """``lines`` within a list ceiling of ``items`` and a :data:`Phrase` ceiling of
    ``chars``: a long line is cut at a word, and lines past the ceiling are counted in the
    last one, never dropped silently."""
    cut = [line if len(line) <= chars else line[: chars - 1].rsplit(" ", 1)[0] + "…"
           for line in lines]  # fmt: skip
    if len(cut) <= items:
        return cut
    return [*cut[: items - 1], f"… and {len(cut) - items + 1} more"]
