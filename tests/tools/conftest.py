"""Shared fixtures of the tool tests: the bundled real market data and tool dependencies."""

from __future__ import annotations

from pathlib import Path

import pytest

from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.tools.deps import ToolDeps


@pytest.fixture(scope="session")
def bundled() -> BundledProvider:
    """The provider of the real daily bars shipped with the package (no network)."""
    return BundledProvider()


@pytest.fixture
def deps(bundled: BundledProvider, tmp_path: Path) -> ToolDeps:
    """Tool dependencies on bundled data, with a fresh run directory for artifacts."""
    return ToolDeps(market=bundled, run_dir=tmp_path / "run")
