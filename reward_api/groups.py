"""Groups completed across requests: a group component (Kimi's length reward) over every sample of a prompt, however
the trainer splits them.

verl's agent loop sends each finished sample to one of its reward workers at random, slime's `--rm-url` posts one
sample per request, and a prompt's samples finish at different times: a request rarely holds a whole group. An item
that says how many samples its group holds (`group_size`) joins the group here, in the replica's front process
(the client routes a group to one replica), and its group component waits until the last sample has been graded:
no fixed wait beyond that. What a trainer sends is rarely that tidy, and no sample ever waits longer than its
caller can bear:

- **Bounded waits.** A group lives at most `wait_s` from its first sample; a sample waits at most what its own
  request allows (`group_wait_s`, below the caller's HTTP timeout). Either bound answers the waiting samples over
  the members that came (`partial`, k of n): a value, never a hang, and the group keeps its members.
- **Disconnects and retries.** A request that goes away leaves its sample in the group (it was graded); the same
  sample sent again takes its place instead of counting twice, and nothing restarts the group's clock.
- **Duplicates.** Padding (verl's `pad_dataproto_to_divisor`) sends a sample twice. Copies count toward the size,
  but a group whose count is reached with copies waits `COPIES_GRACE_S` more for a missing distinct sample, so
  padding does not close a group before its last real member; identical samples (a short answer sampled twice)
  cost that grace and no more.
- **Samples that will not come.** A trainer that aborts or filters out some of a group's samples (slime's abort
  after over-sampling) withdraws them: the group completes over the rest at once (`partial`, k of n).
- **Late samples.** A sample of a group answered within the last `wait_s` is answered at once: a copy of a member
  with that member's value, another sample over the members plus itself (`late`), up to the group's size; beyond
  that it starts a new group (the same prompt in a later step).

The key holds the group's expected size: validation (n = 1) and training (n = 8) of one prompt are separate groups.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

# A group whose size is reached only with copies of one sample waits this much longer for a distinct one (seconds).
COPIES_GRACE_S = 2.0

Formed = Literal["group_size", "partial", "late"]


@dataclass(frozen=True)
class Member:
    sample: str  # what the sample is (its text, digested): the same sample sent twice is one member
    length: int
    correct: bool


@dataclass(frozen=True)
class Outcome:
    """A member's group component, computed over `members` of the group's `expected` samples (copies included)."""

    value: float
    members: int
    expected: int
    formed: Formed  # group_size: the whole group; partial: a bound came first; late: after the group was answered


@dataclass
class _Group:
    expected: int
    members: dict[str, Member] = field(default_factory=dict)  # by sample, in arrival order
    copies: Counter[str] = field(default_factory=Counter)  # how many times each sample was sent (not retried)
    gone: Counter[str] = field(default_factory=Counter)  # senders that went away: a retry takes their place
    waiting: dict[asyncio.Future[Outcome], str] = field(default_factory=dict)  # -> the sample it waits for
    life: asyncio.TimerHandle | None = None  # answers the group `wait_s` after its first sample
    grace: asyncio.TimerHandle | None = None  # set once the size is reached with copies (COPIES_GRACE_S)
    answered_at: float | None = None  # set when answered: late samples then come at once
    late: int = 0
    withdrawn: int = 0  # samples the trainer said will not come

    @property
    def count(self) -> int:
        return sum(self.copies.values())

    def ensemble(self) -> list[Member]:
        return [self.members[sample] for sample in self.members for _ in range(self.copies[sample])]


class GroupAssembler:
    """Groups in progress in this process, keyed by the item's group and whatever else must match (the profile)."""

    def __init__(
        self,
        wait_s: float,
        component: Callable[[Sequence[Member]], list[float]],
        copies_grace_s: float = COPIES_GRACE_S,
    ) -> None:
        self.wait_s = wait_s
        self.copies_grace_s = copies_grace_s
        self.component = component  # a group's members -> each one's value
        self._groups: dict[Any, _Group] = {}  # in progress, then answered (kept `wait_s` for late samples)
        self._answered: dict[Any, _Group] = {}  # the answered ones, oldest first

    @property
    def in_progress(self) -> int:
        return len(self._groups) - len(self._answered)

    async def join(self, key: Any, expected: int, member: Member, wait_s: float | None = None) -> Outcome:
        """`member`'s outcome once its group has `expected` samples, or partial after `wait_s` (the request's
        bound, at most the assembler's)."""
        self._forget_answered()
        key = (key, expected)
        group = self._groups.get(key)
        if group is not None and group.answered_at is not None:
            if member.sample in group.members or group.late < group.expected - len(group.members):
                return self._late(group, member)
            del self._answered[key]  # as many late samples as the group lacked came already: this is a new group
            group = None
        if group is None:
            group = self._start(key, expected)
        self._add(group, member)
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        group.waiting[future] = member.sample
        self._check(key, group)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.bound(wait_s))
        except TimeoutError:  # this request's bound came first: the group goes on for its other samples
            group.waiting.pop(future, None)
            return self._outcome(group, member.sample, "partial")
        except asyncio.CancelledError:  # the request went away; its sample stays, a retry takes its place
            if group.waiting.pop(future, None) is not None:
                group.gone[member.sample] += 1
            raise

    def withdraw(self, key: Any, expected: int, samples: int = 1) -> None:
        """`samples` of the group will not come (aborted, filtered out): it completes over the others, at once when
        they are all in. A group answered already is left as it is."""
        self._forget_answered()
        key = (key, expected)
        group = self._groups.get(key)
        if group is None:
            group = self._start(key, expected)
        elif group.answered_at is not None:
            return
        group.withdrawn += samples
        self._check(key, group)

    def _start(self, key: Any, expected: int) -> _Group:
        group = self._groups[key] = _Group(expected)
        group.life = asyncio.get_running_loop().call_later(self.wait_s, self._answer, key, "partial")
        return group

    def bound(self, wait_s: float | None) -> float:
        """The longest a sample waits for its group when its request allows `wait_s` (None: no bound of its own)."""
        return self.wait_s if wait_s is None else min(wait_s, self.wait_s)

    def _add(self, group: _Group, member: Member) -> None:
        if group.gone[member.sample]:  # a retry of a sample whose request went away
            group.gone[member.sample] -= 1
            return
        group.members.setdefault(member.sample, member)
        group.copies[member.sample] += 1

    def _check(self, key: Any, group: _Group) -> None:
        if len(group.members) >= group.expected:
            self._answer(key, "group_size")
        elif len(group.members) + group.withdrawn >= group.expected:
            self._answer(key, "partial")
        elif group.count >= group.expected and group.grace is None:  # reached with copies: a grace for the rest
            group.grace = asyncio.get_running_loop().call_later(self.copies_grace_s, self._answer, key, "group_size")

    def _answer(self, key: Any, formed: Formed) -> None:
        group = self._groups.get(key)
        if group is None or group.answered_at is not None:
            return
        for timer in (group.life, group.grace):
            if timer is not None:
                timer.cancel()
        group.answered_at = time.monotonic()
        self._answered[key] = group
        values = self._values(group) if group.waiting else {}  # a group all withdrawn has no members
        for future, sample in group.waiting.items():
            if not future.done():
                future.set_result(Outcome(values[sample], group.count, group.expected, formed))
        group.waiting.clear()

    def _late(self, group: _Group, member: Member) -> Outcome:
        if member.sample in group.members:  # a copy (padding) or a retry after the answer: its twin's value
            return self._outcome(group, member.sample, "group_size" if group.count >= group.expected else "partial")
        group.late += 1
        self._add(group, member)
        return self._outcome(group, member.sample, "late")

    def _outcome(self, group: _Group, sample: str, formed: Formed) -> Outcome:
        return Outcome(self._values(group)[sample], group.count, group.expected, formed)

    def _values(self, group: _Group) -> dict[str, float]:
        ensemble = group.ensemble()
        return {member.sample: value for member, value in zip(ensemble, self.component(ensemble), strict=True)}

    def _forget_answered(self) -> None:
        horizon = time.monotonic() - self.wait_s
        while self._answered:
            key, group = next(iter(self._answered.items()))
            if group.answered_at is not None and group.answered_at > horizon:
                break
            del self._answered[key]
            if self._groups.get(key) is group:
                del self._groups[key]
