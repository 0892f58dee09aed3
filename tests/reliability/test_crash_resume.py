"""Crashes at any point: real ``alphadesk csp`` processes killed with SIGKILL, then resumed.

A killed run reads as ``interrupted`` (its process is gone) with the command that resumes
it; resuming finishes it with the result an uninterrupted run gives, and no model call that
completed before a kill is paid for again. A crash leaves every event up to the last step
boundary in the store.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from alphadesk.store import RunStore

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX"),
]

ARGS = ["csp", "NVDA", "--as-of", "2024-11-29"]
KILLS = 20
RUNS = 5  # each run is killed KILLS / RUNS times, then resumed to the end
SEED = 16


def _env(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "ALPHADESK_DATA_DIR": str(data_dir), "COLUMNS": "200"}


def _start(data_dir: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "alphadesk", *ARGS, "--json", *extra],
        env=_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _decided(result: dict[str, Any]) -> dict[str, Any]:
    """What a result decided, without its run id and per-agent timings."""
    return {k: v for k, v in result.items() if k not in {"run_id", "agents"}}


def _paid_calls(ledger: list[dict[str, Any]]) -> Counter[str]:
    return Counter(entry["agent"] for entry in ledger if not entry["cached"])


def test_runs_killed_at_random_points_resume_to_the_uninterrupted_result(
    data_dir: Path,
) -> None:
    started = time.monotonic()
    reference = _start(data_dir)
    out, err = reference.communicate(timeout=120)
    typical = time.monotonic() - started
    assert reference.returncode == 0, err
    (expected,) = json.loads(out)
    store = RunStore(data_dir / "alphadesk.sqlite")
    expected_calls = _paid_calls(store.ledger(expected["run_id"]))
    assert sum(expected_calls.values()) > 0

    rng = random.Random(SEED)
    kills = 0
    phases: Counter[str] = Counter()
    runs = 0
    while runs < RUNS or kills < KILLS:
        runs += 1
        known = {run.id for run in store.recent(limit=1000)}
        run_id: str | None = None
        finished = False
        for _ in range(KILLS // RUNS):
            process = _start(data_dir, *(["--resume", run_id] if run_id else []))
            time.sleep(rng.uniform(0.3, typical))
            killed = process.poll() is None
            if killed:
                process.send_signal(signal.SIGKILL)
                kills += 1
            process.communicate(timeout=300)  # a hang guard: a whole run when not killed
            new = [r for r in store.recent(limit=1000) if r.id not in known]
            if not new:
                phases["before the run was recorded"] += 1
                continue
            (run,) = new
            run_id = run.id
            if run.status != "interrupted":  # it reached its decision before the kill
                phases["after the run finished" if killed else "none: it had exited"] += 1
                finished = True
                break
            phases["while the run was recorded"] += 1
            assert run.resume_command == (
                f"alphadesk csp NVDA --as-of 2024-11-29 --resume {run.id}"
            )
            assert run.error is not None and run.resume_command in run.error
        if not finished:
            if run_id is not None:
                listed = subprocess.run(
                    [sys.executable, "-m", "alphadesk", "runs", "list", "-n", "50"],
                    env=_env(data_dir),
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=True,
                )
                assert f"{run_id} interrupted" in listed.stdout
            process = _start(data_dir, *(["--resume", run_id] if run_id else []))
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err
            (done,) = json.loads(out)
            run_id = done["run_id"]
        assert run_id is not None
        final = store.get(run_id)
        assert final.result is not None and final.status == expected["decision"]
        assert _decided(final.result) == _decided(expected)
        # Every model call is in the ledger once: none completed before a kill was redone.
        assert _paid_calls(store.ledger(final.id)) == expected_calls

    assert kills >= KILLS
    print(f"kills: {kills} {dict(phases)}; typical run {typical:.1f} s")


# The child process: runs the CSP desk and kills itself right after its K-th event reached
# the recorder, printing every event first.
_CHILD = textwrap.dedent(
    """
    import asyncio, json, os, signal, sys
    from alphadesk.config import Settings
    from alphadesk.data import build_provider
    from alphadesk.pipelines.csp.models import CspRequest
    from alphadesk.pipelines.csp.pipeline import CspPipeline
    from alphadesk.pipelines.runner import PipelineRunner
    from alphadesk.data.calendar import session_close
    from datetime import date

    kill_at = int(sys.argv[1])
    seen = 0

    def on_event(event):
        global seen
        seen += 1
        body = event.model_dump(mode="json")
        print(json.dumps({"kind": body["kind"], "agent": body["agent"], "at": body["at"]}),
              flush=True)
        if seen == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    settings = Settings()
    pipeline = CspPipeline(settings, build_provider(settings))
    runner = PipelineRunner(settings, pipeline, on_event=on_event, charts=False)
    request = CspRequest(symbol="NVDA", as_of=session_close(date(2024, 11, 29)))
    asyncio.run(runner.analyze(request))
    """
)
_BOUNDARIES = {"step_finished", "model_response"}


def test_a_crash_leaves_every_event_up_to_the_last_step_boundary_in_the_store(
    data_dir: Path,
) -> None:
    """Killed mid-step (the kill points are events inside the agents' steps), the store has
    every event up to the last boundary and every answered call; the resumed run replays
    the interrupted step's answered calls instead of paying for them again."""
    reference = _start(data_dir / "reference")
    out, err = reference.communicate(timeout=120)
    assert reference.returncode == 0, err
    (expected,) = json.loads(out)
    expected_calls = _paid_calls(
        RunStore(data_dir / "reference" / "alphadesk.sqlite").ledger(expected["run_id"])
    )
    rng = random.Random(SEED)
    replayed_steps = 0
    for kill_at in sorted(rng.sample(range(2, 60), 4)):
        folder = data_dir / f"kill-{kill_at}"
        child = subprocess.run(
            [sys.executable, "-c", _CHILD, str(kill_at)],
            env=_env(folder),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert child.returncode == -signal.SIGKILL, child.stderr
        emitted = [json.loads(line) for line in child.stdout.splitlines()]
        assert len(emitted) == kill_at
        last_boundary = max(i for i, e in enumerate(emitted) if e["kind"] in _BOUNDARIES)
        store = RunStore(folder / "alphadesk.sqlite")
        (run,) = store.recent()
        assert run.status == "interrupted"
        stored = [
            {"kind": e["kind"], "agent": e["agent"], "at": e["at"]} for e in store.events(run.id)
        ]
        assert stored == emitted[: last_boundary + 1]
        # And every model call answered before the crash is in the ledger.
        answered = sum(e["kind"] == "model_response" for e in emitted)
        assert len(store.ledger(run.id)) == answered
        unfinished = {e["agent"] for e in emitted if e["kind"] == "step_started"} - {
            e["agent"] for e in emitted if e["kind"] == "step_finished"
        }
        replayed_steps += any(
            e["kind"] == "model_response" and e["agent"] in unfinished for e in emitted
        )

        resumed = _start(folder, "--resume", run.id)
        out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
        (result,) = json.loads(out)
        assert _decided(result) == _decided(expected)
        assert _paid_calls(store.ledger(run.id)) == expected_calls
    assert replayed_steps > 0  # some kill fell after a call inside a step, which was replayed
