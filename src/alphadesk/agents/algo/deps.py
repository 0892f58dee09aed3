"""What the strategy lab's agents receive besides their tools' data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from alphadesk.tools.deps import ToolDeps

__all__ = ["AlgoDeps"]


@dataclass(frozen=True)
class AlgoDeps(ToolDeps):
    """The symbol and, for the quality gate, each variant's verdict from the numbers.

    Attributes:
        symbol: The symbol under research.
        verdicts: By variant id: ``passed_in_sample``, ``passed_out_of_sample``, the scores
            and ``trials_refusal`` (why the trial figures refuse it, or None), computed from
            the backtests; the gate's decision is checked against them.
        used_ids: Variant ids of earlier iterations: a new variant may not reuse one.
    """

    symbol: str = ""
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)
    used_ids: frozenset[str] = frozenset()
