"""Run untrusted strategy code (a model's or a user's) in a sandbox, or refuse to.

Every strategy is checked first (:func:`~.checks.check_strategy_code`), then run by
:mod:`.sandbox_runner` in a separate process under bubblewrap:

* **Namespaces**: its own network (no interface but loopback: no connection leaves),
  PID, IPC and UTS namespaces, a new session, killed with its parent.
* **Files**: a fresh root holding only read-only binds of the system libraries (``/usr``),
  the Python installation and our package, and the job (code and bars). No ``/etc``,
  no home, no repository; the only writable place is a small tmpfs at ``/tmp``.
* **Privileges**: no capabilities; started as root it switches to a user of its own
  before any strategy code runs (root ignores the process limit).
* **Limits**: CPU seconds, address space, processes (fork bombs), file size and open
  files as resource limits; a wall-clock deadline that kills the whole process tree;
  a cap on its output.

No bar reaches the sandbox before its time, and nothing it says is taken as a figure.
The job holds no bars: the parent streams them in over the process's standard input, one
message at a time (the warm-up bars before the first trading day together: they are its
past), and sends the next only once the strategy has answered with the orders it placed
(:mod:`.stream`). The parent trades those orders on its own broker
(:func:`.broker.trade_orders`) and replays the fills on the real bars
(:func:`.native.result_from_report`): fills, prices, costs, the account and the round
trips are computed outside the sandbox. The channels are descriptors of the sandbox's
process, which its code can reach: it can answer early or lie about its orders, never
place an order for a bar after it has seen a later one. A run that stops before the last
bar is an error.

Outcomes are typed (:class:`SandboxOutcome`): ``completed``, ``rejected`` by the static
check, ``killed`` by a limit (which one), ``crashed`` (the strategy raised; the traceback's
tail is kept) or ``sandbox_unavailable``. A caller may cancel a run from another thread:
its process tree is killed at once and :class:`SandboxCancelled` raised. Without a working
bubblewrap nothing runs: generated code never falls back to running unsandboxed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import resource
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

from . import sandbox_runner
from .checks import CodeCheck, check_strategy_code
from .frame import start_bar, validate_frame
from .models import BacktestConfig, BacktestResult

if TYPE_CHECKING:  # Backtrader loads only when a strategy runs
    from .broker import Traded
    from .stream import Hello, Op, Row

__all__ = [
    "INSTALL_HINT",
    "Limits",
    "Sandbox",
    "SandboxCancelled",
    "SandboxOutcome",
    "SandboxUnavailable",
    "find_sandbox",
    "run_in_sandbox",
]

log = logging.getLogger(__name__)

INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `sudo apt-get install -y bubblewrap`; Fedora: "
    "`sudo dnf install bubblewrap`; Arch: `sudo pacman -S bubblewrap`), or run "
    "`python dev.py setup`, which installs it when it can; unprivileged user namespaces "
    "must be enabled"
)
_INPUT = "/sandbox/in"
_BOOT = (
    "import sys; sys.path[:0] = {paths!r}; "
    "from alphadesk.backtest.sandbox_runner import main; sys.exit(main(sys.argv[1:]))"
)

Status = Literal["completed", "rejected", "killed", "crashed", "sandbox_unavailable"]
Limit = Literal["wall", "cpu", "memory", "processes", "output", "file_size"]


class SandboxUnavailable(RuntimeError):
    """No working sandbox here: strategy code will not run (the message says how to fix)."""


class SandboxCancelled(RuntimeError):
    """The caller cancelled the run: its processes were killed, there is no outcome."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one sandboxed run may use.

    Attributes:
        wall_seconds: Wall-clock deadline; past it the whole process tree is killed.
        cpu_seconds: CPU time of the process (RLIMIT_CPU).
        memory_mb: Address space (RLIMIT_AS); Python, pandas and Backtrader need ~400 MB.
        processes: Processes and threads of the sandbox's user (RLIMIT_NPROC).
        file_mb: Largest file it may write in its scratch space (RLIMIT_FSIZE).
        open_files: Open file descriptors (RLIMIT_NOFILE).
        output_kb: What it may print (stderr); more kills it.
        scratch_mb: Size of its writable tmpfs.
    """

    wall_seconds: float = 120.0
    cpu_seconds: int = 60
    memory_mb: int = 1024
    processes: int = 32
    file_mb: int = 16
    open_files: int = 128
    output_kb: int = 256
    scratch_mb: int = 16

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value <= 0:
                raise ValueError(f"sandbox limit {name} must be positive, got {value}")


@dataclass(frozen=True, slots=True)
class SandboxOutcome:
    """How a sandboxed run ended.

    Attributes:
        status: ``completed``, ``rejected`` (static check), ``killed`` (a limit),
            ``crashed`` (the strategy raised, stopped before the last bar, or gave no
            valid report, or fills the broker could not have made) or
            ``sandbox_unavailable``.
        reason: One line on why (empty when completed).
        result: The backtest, when completed.
        check: The static check's verdict (``None`` when it was skipped).
        limit: Which limit killed it, when killed.
        log: The tail of what the strategy printed (and its traceback).
        seconds: Wall-clock time of the sandboxed process.
    """

    status: Status
    reason: str = ""
    result: BacktestResult | None = None
    check: CodeCheck | None = None
    limit: Limit | None = None
    log: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "completed"


@dataclass(frozen=True, slots=True)
class Sandbox:
    """A working bubblewrap and how to call it here.

    Attributes:
        bwrap: Path of the ``bwrap`` executable.
        as_root: We run as root: no user namespace; the runner drops to its own user.
    """

    bwrap: str
    as_root: bool


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
    if Path("/etc/ld.so.cache").is_file():
        args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    return args


def _code_roots() -> list[Path]:
    """The Python installation and our package: what the runner needs to import.

    Raises:
        SandboxUnavailable: One of them is ``/`` or holds the home folder.
    """
    import alphadesk

    package = Path(alphadesk.__file__).resolve().parent
    roots = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    roots.add(Path(sys.executable).resolve().parent.parent)
    roots.add(package)
    # Libraries installed outside the prefix (the user's site-packages, a PYTHONPATH).
    roots |= {
        Path(p).resolve()
        for p in sys.path
        if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()
    }
    home = Path.home().resolve()
    for root in roots:
        if root == Path("/") or home.is_relative_to(root):
            raise SandboxUnavailable(
                f"Python or alphadesk lives at {root}, which holds {home}: the sandbox would "
                "show the strategy all of it; install alphadesk in a virtual environment "
                "of its own (e.g. ./.venv)"
            )
    ordered = sorted(roots, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for root in ordered:
        if root.is_relative_to("/usr"):
            continue  # already bound with /usr
        if not any(root.is_relative_to(k) for k in kept):
            kept.append(root)
    return kept


def _bind_args(roots: list[Path]) -> list[str]:
    """Read-only binds at the same paths; their parents are created world-readable."""
    args: list[str] = []
    made: set[Path] = set()
    for root in roots:
        for parent in reversed(root.parents):
            if parent == Path("/") or parent in made or parent == Path("/usr"):
                continue
            made.add(parent)
            args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", str(root), str(root)]
    return args


def _namespace_args(sandbox: Sandbox) -> list[str]:
    common = ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if sandbox.as_root:
        # No user namespace: the runner needs CAP_SETUID/SETGID once, to become a user
        # of its own (setuid clears every capability).
        spaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        spaces += ["--unshare-cgroup-try"]
        return [*spaces, *common, "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return ["--unshare-all", *common]


def _base_args(sandbox: Sandbox, scratch_mb: int) -> list[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp",
    }
    args = [sandbox.bwrap, *_namespace_args(sandbox), *_system_binds()]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "1777", "--size", str(scratch_mb << 20), "--tmpfs", "/tmp"]
    args += ["--chdir", "/tmp", "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args


_WORKING: set[tuple[str, bool]] = set()  # sandboxes that worked once (failures are retried)


def _probe(bwrap: str, as_root: bool) -> str | None:
    """``None`` if bubblewrap can build our sandbox here, else why not."""
    if (bwrap, as_root) in _WORKING:
        return None
    sandbox = Sandbox(bwrap, as_root)
    args = [*_base_args(sandbox, 1), *_bind_args(_code_roots()), "--", sys.executable, "-I"]
    args += ["-c", "pass"]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return done.stderr.strip()[-500:] or f"bwrap exited with {done.returncode}"
    _WORKING.add((bwrap, as_root))
    return None


def find_sandbox() -> Sandbox:
    """The sandbox of this machine, checked to work.

    Raises:
        SandboxUnavailable: No ``bwrap`` on the PATH, it cannot create the sandbox (e.g.
            user namespaces disabled), or Python is installed where the sandbox would show
            the home folder; the message says how to fix it.
    """
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable(
            f"the strategy sandbox needs Linux (bubblewrap); this is {sys.platform}: "
            "run strategy code on Linux or in a Linux container"
        )
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable(f"strategy code runs only in a sandbox: {INSTALL_HINT}")
    _code_roots()  # refuses an installation whose folders would expose the home folder
    sandbox = Sandbox(bwrap, os.geteuid() == 0)
    problem = _probe(bwrap, sandbox.as_root)
    if problem is not None:
        raise SandboxUnavailable(
            f"bubblewrap cannot create the sandbox here ({problem}); {INSTALL_HINT}"
        )
    return sandbox


def _write_job(
    folder: Path,
    code: str,
    config: BacktestConfig,
    limits: Limits,
    params: Mapping[str, str],
    start: int,
) -> int:
    uid = 0x40000000 + secrets.randbelow(0x10000000)  # a user no one else is, per run
    job = {
        "config": asdict(config),
        "limits": {k: v for k, v in asdict(limits).items() if isinstance(v, int)},
        "params": dict(params),
        "start": start,
        "uid": uid,
    }
    (folder / "job.json").write_text(json.dumps(job))
    (folder / "strategy.py").write_text(code)
    return uid


def _preexec(limits: Limits) -> None:
    """Limits on bwrap itself, inherited by everything it starts (the runner sets them too)."""
    cpu = limits.cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb << 20,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mb << 20,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


@dataclass(slots=True)
class _Process:
    returncode: int
    stderr: bytes
    limit: Limit | None
    seconds: float
    cancelled: bool = False


# How often a run checks whether its caller cancelled it (the most a cancel waits).
_CANCEL_POLL_S = 0.1
_ANSWERS_CAP = 64 << 20  # all the orders a run may send, in bytes


class _Channel:
    """The sandboxed process under its limits: bars written to its standard input, its
    answers read a line at a time from its standard output, what it prints kept.

    The whole tree is killed at the deadline, when it prints too much or when ``cancel``
    is set. Every process in the sandbox holds its output pipes, so their end of file
    means the whole tree is gone: after a kill they are still read to it (for a few
    seconds at most).
    """

    def __init__(self, args: list[str], limits: Limits, cancel: threading.Event | None) -> None:
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=lambda: _preexec(limits),
        )
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.ins = self.proc.stdin.fileno()
        self.out, self.err = self.proc.stdout.fileno(), self.proc.stderr.fileno()
        os.set_blocking(self.ins, False)
        self.caps = {self.out: _ANSWERS_CAP, self.err: limits.output_kb << 10}
        self.sizes = {self.out: 0, self.err: 0}
        self.printed: list[bytes] = []
        self.inbox = bytearray()
        self.outbox = b""
        self.cancel = cancel
        self.limit: Limit | None = None
        self.cancelled = False
        self.deadline = self.started + limits.wall_seconds
        self.selector = selectors.DefaultSelector()
        for fd in (self.out, self.err):
            self.selector.register(fd, selectors.EVENT_READ)

    def exchange(self, rows: list[Row]) -> list[Op] | None:
        """Send bars; the orders answered (``None`` once the process has ended or was killed).

        Raises:
            StreamError: The answer is not a list of orders.
        """
        from .stream import decode_ops, encode_bars

        self.outbox += encode_bars(rows)
        if self.ins not in self.selector.get_map():
            self.selector.register(self.ins, selectors.EVENT_WRITE)
        line = self.receive()
        return None if line is None else decode_ops(line)

    def receive(self) -> bytes | None:
        """The next line it writes once what was sent is written (``None`` if it ended)."""
        self._pump(lambda: not self.outbox and b"\n" in self.inbox, (self.out,))
        if b"\n" not in self.inbox:
            return None
        line, _, rest = bytes(self.inbox).partition(b"\n")
        self.inbox = bytearray(rest)
        return line

    def kill(self) -> None:
        if self.limit is None and not self.cancelled:
            self.deadline = _killed(self.proc)

    def finish(self) -> _Process:
        """Close its input, read its pipes to their end, wait for it."""
        self.outbox = b""
        if self.ins in self.selector.get_map():
            self.selector.unregister(self.ins)
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # type: ignore[union-attr]
        self._pump(lambda: False, (self.out, self.err))
        try:
            code = self.proc.wait(timeout=max(0.1, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.limit = self.limit or "wall"
            _kill(self.proc)
            code = self.proc.wait()
        self.selector.close()
        self.proc.stdout.close()  # type: ignore[union-attr]
        self.proc.stderr.close()  # type: ignore[union-attr]
        stderr = b"".join(self.printed)[: self.caps[self.err]]
        seconds = time.monotonic() - self.started
        return _Process(code, stderr, self.limit, seconds, self.cancelled)

    def _pump(self, done: Callable[[], bool], streams: tuple[int, ...]) -> None:
        """Move bytes until ``done()`` or every one of ``streams`` has ended."""
        while not done() and any(fd in self.selector.get_map() for fd in streams):
            if self.cancel is not None and self.cancel.is_set() and not self.cancelled:
                self.cancelled, self.deadline = True, _killed(self.proc)
            left = self.deadline - time.monotonic()
            if left <= 0:
                if self.limit is not None or self.cancelled:
                    return  # killed, yet something holds the pipes: give up on them
                self.limit, self.deadline = "wall", _killed(self.proc)
                continue
            for key, _ in self.selector.select(timeout=min(left, _CANCEL_POLL_S)):
                if key.fd == self.ins:
                    self._write()
                else:
                    self._read(key.fd)

    def _write(self) -> None:
        try:
            sent = os.write(self.ins, self.outbox[: 1 << 16])
        except BlockingIOError:
            return
        except OSError:  # it closed its input (ended or was killed)
            sent = len(self.outbox)
        self.outbox = self.outbox[sent:]
        if not self.outbox:
            self.selector.unregister(self.ins)

    def _read(self, fd: int) -> None:
        data = os.read(fd, 65536)
        if not data:
            self.selector.unregister(fd)
            if fd == self.out and self.ins in self.selector.get_map():
                self.selector.unregister(self.ins)  # nothing more will be read
                self.outbox = b""
            return
        self.sizes[fd] += len(data)
        if self.sizes[fd] > self.caps[fd]:
            if self.limit is None:
                self.limit, self.deadline = "output", _killed(self.proc)
            return
        if fd == self.out:
            self.inbox += data
        else:
            self.printed.append(data)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    # bwrap leads the group; its PID namespace and --die-with-parent take the rest down.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _killed(proc: subprocess.Popen[bytes]) -> float:
    """Kill ``proc``'s tree; the instant by which its pipes should have closed."""
    _kill(proc)
    return time.monotonic() + 5


_SIGNAL_LIMITS: dict[int, Limit] = {
    128 + signal.SIGXCPU: "cpu",
    128 + signal.SIGKILL: "cpu",  # the hard CPU limit (nothing else kills inside)
    128 + signal.SIGXFSZ: "file_size",
    sandbox_runner.EXIT_MEMORY: "memory",
    sandbox_runner.EXIT_PROCESSES: "processes",
    sandbox_runner.EXIT_FILE_SIZE: "file_size",
}
_LIMIT_WORDS: dict[Limit, str] = {
    "wall": "ran past the wall-clock limit",
    "cpu": "used up its CPU time",
    "memory": "ran out of memory",
    "processes": "hit the process limit",
    "output": "printed more than the output limit",
    "file_size": "wrote past the file size limit or filled its scratch space",
}


def _tail(text: bytes, lines: int = 20) -> str:
    return "\n".join(text.decode("utf-8", "replace").rstrip().splitlines()[-lines:])


def run_in_sandbox(
    code: str,
    frame: pd.DataFrame,
    config: BacktestConfig | None = None,
    limits: Limits | None = None,
    *,
    params: Mapping[str, str] | None = None,
    trade_from: date | datetime | None = None,
    symbol: str | None = None,
    name: str | None = None,
    notes: list[str] | None = None,
    skip_static_check: bool = False,
    cancel: threading.Event | None = None,
) -> SandboxOutcome:
    """Check ``code`` and backtest its strategy on ``frame`` in the sandbox.

    Args:
        code: Python source defining one ``backtrader.Strategy`` subclass.
        frame: OHLCV bars (tz-aware index), e.g. from
            :func:`~alphadesk.backtest.frame.frame_from_bars`.
        config: Cash, costs, sizing and long/short, as for the built-in strategies.
        limits: What the run may use.
        params: Strategy parameters as text (converted to the defaults' types).
        trade_from: First bar to trade; earlier bars only warm the indicators up.
        symbol: Recorded in the result.
        name: The strategy's name in the result (default: its class name).
        notes: Recorded in the result.
        skip_static_check: Tests only: run code the static check would refuse, to show
            the sandbox itself contains it.
        cancel: Set from another thread to stop the run at once: its process tree is
            killed and :class:`SandboxCancelled` raised.

    Returns:
        The outcome; ``outcome.result`` is the backtest when it completed.

    Raises:
        BacktestDataError: The bars cannot be backtested.
        SandboxCancelled: ``cancel`` was set before the run ended.
    """
    config = config or BacktestConfig()
    limits = limits or Limits()
    frame = validate_frame(frame)
    start = start_bar(frame, trade_from)
    check = None
    if not skip_static_check:
        check = check_strategy_code(code)
        if not check.ok:
            return SandboxOutcome("rejected", check.summary(), check=check)
    try:
        sandbox = find_sandbox()
    except SandboxUnavailable as exc:
        return SandboxOutcome("sandbox_unavailable", str(exc), check=check)
    with tempfile.TemporaryDirectory(prefix="alphadesk-sandbox-") as tmp:
        folder = Path(tmp)
        uid = _write_job(folder, code, config, limits, params or {}, start)
        if sandbox.as_root:
            # Readable by the sandbox's user, and by its root (which holds no capability
            # to override file modes) through the group.
            for path in (folder, *folder.iterdir()):
                os.chown(path, uid, 0)
                path.chmod(0o750 if path.is_dir() else 0o640)
        paths = [str(p) for p in _import_paths()]
        args = [*_base_args(sandbox, limits.scratch_mb), *_bind_args(_code_roots())]
        args += ["--perms", "0755", "--dir", str(Path(_INPUT).parent)]
        args += ["--ro-bind", str(folder), _INPUT, "--", sys.executable, "-I"]
        args += ["-c", _BOOT.format(paths=paths), _INPUT]
        done, hello, traded, broken = _trade(args, limits, cancel, frame, config, start)
    if done.cancelled:
        raise SandboxCancelled(f"cancelled after {done.seconds:.1f} s; its processes were killed")
    labels = {"symbol": symbol, "name": name, "notes": notes}
    return _outcome(done, frame, config, check, start, labels, hello, traded, broken)


def _trade(
    args: list[str],
    limits: Limits,
    cancel: threading.Event | None,
    frame: pd.DataFrame,
    config: BacktestConfig,
    start: int,
) -> tuple[_Process, Hello | None, Traded | None, str]:
    """Start the sandbox, stream it the bars and trade its orders here, bar by bar."""
    from .broker import trade_orders
    from .stream import Hello

    channel = _Channel(args, limits, cancel)
    hello = traded = None
    broken = ""
    try:
        line = channel.receive()
        if line is not None:
            hello = Hello.model_validate_json(line)
            traded = trade_orders(frame, config, channel.exchange, start=start)
    except ValueError as exc:  # its messages (StreamError, ValidationError)
        broken = f"the strategy broke the exchange of bars and orders: {str(exc).splitlines()[0]}"
        channel.kill()
    except Exception as exc:  # Backtrader refused what it sent as an order
        log.warning("the broker could not take a sandboxed strategy's orders", exc_info=True)
        broken = f"the broker could not take the strategy's orders: {exc!r}"
        channel.kill()
    except BaseException:
        channel.kill()
        channel.finish()
        raise
    return channel.finish(), hello, traded, broken


def _import_paths() -> list[Path]:
    """Where the runner imports from: our package's folder first, then the installation's."""
    import alphadesk

    roots = _code_roots()
    first = Path(alphadesk.__file__).resolve().parent.parent
    rest = [
        Path(p).resolve()
        for p in sys.path
        if p and Path(p).is_dir() and any(Path(p).resolve().is_relative_to(r) for r in roots)
    ]
    return [first, *(p for p in rest if p != first)]


def _outcome(
    done: _Process,
    frame: pd.DataFrame,
    config: BacktestConfig,
    check: CodeCheck | None,
    start: int,
    labels: dict[str, Any],
    hello: Hello | None,
    traded: Traded | None,
    broken: str,
) -> SandboxOutcome:
    from .native import report_from_trades, result_from_report

    tail = _tail(done.stderr)
    limit = done.limit or _SIGNAL_LIMITS.get(done.returncode)
    if limit is not None:
        reason = f"the strategy {_LIMIT_WORDS[limit]}"
        return SandboxOutcome("killed", reason, None, check, limit, tail, done.seconds)
    if done.returncode != 0 and not broken:
        last = tail.splitlines()[-1] if tail else f"exit code {done.returncode}"
        reason = f"the strategy crashed: {last}"
        return SandboxOutcome("crashed", reason, None, check, None, tail, done.seconds)
    if broken or hello is None or traded is None:
        reason = broken or "the strategy ended before it was given a bar"
        return SandboxOutcome("crashed", reason, None, check, None, tail, done.seconds)
    try:
        report = report_from_trades(hello, traded)
        result = result_from_report(report, frame, config, start=start, **labels)
    except ValueError as exc:  # it stopped early (or fills that do not fit: never here)
        reason = f"the strategy's run does not fit its bars: {exc}"
        return SandboxOutcome("crashed", reason, None, check, None, tail, done.seconds)
    return SandboxOutcome("completed", "", result, check, None, tail, done.seconds)
