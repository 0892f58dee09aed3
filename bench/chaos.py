"""Reliability under faults, crashes and hostile input, in figures.

    PYTHONPATH=src .venv/bin/python bench/chaos.py [--runs 200] [--rate 0.3] [--kills 20]
        [--writers 4] [--fuzz-examples 50] [--quick]

1. Chaos: the CSP desk (in process, one shared data provider, the ``rules`` model behind
   ``ChaosModel`` and ``RetryingModel``) over ``--runs`` seeded runs: the share ending in a
   typed outcome, the share completing with the undisturbed decision, and the extra model
   calls the failures cost (paid calls beyond an undisturbed run, plus transient retries).
2. Crashes: real ``alphadesk csp NVDA --as-of 2024-11-29`` processes SIGKILLed at random
   points, then resumed: kills survived, steps started again, paid calls repeated.
3. Concurrent writers: processes appending runs, events and cache entries to one file at
   once: records lost, integrity check.
4. Fuzzing: every registered tool over its argument schema: cases tried, crashes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support: the harnesses

from hypothesis import HealthCheck, given, settings
from tests.reliability.test_tool_fuzz import TOOLS, Crash, call_once, deps_for
from tests.support.chaos_desk import REQUEST, chaos_runs
from tests.support.fuzzing import arguments_for
from tests.support.writers import start_writers

from alphadesk.agent.tools import Tool
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.pipelines.csp.pipeline import CspPipeline
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.store import RunStore

CSP = ["csp", "NVDA", "--as-of", "2024-11-29", "--json"]


def chaos(folder: Path, runs: int, rate: float) -> None:
    config = Settings(data_dir=folder / "chaos")
    market = build_provider(config)

    async def go() -> None:
        reference = await PipelineRunner(config, CspPipeline(config, market), charts=False).analyze(
            REQUEST
        )
        assert reference is not None
        baseline = sum(a.requests for a in reference.agents)
        started = time.perf_counter()
        done = await chaos_runs(
            config, market, runs=runs, failure_rate=rate, seed=15, reference=reference
        )
        seconds = time.perf_counter() - started
        typed = sum(r.decision is not None for r in done)
        complete = sum(r.same_as_reference for r in done)
        calls = sum(r.paid_calls for r in done)
        retries = sum(r.retries for r in done)
        injected = sum(r.injected for r in done)
        attempts = calls + retries
        print(f"chaos: {runs} runs of the CSP desk in {seconds:.1f} s, failure rate {rate:.0%}")
        print(
            f"  failures injected     {injected} of {attempts} model calls "
            f"({injected / max(attempts, 1):.1%})"
        )
        print(f"  typed outcome         {typed / runs:.1%}")
        print(f"  completed (same decision as undisturbed) {complete / runs:.1%}")
        print(f"  within usage limits   {sum(r.within_limits for r in done) / runs:.1%}")
        print(
            f"  extra model calls     {calls - baseline * runs} answered + {retries} retried "
            f"= {(calls - baseline * runs + retries) / runs:.2f} per run "
            f"(undisturbed: {baseline} per run)"
        )
        failures = Counter((r.error or "")[:90] for r in done if r.decision == "failed")
        for reason, count in failures.most_common(5):
            print(f"    failed x{count}: {reason}")

    asyncio.run(go())


def _cli(data: Path, *extra: str) -> subprocess.Popen[str]:
    env = {"ALPHADESK_DATA_DIR": str(data), "PATH": "/usr/bin:/bin"}
    env |= {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}
    return subprocess.Popen(
        [sys.executable, "-m", "alphadesk", *CSP, *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def crashes(folder: Path, kills: int) -> None:
    data = folder / "crashes"
    started = time.monotonic()
    out, _ = _cli(data).communicate(timeout=300)
    typical = time.monotonic() - started
    (expected,) = json.loads(out)
    store = RunStore(data / "alphadesk.sqlite")
    baseline = sum(not e["cached"] for e in store.ledger(expected["run_id"]))
    rng = random.Random(16)
    landed, resumed, restarted, redone, repeated, same = 0, 0, 0, 0, 0, 0
    while landed < kills:
        known = {r.id for r in store.recent(limit=10_000)}
        run_id = None
        for _ in range(4):
            process = _cli(data, *(["--resume", run_id] if run_id else []))
            time.sleep(rng.uniform(0.3, typical))
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                landed += 1
            process.communicate(timeout=120)
            new = [r for r in store.recent(limit=10_000) if r.id not in known]
            run_id = new[0].id if new else None
            if new and new[0].status != "interrupted":
                break
        if run_id is None or store.get(run_id).status == "interrupted":
            out, _ = _cli(data, *(["--resume", run_id] if run_id else [])).communicate(timeout=300)
            run_id = json.loads(out)[0]["run_id"]
        resumed += 1
        run = store.get(run_id)
        events = store.events(run_id)
        starts = Counter(e["agent"] for e in events if e["kind"] == "step_started")
        ends = Counter(e["agent"] for e in events if e["kind"] == "step_finished")
        restarted += sum(n - 1 for n in starts.values())
        redone += sum(n - 1 for n in ends.values())
        repeated += sum(not e["cached"] for e in store.ledger(run_id)) - baseline
        decided = {k: v for k, v in (run.result or {}).items() if k not in ("run_id", "agents")}
        same += decided == {k: v for k, v in expected.items() if k not in ("run_id", "agents")}
    print(
        f"crashes: {landed} SIGKILLs at random points in [0.3, {typical:.1f}] s over "
        f"{resumed} runs, each resumed to the end"
    )
    print(f"  runs ending with the uninterrupted result {same}/{resumed}")
    print(
        f"  completed steps redone {redone}; interrupted steps started again {restarted} "
        "(their answered calls replayed from the run's journal, free)"
    )
    print(f"  paid model calls repeated {repeated}")


def writers(folder: Path, count: int) -> None:
    path, go = folder / "writers" / "alphadesk.sqlite", folder / "writers" / "go"
    path.parent.mkdir(parents=True)
    runs, events, entries = 50, 12, 100
    procs = start_writers(path, go, count, runs, events, entries)
    time.sleep(1.5)
    started = time.perf_counter()
    go.touch()
    errors = [p.communicate(timeout=600)[1] for p in procs]
    seconds = time.perf_counter() - started
    with sqlite3.connect(path) as db:
        found_runs = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        found_events = db.execute("SELECT COUNT(*) FROM run_events").fetchone()[0]
        found_entries = db.execute("SELECT COUNT(*) FROM model_cache").fetchone()[0]
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    expected = count * (runs + runs * events + entries)
    lost = expected - (found_runs + found_events + found_entries)
    locked = sum("locked" in e.lower() for e in errors)
    print(f"concurrent writers: {count} processes, {expected} records in {seconds:.1f} s")
    print(f"  records lost {lost}; integrity_check {integrity}; 'database is locked' seen {locked}")


def fuzz(folder: Path, examples: int) -> None:
    deps = deps_for(folder)
    endings: Counter[str] = Counter()
    crashes_found: list[str] = []
    for entry in TOOLS:
        _fuzz_tool(entry.tool, examples, deps, endings, crashes_found)
    print(f"fuzzing: {len(TOOLS)} tools, {sum(endings.values())} cases: {dict(endings)}")
    print(f"  crashes {len(crashes_found)}")
    for line in crashes_found[:5]:
        print(f"    {line}")


def _fuzz_tool(
    tool: Tool, examples: int, deps: object, endings: Counter[str], found: list[str]
) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(raw=arguments_for(tool.spec.parameters))
    def one(raw: str) -> None:
        try:
            endings[asyncio.run(call_once(tool, raw, deps))] += 1
        except Crash as exc:
            endings["crash"] += 1
            found.append(str(exc)[:200])

    one()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rate", type=float, default=0.3)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--fuzz-examples", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    args = parser.parse_args()
    if args.quick:  # explicit options still win
        parser.set_defaults(runs=4, kills=1, writers=2, fuzz_examples=2)
        args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        chaos(folder, args.runs, args.rate)
        crashes(folder, args.kills)
        writers(folder, args.writers)
        fuzz(folder, args.fuzz_examples)


if __name__ == "__main__":
    main()
