"""Inside the sandbox: apply the limits, load the strategy, run it on the bars streamed in.

Run by :mod:`.sandbox` as ``python -I -c <bootstrap> INPUT_DIR`` inside bubblewrap; never
imported by the parent process. ``INPUT_DIR`` (read-only) holds ``job.json`` and
``strategy.py``, no bars: they arrive on standard input, a message at a time, and the
strategy's orders go back on the original standard output after each
(:mod:`.stream`, :func:`~.native.run_streamed`). Anything the strategy prints goes to
standard error, so it cannot mix with the orders by accident. The strategy's code can
still reach both descriptors: the parent sends a bar only after the orders for the
earlier ones are in, trades those orders itself and computes every figure.

Exit codes: 0 ran to the end of the bars; 3 the strategy raised (traceback on stderr); 4
it ran out of memory; 5 it hit the process limit; 6 the job itself was unreadable; 7 it
wrote past the file size limit or filled its scratch space.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import sys
import traceback
import types
from pathlib import Path
from typing import Any

EXIT_CRASHED, EXIT_MEMORY, EXIT_PROCESSES, EXIT_BAD_JOB, EXIT_FILE_SIZE = 3, 4, 5, 6, 7
# Python ignores SIGXFSZ: a write past RLIMIT_FSIZE (or a full scratch) is an OSError.
_LIMIT_ERRNOS = {
    errno.EAGAIN: EXIT_PROCESSES,
    errno.EFBIG: EXIT_FILE_SIZE,
    errno.ENOSPC: EXIT_FILE_SIZE,
}


def _limit(kind: int, soft: int, hard: int | None = None) -> None:
    resource.setrlimit(kind, (soft, soft if hard is None else hard))


def _confine(job: dict[str, Any]) -> None:
    """Resource limits, then (when started as root) an unprivileged user of our own."""
    limits = job["limits"]
    _limit(resource.RLIMIT_CPU, limits["cpu_seconds"], limits["cpu_seconds"] + 1)
    _limit(resource.RLIMIT_AS, limits["memory_mb"] << 20)
    _limit(resource.RLIMIT_FSIZE, limits["file_mb"] << 20)
    _limit(resource.RLIMIT_NOFILE, limits["open_files"])
    _limit(resource.RLIMIT_CORE, 0)
    # Counted per user (per user namespace): set here, inside, so it counts only our own.
    _limit(resource.RLIMIT_NPROC, limits["processes"])
    if os.getuid() == 0:
        # Root's processes are exempt from RLIMIT_NPROC and root owns the host's files:
        # become a user of our own; the kernel clears every capability on the way.
        uid = int(job["uid"])
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        if os.getuid() == 0 or os.geteuid() == 0:  # pragma: no cover - defensive
            raise SystemExit("could not drop root inside the sandbox")


def _strategy_class(code: str) -> type:
    import backtrader as bt

    module = types.ModuleType("strategy")
    module.__file__ = "strategy.py"
    sys.modules["strategy"] = module
    exec(compile(code, "strategy.py", "exec"), module.__dict__)
    found = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, bt.Strategy) and v.__module__ == "strategy"
    ]
    leaves = [c for c in found if not any(o is not c and issubclass(o, c) for o in found)]
    if len(leaves) != 1:
        names = ", ".join(c.__name__ for c in leaves) or "none"
        raise TypeError(f"the code must define exactly one bt.Strategy subclass (found: {names})")
    return leaves[0]


def _config(raw: dict[str, Any]) -> Any:
    from alphadesk.backtest.models import BacktestConfig, Costs, Sizing

    return BacktestConfig(
        cash=raw["cash"],
        costs=Costs(**raw["costs"]),
        sizing=Sizing(**raw["sizing"]),
        long_short=raw["long_short"],
        periods_per_year=raw["periods_per_year"],
    )


def main(argv: list[str]) -> int:
    folder = Path(argv[0])
    try:
        job = json.loads((folder / "job.json").read_text())
        code = (folder / "strategy.py").read_text()
    except (OSError, ValueError, IndexError) as exc:
        print(f"unreadable job: {exc}", file=sys.stderr)
        return EXIT_BAD_JOB
    _confine(job)
    main_pid = os.getpid()

    def end(code: int) -> int:
        if os.getpid() != main_pid:
            os._exit(code)  # a process the strategy forked: leave quietly
        if code == EXIT_PROCESSES:
            os.kill(-1, signal.SIGKILL)  # whatever else it started in our PID namespace
        return code

    answers = os.fdopen(os.dup(1), "wb")
    bars = os.fdopen(os.dup(0), "rb")
    os.dup2(2, 1)  # the strategy's prints go to stderr
    try:
        from alphadesk.backtest.native import run_streamed
        from alphadesk.backtest.stream import decode_bars, encode_ops

        def source(ops: Any) -> Any:
            if ops is not None:
                answers.write(encode_ops(ops))
                answers.flush()
            line = bars.readline()
            return decode_bars(line) if line else None

        def hello(message: Any) -> None:
            answers.write(message.model_dump_json().encode() + b"\n")
            answers.flush()

        config = _config(job["config"])
        cls = _strategy_class(code)
        run_streamed(
            cls, config, source, hello, params=job.get("params") or {}, start=job.get("start", 0)
        )
    except MemoryError:
        print("MemoryError: the strategy ran out of memory", file=sys.stderr)
        return end(EXIT_MEMORY)
    except BaseException as exc:  # a crash of untrusted code, reported with its traceback
        if os.getpid() == main_pid:
            traceback.print_exc(limit=-8)
        number = exc.errno if isinstance(exc, OSError) else None
        return end(_LIMIT_ERRNOS.get(number or 0, EXIT_CRASHED))
    if os.getpid() != main_pid:
        os._exit(EXIT_CRASHED)  # a forked copy of the whole run ends quietly
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
