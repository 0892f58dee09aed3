"""The live processes of a sandboxed run, found by its job folder, for tests that check a
run is killed."""

from __future__ import annotations

from pathlib import Path

__all__ = ["FOREVER", "alive", "sandbox_tree"]

# A strategy that never ends a bar: only a kill stops its sandbox in time.
FOREVER = """
import backtrader as bt


class Forever(bt.Strategy):
    def next(self):
        n = 0
        while True:
            n += 1
"""


def sandbox_tree(marker: str) -> set[int]:
    """The live processes whose command line holds ``marker`` (a sandbox's job folder is
    on bwrap's), and their descendants."""
    parents: dict[int, int] = {}
    commands: dict[int, bytes] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            commands[int(entry.name)] = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if state != "Z":
            parents[int(entry.name)] = int(parent)
    tree = {pid for pid in parents if marker.encode() in commands.get(pid, b"")}
    grown = True
    while grown:
        children = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= children
        grown = bool(children)
    return tree


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
