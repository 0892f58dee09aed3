"""Bounded text for agents' answers.

Every string and list an agent writes has a ceiling in its JSON schema (``maxLength``,
``maxItems``): a server that constrains decoding to the schema then has to end the answer,
and a model that rambles is refused with a clear message instead of filling ``max_tokens``.
The ceilings are generous for a good answer and far below a runaway one.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

__all__ = ["Code", "Name", "Paragraph", "Phrase"]

Name = Annotated[str, Field(max_length=80)]
"""An identifier, a figure's key, a ticker, a tool name."""

Phrase = Annotated[str, Field(max_length=300)]
"""A short line: a headline, a level's kind, what was missing, one action."""

Paragraph = Annotated[str, Field(max_length=2_000)]
"""A summary, a rationale, an argument: a few sentences."""

Code = Annotated[str, Field(max_length=12_000)]
"""A complete strategy module."""
