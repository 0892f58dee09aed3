"""The paper account sits below the pipelines, the tools and the engine: its modules import
only the data layer, the store and plain helpers, so every door (CLI, API, assistant) can
call it and none of them is needed to run it."""

from __future__ import annotations

import ast
from pathlib import Path

import alphadesk.portfolio

ALLOWED = {"portfolio", "data", "store", "money", "analytics", "config"}


def _ours(path: Path) -> set[str]:
    """The first part below ``alphadesk`` of every module ``path`` imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        found |= {n.split(".")[1] for n in names if n.startswith("alphadesk.")}
    return found


def test_the_portfolio_imports_nothing_above_it() -> None:
    folder = Path(alphadesk.portfolio.__file__).parent
    modules = sorted(folder.glob("*.py"))
    assert len(modules) >= 6  # the package as written: models, book, account, fills, ...
    upward = {p.name: sorted(_ours(p) - ALLOWED) for p in modules if _ours(p) - ALLOWED}
    assert upward == {}
