"""Named groups of tools that can be combined and filtered."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from alphadesk.agent.tools import Tool
from alphadesk.llm.messages import ToolSpec

__all__ = ["Toolset"]


@dataclass(frozen=True)
class Toolset:
    """An ordered, name-unique collection of tools."""

    name: str
    tools: tuple[Tool, ...] = ()

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for item in self.tools:
            if item.name in seen:
                raise ValueError(f"toolset {self.name!r} has two tools named {item.name!r}")
            seen.add(item.name)

    @classmethod
    def of(cls, name: str, tools: Iterable[Tool]) -> Toolset:
        return cls(name, tuple(tools))

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    def __contains__(self, name: object) -> bool:
        return any(item.name == name for item in self.tools)

    @property
    def names(self) -> list[str]:
        return [item.name for item in self.tools]

    @property
    def specs(self) -> list[ToolSpec]:
        return [item.spec for item in self.tools]

    def get(self, name: str) -> Tool | None:
        return next((item for item in self.tools if item.name == name), None)

    def __add__(self, other: Toolset) -> Toolset:
        return Toolset(f"{self.name}+{other.name}", self.tools + other.tools)

    def only(self, *names: str) -> Toolset:
        """The named tools; an unknown name is an error, not a silent omission."""
        unknown = set(names) - set(self.names)
        if unknown:
            raise KeyError(
                f"toolset {self.name!r} has no tools {sorted(unknown)}; it has {self.names}"
            )
        return self.filter(lambda item: item.name in names)

    def filter(self, keep: Callable[[Tool], bool]) -> Toolset:
        return Toolset(self.name, tuple(item for item in self.tools if keep(item)))
