"""The machine's processes as a tree, read from /proc (no psutil in the server extra): what a service and
everything it started use, for the benchmarks."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


@dataclass(frozen=True)
class Process:
    parent: int
    ticks: int  # CPU it and its reaped children used: utime, stime, cutime, cstime
    rss_pages: int
    cmdline: bytes


def processes() -> dict[int, Process]:
    """Every process of the machine."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        fields = stat.rpartition(")")[2].split()  # the command name may hold spaces and parentheses
        ticks = sum(int(value) for value in fields[11:15])
        found[int(entry)] = Process(parent=int(fields[1]), ticks=ticks, rss_pages=int(fields[21]), cmdline=cmdline)
    return found


def descendants(table: dict[int, Process], roots: Iterable[int]) -> Iterator[int]:
    """Every process below `roots` in `table` (not the roots themselves)."""
    children: dict[int, list[int]] = {}
    for pid, process in table.items():
        children.setdefault(process.parent, []).append(pid)
    todo = [child for root in roots for child in children.get(root, [])]
    while todo:
        pid = todo.pop()
        yield pid
        todo.extend(children.get(pid, []))
