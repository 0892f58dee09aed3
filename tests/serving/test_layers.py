"""The two servers are siblings over one serving layer: the MCP server imports nothing of
the HTTP API, and the serving layer imports neither front end (read from the source, every
import counted, those inside functions too)."""

from __future__ import annotations

import ast
from pathlib import Path

import alphadesk

PACKAGE = Path(alphadesk.__file__).parent
FRONT_ENDS = ("alphadesk.api", "alphadesk.mcp_server", "alphadesk.cli", "alphadesk.ui")


def imported(package: str, root: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module of ``package`` (a folder of alphadesk) and the modules it imports."""
    found: dict[str, set[str]] = {}
    for path in sorted((root / package).rglob("*.py")):
        module = ".".join(("alphadesk", *path.relative_to(root).with_suffix("").parts))
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                base = node.module
                if node.level:  # relative: from the module's own package up
                    parts = module.split(".")[: -node.level]
                    base = ".".join([*parts, node.module])
                names |= {base} | {f"{base}.{alias.name}" for alias in node.names}
        found[module] = names
    return found


def reaching(found: dict[str, set[str]], packages: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{module} imports {name}"
        for module, names in found.items()
        for name in names
        if any(name == p or name.startswith(p + ".") for p in packages)
    )


def test_no_module_of_the_mcp_server_imports_the_http_api() -> None:
    found = imported("mcp_server")
    assert "alphadesk.mcp_server.server" in found  # the walk sees the package
    assert reaching(found, ("alphadesk.api",)) == []


def test_the_serving_layer_imports_no_front_end() -> None:
    found = imported("serving")
    assert "alphadesk.serving.guard" in found
    assert reaching(found, FRONT_ENDS) == []


def test_both_servers_use_the_serving_layer() -> None:
    for package in ("api", "mcp_server"):
        assert reaching(imported(package), ("alphadesk.serving",)), package


def test_the_walk_finds_an_import_inside_a_function_and_a_relative_one(tmp_path: Path) -> None:
    (tmp_path / "mcp_server").mkdir()
    (tmp_path / "mcp_server" / "x.py").write_text(
        "def f():\n    from alphadesk.api.guard import Guard\n    return Guard\n"
    )
    (tmp_path / "mcp_server" / "y.py").write_text("from ..api import errors\n")
    assert reaching(imported("mcp_server", tmp_path), ("alphadesk.api",)) == [
        "alphadesk.mcp_server.x imports alphadesk.api.guard",
        "alphadesk.mcp_server.x imports alphadesk.api.guard.Guard",
        "alphadesk.mcp_server.y imports alphadesk.api",
        "alphadesk.mcp_server.y imports alphadesk.api.errors",
    ]
