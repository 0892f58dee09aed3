"""How long a person waits for the command line: four commands, run whole, several times.

    python bench/cli.py [--runs N] [--top K] [--quick]

Each command runs in a fresh interpreter (as a person runs it), offline on the rules
model and the bundled data, in a temporary data folder; after one warm-up run (the data
caches fill), N timed runs give the minimum and the median wall time, the CPU time with
the command's children (the process that draws a report's chart) and its own CPU alone,
up to its exit handlers. Then one run under ``python -X importtime`` prints what the
command spent importing, in total and its K costliest imports (cumulative, each counted
where it was first imported).

Goals on two idle cores: ``ask hello`` <= 0.8 s, ``--help`` <= 0.3 s, ``desk AAPL
--as-of 2024-06-28`` <= 3 s and ``csp NVDA --as-of 2024-11-29`` <= 2.5 s of wall time.
The load average is printed with the figures: on a shared machine they are slower. The
desk and CSP runs draw their report's chart in a drawing process on the other core, so
their CPU "with children" exceeds their own.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS: list[tuple[str, list[str], float]] = [
    ("ask hello", ["ask", "hello"], 0.8),
    ("--help", ["--help"], 0.3),
    ("desk AAPL --as-of 2024-06-28", ["desk", "AAPL", "--as-of", "2024-06-28"], 3.0),
    ("csp NVDA --as-of 2024-11-29", ["csp", "NVDA", "--as-of", "2024-11-29"], 2.5),
]
# The command's own CPU, apart from its children's (the desk and CSP runs draw their
# chart in a drawing process, on the other core): printed by the last exit handler.
_MAIN = """
import atexit, resource, sys
def _own():
    used = resource.getrusage(resource.RUSAGE_SELF)
    sys.stderr.write(f"own cpu: {used.ru_utime + used.ru_stime}\\n")
atexit.register(_own)
from alphadesk.cli.app import main
main()
"""


def _run(
    args: list[str], env: dict[str, str], importtime: bool = False
) -> tuple[float, float, float, str]:
    """Wall, CPU (with its children's) and own CPU seconds of one run of ``alphadesk
    args``, and its stderr."""
    flags = ["-X", "importtime"] if importtime else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *flags, "-c", _MAIN, *args],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"alphadesk {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    own = next(
        float(line.removeprefix("own cpu: "))
        for line in reversed(done.stderr.splitlines())
        if line.startswith("own cpu: ")
    )
    return wall, cpu, own, done.stderr


def _imports(stderr: str, top: int) -> tuple[float, list[tuple[float, str]]]:
    """Total import seconds and the costliest packages: each library (and alphadesk's
    subpackages) where it was first imported, with everything it imported itself."""
    rows: list[tuple[int, float, str]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|")
        depth = (len(name) - len(name.lstrip())) // 2
        rows.append((depth, int(cumulative) / 1e6, name.strip()))
    total = sum(seconds for depth, seconds, _ in rows if depth == 0)
    packages = [
        (seconds, name)
        for _, seconds, name in rows
        if "." not in name.removeprefix("alphadesk.") and name != "alphadesk"
        and not name.startswith("_")
    ]  # fmt: skip
    return total, sorted(packages, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="Timed runs per command.")
    parser.add_argument("--top", type=int, default=8, help="Costliest imports listed.")
    parser.add_argument(
        "--quick", action="store_true", help="smallest setting: one timed run, three imports"
    )
    options = parser.parse_args()
    if options.quick:
        options.runs, options.top = 1, 3
    home = Path(tempfile.mkdtemp(prefix="alphadesk-bench-"))
    env = os.environ | {"ALPHADESK_DATA_DIR": str(home), "NO_COLOR": "1", "COLUMNS": "100"}
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cores")
    print(f"{'command':32} {'wall min':>9} {'median':>8} {'cpu min':>8} {'own':>6} {'goal':>6}")
    for label, args, goal in COMMANDS:
        _run(args, env)  # warm-up: the data caches fill
        walls, cpus, owns = zip(*(_run(args, env)[:3] for _ in range(options.runs)), strict=True)
        mark = "ok" if min(walls) <= goal else "over"
        print(f"{label:32} {min(walls):8.2f}s {statistics.median(walls):7.2f}s "
              f"{min(cpus):7.2f}s {min(owns):5.2f}s {goal:5.1f}s {mark}")  # fmt: skip
    print(f"\nimport seconds (python -X importtime, one run; load {os.getloadavg()[0]:.2f}), "
          "then the costliest packages, each with what it imported")  # fmt: skip
    for label, args, _ in COMMANDS:
        total, costliest = _imports(_run(args, env, importtime=True)[3], options.top)
        listed = ", ".join(f"{name} {seconds:.2f}" for seconds, name in costliest)
        print(f"{label:32} {total:5.2f}s: {listed}")


if __name__ == "__main__":
    main()
