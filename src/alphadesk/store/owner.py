"""Which process owns a running run, and whether that process is still alive.

A run that is ``running`` in the store may belong to a process that was killed (SIGKILL,
a crash, a power cut) before it could write anything else. Readers decide liveness from
the owner recorded at the start: on the same host, the process id must exist and be the
same process (its start time, so a recycled pid does not count); on another host, the run
must have written a heartbeat recently.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

__all__ = ["HEARTBEAT_STALE", "Owner", "current_owner", "owner_alive"]

# A run on another host that has written nothing for this long is taken as gone. Model
# calls of slow providers can take minutes, so this is generous.
HEARTBEAT_STALE = timedelta(minutes=15)


@dataclass(frozen=True)
class Owner:
    """A process: its id, host, and a token of when it started (None where unknown)."""

    pid: int
    host: str
    started: str | None


@cache
def current_owner() -> Owner:
    pid = os.getpid()
    return Owner(pid=pid, host=socket.gethostname(), started=_start_token(pid))


# A forked worker (the API's pool, an evaluation's processes) is another owner: its runs
# must not look alive for as long as the parent lives.
os.register_at_fork(after_in_child=current_owner.cache_clear)


def owner_alive(owner: Owner, heartbeat_at: datetime | None, now: datetime | None = None) -> bool:
    """Whether the process that owns a run is still running it."""
    me = current_owner()
    if owner.host != me.host:
        if heartbeat_at is None:
            return False
        return (now or datetime.now(UTC)) - heartbeat_at < HEARTBEAT_STALE
    if owner.pid == me.pid:
        return owner.started is None or owner.started == me.started
    if not _pid_exists(owner.pid):
        return False
    started = _start_token(owner.pid)
    # Same pid, another process (the pid was reused): the owner is gone.
    return owner.started is None or started is None or started == owner.started


def _pid_exists(pid: int) -> bool:
    if pid <= 0:
        return False
    stat = Path(f"/proc/{pid}/stat")
    if stat.parent.parent.is_dir() and Path("/proc/self/stat").exists():
        try:
            # A zombie (killed, not yet reaped by its parent) runs nothing any more.
            return _stat_fields(stat.read_text())[0] != "Z"
        except OSError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def _start_token(pid: int) -> str | None:
    """When ``pid`` started, as ``<boot id>:<clock ticks since boot>`` (Linux), else None."""
    try:
        ticks = _stat_fields(Path(f"/proc/{pid}/stat").read_text())[19]
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except (OSError, IndexError):
        return None
    return f"{boot}:{ticks}"


def _stat_fields(text: str) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (which may hold spaces):
    [0] is the state, [19] the start time."""
    return text[text.rindex(")") + 2 :].split()
