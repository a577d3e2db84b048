"""Groups completed across requests: a group component (Kimi's length reward) over every sample of a prompt, however
the trainer splits them.

verl's agent loop sends each finished sample to one of its reward workers at random, slime's `--rm-url` posts one
sample per request, and a prompt's samples finish at different times: a request rarely holds a whole group. An item
that says how many samples its group holds (`group_size`) joins the group here, in the replica's front process
(the client routes a group to one replica), and its group component waits until the last sample has been graded:
no fixed wait beyond that. A group still short of its size `wait_s` after its first sample arrived is answered
incomplete (status `timeout`, the reason says how many of how many arrived), never a group component computed over
a fragment; a sample arriving after that is answered at once in the same way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# Keys of groups answered incomplete are remembered this long: their late samples do not wait again.
_EXPIRED_MEMORY_S = 600.0


@dataclass(frozen=True)
class Member:
    length: int
    correct: bool


@dataclass(frozen=True)
class Outcome:
    """A member's group component, or None when its group did not complete (`arrived` of `expected`)."""

    value: float | None
    arrived: int
    expected: int


@dataclass
class _Group:
    expected: int
    members: list[Member] = field(default_factory=list)
    waiting: list[asyncio.Future[Outcome]] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None


class GroupAssembler:
    """Groups in progress in this process, keyed by the item's group and whatever else must match (the profile)."""

    def __init__(self, wait_s: float, component: Callable[[Sequence[Member]], list[float]]) -> None:
        self.wait_s = wait_s
        self.component = component  # a whole group's members -> each one's value
        self._groups: dict[Any, _Group] = {}
        self._expired: dict[Any, float] = {}  # key -> when it was answered incomplete

    @property
    def in_progress(self) -> int:
        return len(self._groups)

    async def join(self, key: Any, expected: int, member: Member) -> Outcome:
        """`member`'s outcome once its group has `expected` members, or incomplete after `wait_s`."""
        self._forget_expired()
        if key in self._expired:
            return Outcome(None, 1, expected)
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _Group(expected)
            group.timer = asyncio.get_running_loop().call_later(self.wait_s, self._expire, key)
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        group.members.append(member)
        group.waiting.append(future)
        if len(group.members) >= group.expected:
            self._complete(key)
        try:
            return await future
        except asyncio.CancelledError:  # its request went away: a retry sends the sample again
            self._leave(key, group, future)
            raise

    def _complete(self, key: Any) -> None:
        group = self._groups.pop(key)
        if group.timer is not None:
            group.timer.cancel()
        values = self.component(group.members)
        for future, value in zip(group.waiting, values, strict=True):
            if not future.done():
                future.set_result(Outcome(value, len(group.members), group.expected))

    def _expire(self, key: Any) -> None:
        group = self._groups.pop(key, None)
        if group is None:
            return
        self._expired[key] = time.monotonic()
        for future in group.waiting:
            if not future.done():
                future.set_result(Outcome(None, len(group.members), group.expected))

    def _leave(self, key: Any, group: _Group, future: asyncio.Future[Outcome]) -> None:
        if self._groups.get(key) is not group or future not in group.waiting:
            return
        index = group.waiting.index(future)
        del group.waiting[index], group.members[index]
        if not group.members:
            if group.timer is not None:
                group.timer.cancel()
            del self._groups[key]

    def _forget_expired(self) -> None:
        horizon = time.monotonic() - _EXPIRED_MEMORY_S
        while self._expired:
            key, when = next(iter(self._expired.items()))
            if when > horizon:
                break
            del self._expired[key]
