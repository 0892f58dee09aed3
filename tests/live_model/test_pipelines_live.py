"""csp, desk, ask and algo on a real tiny model, through the CLI as a user runs them.

What is asserted holds whatever the model says and however busy the machine is: the
command ends (no hang, no crash) with a typed outcome, and the run's ledger never counts
more tokens than the server produced (nothing paid twice). Budgets are tight (quick depth,
one round, 256 tokens an answer) so the tier stays within minutes on two cores; how long a
command takes is not asserted (start-up alone takes 5-25 s on two busy cores).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.live_model.conftest import LiveServer

from alphadesk.store import RunStore

pytestmark = pytest.mark.slow

AS_OF = "2024-11-29"


# A hang fails the test instead of blocking the tier. Margin: the slowest command here ends
# in about two minutes on two idle cores; ten leave room for a machine doing other work.
HANG_S = 600


def _alphadesk(
    server: LiveServer, data_dir: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "alphadesk", *args],
        env=server.env(data_dir, **env),
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )


def _typed(done: subprocess.CompletedProcess[str]) -> dict[str, Any] | list[Any]:
    """The command ended on purpose: exit 0 or 1 with its JSON, never a traceback."""
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode in (0, 1), done.stderr[-3000:]
    parsed: dict[str, Any] | list[Any] = json.loads(done.stdout)
    return parsed


def _ledgers(data_dir: Path) -> list[list[dict[str, Any]]]:
    store = RunStore(data_dir / "alphadesk.sqlite")
    return [store.ledger(run.id) for run in store.recent(limit=100)]


def test_ask_hello_answers(smollm2: LiveServer, tmp_path: Path) -> None:
    done = _alphadesk(smollm2, tmp_path, "ask", "hello", "--json")
    _typed(done)


def test_csp_ends_typed_within_its_budgets(smollm2: LiveServer, tmp_path: Path) -> None:
    args = ("csp", "NVDA", "--as-of", AS_OF, "--depth", "quick", "--json")
    done = _alphadesk(smollm2, tmp_path, *args)
    results = _typed(done)
    first = results[0] if isinstance(results, list) else results
    assert first["decision"] in {"select", "reject", "failed"}
    for ledger in _ledgers(tmp_path):
        assert all(entry["cost_usd"] == 0 for entry in ledger)  # a local model costs nothing
        assert not any(entry["cached"] for entry in ledger)  # one run: nothing replayed


def test_desk_one_round_ends_typed(smollm2: LiveServer, tmp_path: Path) -> None:
    args = ("desk", "AAPL", "--as-of", AS_OF, "--analysts", "market", "--rounds", "1")
    done = _alphadesk(smollm2, tmp_path, *args, "--risk-rounds", "1", "--json")
    _typed(done)


def test_algo_one_iteration_ends_typed(smollm2: LiveServer, tmp_path: Path) -> None:
    # Twenty agents on a CPU take longer than the tier can wait: the run's wall-time budget
    # ends it, typed, with what it had.
    args = ("algo", "AAPL", "--goal", "Sharpe above 1", "--variants", "1", "--iterations", "1")
    done = _alphadesk(smollm2, tmp_path, *args, "--json", ALPHADESK_LIMITS__WALL_TIME_S="60")
    _typed(done)


def test_a_stopped_server_fails_the_run_naming_it(smollm2: LiveServer, tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{smollm2.port + 1}/v1"
    done = _alphadesk(
        smollm2,
        tmp_path,
        *("csp", "NVDA", "--as-of", AS_OF, "--depth", "quick"),
        ALPHADESK_MODELS__API_BASE=dead,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    said = " ".join((done.stdout + done.stderr).split())  # the report wraps to the terminal
    assert dead in said and "is the server running" in said


@pytest.mark.parametrize("max_tokens", ["48"])
def test_a_model_that_never_stops_ends_typed(
    gemma3: LiveServer, tmp_path: Path, max_tokens: str
) -> None:
    done = _alphadesk(
        gemma3,
        tmp_path,
        *("csp", "NVDA", "--as-of", AS_OF, "--depth", "quick", "--json"),
        ALPHADESK_MODELS__MAX_TOKENS=max_tokens,
    )
    results = _typed(done)
    first = results[0] if isinstance(results, list) else results
    assert first["decision"] in {"reject", "failed"}  # gibberish never selects a put
