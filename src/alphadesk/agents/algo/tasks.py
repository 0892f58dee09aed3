"""The strategy lab's tasks: one typed object per task template (see ``agents.task``).

Variants, reports, sheets and analyses travel as the JSON objects the lab's state holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from alphadesk.agents.task import SymbolTask

__all__ = [
    "AlgoTask",
    "FailureTask",
    "GateTask",
    "LeaderTask",
    "StrategistTask",
    "SubagentTask",
    "SynthesizerTask",
    "TrajectoryTask",
]

Json = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class AlgoTask(SymbolTask):
    package = "alphadesk.agents.algo"


@dataclass(frozen=True, kw_only=True)
class SubagentTask(AlgoTask):
    template = "research"
    directive: str


@dataclass(frozen=True, kw_only=True)
class SynthesizerTask(AlgoTask):
    template = "synthesizer"
    domain: str
    reports: list[Json]


@dataclass(frozen=True, kw_only=True)
class LeaderTask(AlgoTask):
    template = "leader"
    goal: str
    sheets: list[Json]
    feedback: Json | None  # why the last attempt fell short, what was tried, past lessons


@dataclass(frozen=True, kw_only=True)
class StrategistTask(AlgoTask):
    template = "strategist"
    iteration: int
    goal: str
    n: int  # how many variants to write
    brief: Json
    last: Json | None  # the last gate decision (None at first)
    tried: dict[str, list[Json]]  # parameter sets already tried, by template
    library: list[Json]


@dataclass(frozen=True, kw_only=True)
class FailureTask(AlgoTask):
    template = "failure"
    iteration: int
    iterations: int
    goal: str
    variants: list[Json]
    history: list[Json]
    trials: Json | None = None  # the figures of this iteration's best, with any refusal


@dataclass(frozen=True, kw_only=True)
class TrajectoryTask(AlgoTask):
    template = "trajectory"
    trajectory: Json  # the trajectory's statistics and its scores


@dataclass(frozen=True, kw_only=True)
class GateTask(AlgoTask):
    template = "gate"
    iteration: int
    iterations: int
    goal: str
    variants: list[Json]
    failure: Json | None
    trajectory: Json | None
    trials: Json | None = None  # the figures of this iteration's best, with any refusal
    refinements: int
