"""The public API: the names ``alphadesk`` exports, imported only when read, and the
README's three-line CSP analysis, run as a user would run it."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import alphadesk
from alphadesk.config import Settings
from alphadesk.pipelines.csp.models import CspRequest

ROOT = Path(__file__).resolve().parents[1]

EXPORTED = [
    "AlgoRequest",
    "AlgoResult",
    "ChatRequest",
    "ChatResult",
    "CspRequest",
    "CspResult",
    "DeskRequest",
    "DeskResult",
    "FundRequest",
    "FundResult",
    "PipelineRunner",
    "ScreenHistory",
    "ScreenRequest",
    "Settings",
    "__version__",
    "arun",
    "build_provider",
    "run",
]


def test_the_exported_names_are_pinned_and_each_is_the_object_it_names() -> None:
    from alphadesk.data import build_provider
    from alphadesk.pipelines.desk.models import DeskResult
    from alphadesk.pipelines.fund.models import FundResult
    from alphadesk.pipelines.runner import PipelineRunner

    assert sorted(alphadesk.__all__) == EXPORTED
    for name in EXPORTED:
        assert getattr(alphadesk, name) is not None, name
    assert alphadesk.Settings is Settings
    assert alphadesk.CspRequest is CspRequest
    assert alphadesk.build_provider is build_provider
    assert alphadesk.PipelineRunner is PipelineRunner
    assert alphadesk.DeskResult is DeskResult
    assert alphadesk.FundResult is FundResult
    assert set(EXPORTED) <= set(dir(alphadesk))


def test_a_name_not_exported_is_an_attribute_error_listing_what_is() -> None:
    with pytest.raises(AttributeError, match="exports Settings, build_provider"):
        _ = alphadesk.Setings
    from alphadesk import cli  # a subpackage still imports as one

    assert cli.__name__ == "alphadesk.cli"


def test_importing_the_package_imports_none_of_the_pipelines() -> None:
    code = (
        "import sys, alphadesk; print(sorted(m for m in sys.modules if m.startswith('alphadesk')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['alphadesk']"


def test_run_refuses_what_is_no_request_and_a_running_loop_with_how_to_fix() -> None:
    with pytest.raises(TypeError, match=r"takes a pipeline's request .*not Settings"):
        alphadesk.run(Settings())

    async def inside() -> None:
        request = CspRequest(symbol="NVDA", as_of="2024-11-29T18:00:00Z")
        with pytest.raises(RuntimeError, match=r"await alphadesk\.arun"):
            alphadesk.run(request)

    asyncio.run(inside())


def _readme_example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", readme, re.M | re.S)
    found = [b for b in blocks if "from alphadesk import" in b]
    assert len(found) == 1, "the README shows one Python example of the public API"
    return found[0]


@pytest.mark.slow  # a subprocess running a whole CSP analysis on the bundled data
def test_the_readmes_three_line_example_runs_a_csp_analysis(tmp_path: Path) -> None:
    example = _readme_example()
    assert len(example.strip().splitlines()) == 3
    env = {**os.environ, "ALPHADESK_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, "-c", example], capture_output=True, text=True, env=env, cwd=tmp_path,
        timeout=600,  # about 20 s on a busy 2-core machine: a wide margin
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The same put the CLI's checked example in the README shows.
    assert done.stdout.strip() == "select 130.0"
    runs = list((tmp_path / "data").rglob("*.sqlite*")) + list((tmp_path / "data").rglob("*.db"))
    assert runs, "the run was recorded in the data folder"
