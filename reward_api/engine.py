"""Grade a batch: validate each item, answer repeats from the cache, send the rest to
the worker pool, then add length components and combine everything into rewards.

    items -> validate -> cache / in-flight dedup -> pool (text components, deadline)
          -> length components (per item and per group) -> weighted sum -> results

An item waits for a worker at most `queue_timeout_s` from its batch's arrival, then has
its deadline in the worker. An item that looks costly (`grading.looks_costly`: integrals,
long sums, huge texts) waits for the pool's low-priority heavy lane instead. Identical items in flight share
one worker call, which is cancelled when every request waiting for it is gone (a
client that disconnects stops its work). An item that burnt its whole deadline in
CPU is remembered as a timeout, so a trainer resending it costs nothing.

The HTTP app and the offline CLI both drive this class.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import math
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from reward_api.cache import ResultCache, digest, open_result_cache
from reward_api.config import Config
from reward_api.graders.base import InvalidItem, Score
from reward_api.graders.code_reference import is_code_reference, run_budget_s
from reward_api.graders.length import (
    cosine_scaled_reward,
    estimate_num_tokens,
    kimi_length_rewards,
    soft_overlong_punishment,
)
from reward_api.graders.thought import thought_is_empty
from reward_api.grading import TASKS, ItemJob, SandboxConfig, TextGrades, grade_text, looks_costly
from reward_api.groups import GroupAssembler, Member
from reward_api.metrics import Metrics
from reward_api.pool import SOFT_FRACTION, CallOutcome, WorkerPool
from reward_api.profiles import SECTIONS, Profile
from reward_api.schemas import RewardItem, RewardResult
from sandbox.compile_cache import CompileCache
from sandbox.isolation import Isolation, IsolationUnavailable, Level, prepare
from sandbox.languages import enabled_languages

log = logging.getLogger("reward_api.engine")

# What a code item's worker needs beyond its sandbox run: parsing, sandbox start-up and teardown.
CODE_MARGIN_S = 10.0
# A timeout is remembered when the item itself burnt at least this share of its deadline in CPU
# (not one that waited in the queue or was starved by other work).
REMEMBER_TIMEOUT_CPU_SHARE = 0.5
# A math verifier model that fails is logged at most once per this; reward_math_verifier_items counts every item.
VERIFIER_LOG_EVERY_S = 60.0
# A replaced worker is reaped by the forkserver; its runs' cgroups are swept after this.
SWEEP_AFTER_RESTART_S = 1.0


@dataclass
class _SharedCall:
    """One worker call and how many requests' items wait for it."""

    task: asyncio.Future[CallOutcome]
    waiters: int = 0

    @property
    def cancelling(self) -> bool:
        """Every waiter left and the call was cancelled: a new request for the item needs a call of its own."""
        return self.waiters == 0 and (self.task.cancelled() or not self.task.done())


@dataclass
class _Graded:
    """One item on its way through the batch."""

    item: RewardItem | None
    status: str = "ok"
    item_id: str | int | None = None
    scores: dict[str, Score] = field(default_factory=dict)
    reason: str | None = None
    cached: bool = False
    seconds: float = 0.0  # in a grading worker
    queued_seconds: float = 0.0  # waiting for one
    group: dict[str, Any] | None = None  # the group a group component was computed over (details.group)

    @functools.cached_property
    def tokens(self) -> int:
        """The completion's length in tokens: the item's `num_tokens`, else estimated from its text (once: each
        length component reads it)."""
        if self.item is None:
            return 0
        return self.item.num_tokens if self.item.num_tokens is not None else estimate_num_tokens(self.item.completion)


@dataclass(frozen=True)
class CodeGrading:
    """Whether this service can grade code, where, and at which isolation level (README "Isolation levels")."""

    available: bool
    isolation: str  # the level's name, `sandbox-service` or `unavailable`
    detail: str  # what the level guarantees, or why code cannot be graded and what to do
    level: Level | None = None  # in-process grading only


class RewardEngine:
    def __init__(self, config: Config, metrics: Metrics | None = None) -> None:
        self.config = config
        self.sandbox = _sandbox_config(config)
        self.code = _code_grading(config, self.sandbox)
        self.metrics = metrics or Metrics()
        self.metrics.code_grading.labels(self.code.isolation).set(int(self.code.available))
        self.cache: ResultCache[TextGrades] = open_result_cache(config, self.metrics)
        self._in_flight: dict[bytes, _SharedCall] = {}
        self._verifier_log_after = 0.0  # time.monotonic() after which a failed math verifier is logged again
        self._verifier_unlogged = 0
        self.pool = WorkerPool(
            size=config.worker_count(),
            deadline_s=config.item_deadline_s,
            memory_mb=config.worker_memory_mb,
            preload=["reward_api.prewarm"],
            on_restart=self._worker_replaced,
            slow_after_s=config.slow_after_s,
            max_slow=config.max_slow_calls or 4 * config.worker_count(),
            heavy_size=config.worker_count() if config.heavy_workers < 0 else config.heavy_workers,
            children_size=config.worker_count() if config.code_workers < 0 else config.code_workers,
            children_calls=config.code_calls,
        )
        self.groups = GroupAssembler(config.group_wait_s, _kimi_values)
        self.metrics.groups_waiting.set_function(lambda: self.groups.in_progress)
        self.metrics.slow_calls.set_function(lambda: self.pool.slow)
        self.metrics.cache_bytes.set_function(lambda: self.cache.lru.bytes)
        self.metrics.cache_entries.set_function(lambda: len(self.cache.lru))

    def _worker_replaced(self, reason: str) -> None:
        self.metrics.worker_restarts.labels(reason).inc()
        if self.code.level is not None and self.code.level.cgroups is not None:
            # The killed worker's sandbox runs left their cgroups: removed once the worker is reaped.
            threading.Timer(SWEEP_AFTER_RESTART_S, self.code.level.cgroups.sweep).start()

    async def start(self) -> None:
        await self.cache.start()  # first: a shared cache that cannot be bounded stops the start before any worker
        await self.pool.start()

    async def close(self) -> None:
        await self.pool.close()
        await self.cache.close()

    @property
    def ready(self) -> bool:
        return self.pool.ready

    async def grade(self, raw_items: Sequence[Any], profile: Profile) -> list[RewardResult]:
        arrived = time.monotonic()
        graded = await asyncio.gather(*(self._grade_one(raw, i, profile, arrived) for i, raw in enumerate(raw_items)))
        lengths = _length_components(graded, profile)
        if "kimi_length" in profile.weights:
            await self._group_components(graded, profile, lengths)
        return [self._result(g, lengths[i], profile) for i, g in enumerate(graded)]

    async def _grade_one(self, raw: Any, index: int, profile: Profile, arrived: float) -> _Graded:
        """One item, whatever happens: a bug here is this item's `error`, never its batch's failure."""
        try:
            return await self._grade_validated(raw, index, profile, arrived)
        except Exception as exc:
            log.exception("grading items[%d] failed inside the service", index)
            reason = f"items[{index}]: internal error ({type(exc).__name__})"
            return _Graded(None, status="error", item_id=_raw_id(raw), reason=reason)

    async def _grade_validated(self, raw: Any, index: int, profile: Profile, arrived: float) -> _Graded:
        try:
            item = RewardItem.model_validate(raw)
        except ValidationError as exc:
            return _Graded(None, status="invalid", item_id=_raw_id(raw), reason=_validation_reason(exc, index))
        if item.task == "auto":
            item = item.model_copy(update={"task": "code" if is_code_reference(item.reference) else "math"})
        if item.task not in TASKS:
            reason = f"items[{index}].task: unknown task {item.task!r}; known: {sorted(TASKS)} or auto"
            return _Graded(item, status="invalid", reason=reason)
        if item.task == "code" and not self.code.available:  # not computed: never a 0 that looks like a failure
            return _Graded(item, status="error", reason=f"items[{index}]: {self.code.detail}")
        job = ItemJob(
            task=item.task,
            completion=item.completion,
            reference=item.reference,
            prompt=item.prompt,
            target_language=item.target_language,
            components=profile.text_components(),
            profile=profile,
            sandbox=self.sandbox,
        )
        try:
            deadline_s = self._deadline_s(job)
        except InvalidItem as exc:
            return _Graded(item, status="invalid", reason=str(exc))
        key = _job_key(job)
        cached = await self.cache.get(key)
        if cached is not None:
            self.metrics.cache_hits.inc()
            return _from_text_grades(item, cached, cached=True)
        self.metrics.cache_misses.inc()
        outcome = await self._call_shared(key, job, deadline_s, wait_until=arrived + self.config.queue_timeout_s)
        self.metrics.grading_seconds.labels(item.task).observe(outcome.seconds)
        if outcome.status != "ok":
            await self._remember_if_costly(key, job, outcome, deadline_s)
            return _Graded(
                item, status=outcome.status, reason=outcome.error,
                seconds=outcome.seconds, queued_seconds=outcome.queued_seconds,
            )  # fmt: skip
        if not self._verifier_failed(job, outcome.value):  # else the verifier is asked again when the item returns
            await self.cache.put(key, outcome.value, outcome.size_bytes)
        graded = _from_text_grades(item, outcome.value, cached=False)
        graded.seconds = outcome.seconds
        return graded

    async def _remember_if_costly(self, key: bytes, job: ItemJob, outcome: CallOutcome, deadline_s: float) -> None:
        """An item that burnt its deadline in CPU would burn it again: answer its repeats from the cache.
        Code items are not remembered: their CPU is spent by sandboxed programs, not measured here."""
        if outcome.status != "timeout" or job.task == "code":
            return
        if outcome.cpu_seconds < REMEMBER_TIMEOUT_CPU_SHARE * deadline_s * SOFT_FRACTION:
            return
        reason = f"{outcome.error} (remembered: this item used {outcome.cpu_seconds:.3g}s of CPU when it was graded)"
        await self.cache.put(key, TextGrades("timeout", reason=reason), len(reason))

    def _verifier_failed(self, job: ItemJob, grades: TextGrades) -> bool:
        """Count what a math verifier model said about the item; a failure (the rules' verdict stands) is
        logged too, at most once per VERIFIER_LOG_EVERY_S: a verifier that is down fails every item."""
        accuracy = grades.scores.get("accuracy")
        verdict = accuracy.details.get("verifier") if job.task == "math" and accuracy else None
        if not isinstance(verdict, str):
            return False
        outcome = verdict.split(":", 1)[0].replace(" ", "_")  # equal, not_equal, undecided, error
        self.metrics.math_verifier.labels(outcome).inc()
        if outcome != "error":
            return False
        self._verifier_unlogged += 1
        if time.monotonic() >= self._verifier_log_after:
            log.warning(
                "math verifier gave no verdict, the rules' verdict stands: %s (%d such items since the last message)",
                verdict.removeprefix("error: "), self._verifier_unlogged, extra={"failures": self._verifier_unlogged},
            )  # fmt: skip
            self._verifier_log_after = time.monotonic() + VERIFIER_LOG_EVERY_S
            self._verifier_unlogged = 0
        return True

    def _deadline_s(self, job: ItemJob) -> float:
        """A code item's deadline comes from its own run budget plus a margin, late enough that the
        worker's soft alarm (SOFT_FRACTION of it) follows the sandbox's own watchdog; at most code_deadline_s."""
        if job.task != "code":
            return self.config.item_deadline_s
        run_s = run_budget_s(job.reference, job.profile.code, job.sandbox.max_run_s)
        return min((run_s + CODE_MARGIN_S) / SOFT_FRACTION, self.config.code_deadline_s)

    async def _call_shared(self, key: bytes, job: ItemJob, deadline_s: float, wait_until: float) -> CallOutcome:
        """Identical items in flight at once share one worker call; it is cancelled (its worker
        stopped) only when no request waits for it any more."""
        shared = self._in_flight.get(key)
        if shared is None or shared.cancelling:
            call = self.pool.call(
                grade_text, job, deadline_s=deadline_s, wait_until=wait_until,
                in_children=job.task == "code",  # its work is its sandboxed programs, limited on their own
                heavy=looks_costly(job),
            )  # fmt: skip
            shared = _SharedCall(asyncio.ensure_future(call))
            self._in_flight[key] = shared
            shared.task.add_done_callback(lambda _, ended=shared: self._forget_call(key, ended))
        shared.waiters += 1
        try:
            return await asyncio.shield(shared.task)
        finally:
            shared.waiters -= 1
            if shared.waiters == 0 and not shared.task.done():
                shared.task.cancel()

    def _forget_call(self, key: bytes, ended: _SharedCall) -> None:
        if self._in_flight.get(key) is ended:  # not a newer call for the same item
            del self._in_flight[key]

    async def _group_components(self, graded: Sequence[_Graded], profile: Profile, out: list[dict[str, float]]) -> None:
        """kimi_length over each item's group: the request's items sharing its `group`, or, with `group_size`, the
        whole group however many requests it came in (reward_api/groups.py); an incomplete one is `timeout`."""
        for members in _request_groups(graded).values():
            values = _kimi_values([Member(graded[i].tokens, _correct(graded[i], profile)) for i in members])
            for i, value in zip(members, values, strict=True):
                out[i]["kimi_length"] = min(value, _bonus_ceiling(graded[i]))
                if graded[i].item is not None and graded[i].item.group is not None:
                    graded[i].group = {"members": len(members), "expected": None, "formed": "request"}
                    self.metrics.group_items.labels("request").inc()
        sized = [i for i, g in enumerate(graded) if g.item is not None and g.item.group_size is not None]
        profile_key = profile.model_dump_json()
        outcomes = await asyncio.gather(*(
            self.groups.join(
                (profile_key, json.dumps(graded[i].item.group, sort_keys=True, default=str)),
                graded[i].item.group_size,
                Member(graded[i].tokens, _correct(graded[i], profile)),
            )
            for i in sized
        ))  # fmt: skip
        for i, outcome in zip(sized, outcomes, strict=True):
            graded[i].group = {"members": outcome.arrived, "expected": outcome.expected, "formed": "group_size"}
            if outcome.value is None:
                self.metrics.group_items.labels("incomplete").inc()
                graded[i].status = "timeout"
                graded[i].reason = (
                    f"group {graded[i].item.group!r} incomplete: {outcome.arrived} of its {outcome.expected} samples "
                    f"arrived within group_wait_s={self.config.group_wait_s:g}s; kimi_length needs them all (send "
                    "every sample with the same group and group_size, to the same replica)"
                )
                log.warning("%s", graded[i].reason)
            else:
                self.metrics.group_items.labels("complete").inc()
                out[i]["kimi_length"] = min(outcome.value, _bonus_ceiling(graded[i]))

    def _result(self, graded: _Graded, lengths: dict[str, float], profile: Profile) -> RewardResult:
        task = graded.item.task if graded.item and graded.item.task in TASKS else "unknown"  # bounded label set
        self.metrics.items.labels(task, graded.status).inc()
        item_id = graded.item.id if graded.item else graded.item_id
        names = _reported_components(profile)
        if graded.status != "ok":
            details: dict[str, Any] = {"reason": graded.reason, "seconds": graded.seconds}
            if graded.group is not None:
                details["group"] = graded.group
            if graded.queued_seconds:
                details["queued_seconds"] = graded.queued_seconds
            if graded.cached:
                details["cached"] = True
            components = dict.fromkeys(names, 0.0)
            return RewardResult(
                id=item_id, reward=profile.failure_reward, components=components,
                status=graded.status, details=details,
            )  # fmt: skip
        values = {name: score.value for name, score in graded.scores.items()} | lengths
        components = {name: values[name] for name in names}
        reward = sum(
            weight * (profile.scaled_accuracy(values[name]) if name == "accuracy" else values[name])
            for name, weight in profile.weights.items()
        )
        details = {name: score.details for name, score in graded.scores.items()}
        if graded.group is not None:
            details["group"] = graded.group
        if graded.cached:
            details["cached"] = True
        else:
            details["seconds"] = graded.seconds
        return RewardResult(id=item_id, reward=reward, components=components, status="ok", details=details)


def _sandbox_config(config: Config) -> SandboxConfig:
    """What workers need to judge code, checked here so a bad setting stops the service at start."""
    max_run_s = config.code_deadline_s * SOFT_FRACTION - CODE_MARGIN_S
    if max_run_s < 1:
        least = (1 + CODE_MARGIN_S) / SOFT_FRACTION
        raise ValueError(f"REWARD_API_CODE_DEADLINE_S={config.code_deadline_s:g}: expected at least {least:.3g}")
    choices = [isolation.value for isolation in Isolation]
    if config.sandbox_isolation not in choices:
        raise ValueError(f"REWARD_API_SANDBOX_ISOLATION={config.sandbox_isolation!r}: expected one of {choices}")
    urls = tuple(url.strip() for url in config.sandbox_urls.split(",") if url.strip())
    if not urls:
        enabled_languages()  # in-process grading serves SANDBOX_LANGUAGES: a typo stops the start, naming it
        CompileCache.from_env()  # ...and keeps compiles where SANDBOX_COMPILE_CACHE_DIR says: one it cannot use too
    return SandboxConfig(
        urls=urls, token=config.sandbox_auth_token, isolation=config.sandbox_isolation, max_run_s=max_run_s
    )


def _code_grading(config: Config, sandbox: SandboxConfig) -> CodeGrading:
    """Code is graded on sandbox services, or here at the configured isolation, never less. When this host
    cannot give that, the service still starts for everything else, unless the operator requires code."""
    if sandbox.urls:
        return CodeGrading(True, "sandbox-service", f"judged on the sandbox service(s) {', '.join(sandbox.urls)}")
    try:
        level = prepare(Isolation(sandbox.isolation))
    except IsolationUnavailable as exc:
        reason = (
            f"code grading is unavailable in this process: {exc}. Set REWARD_API_SANDBOX_URLS to judge code on a "
            "sandbox service, or REWARD_API_SANDBOX_ISOLATION=none to run it without isolation (trusted code only)"
        )
        if config.require_code:
            raise IsolationUnavailable(f"{reason}; REWARD_API_REQUIRE_CODE is set: not starting") from None
        log.warning("%s; code items are answered `error`, everything else is graded", reason)
        return CodeGrading(False, "unavailable", reason)
    log.info("code is graded in this process at isolation %s", level.describe())
    return CodeGrading(True, level.name, level.describe(), level)


def _reported_components(profile: Profile) -> list[str]:
    return ["accuracy", *(name for name in profile.weights if name != "accuracy")]


def _from_text_grades(item: RewardItem, grades: TextGrades, cached: bool) -> _Graded:
    return _Graded(item, status=grades.status, scores=grades.scores, reason=grades.reason, cached=cached)


def _raw_id(raw: Any) -> str | int | None:
    """Echo the id of an item that failed validation, when it has a usable one."""
    item_id = raw.get("id") if isinstance(raw, dict) else None
    return item_id if isinstance(item_id, str | int) and not isinstance(item_id, bool) else None


def _validation_reason(exc: ValidationError, index: int) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"items[{index}]{'.' + where if where else ''}: {first['msg']}"


def _job_key(job: ItemJob) -> bytes:
    """Everything that can change a text grade: task, texts, reference, components, settings."""
    settings = job.profile.model_dump_json(include=set(SECTIONS))
    reference = json.dumps(job.reference, sort_keys=True, default=str)
    return digest(
        job.task, job.completion, reference, job.prompt or "", job.target_language or "",
        ",".join(job.components), settings,
    )  # fmt: skip


def _length_components(graded: Sequence[_Graded], profile: Profile) -> list[dict[str, float]]:
    """The length rewards of each item alone (kimi_length, over a group, is RewardEngine._group_components')."""
    out: list[dict[str, float]] = [{} for _ in graded]
    settings = profile.length
    for i, g in enumerate(graded):
        if "overlong" in profile.weights:
            out[i]["overlong"] = soft_overlong_punishment(g.tokens, settings.max_length, settings.cache_length)
        if "cosine" in profile.weights:
            out[i]["cosine"] = min(cosine_scaled_reward(_correct(g, profile), g.tokens, settings), _bonus_ceiling(g))
    return out


def _bonus_ceiling(graded: _Graded) -> float:
    """Shortness pays only for a short thought, not for none: an empty one keeps penalties and loses bonuses."""
    return 0.0 if graded.item is None or thought_is_empty(graded.item.completion) else math.inf


def _correct(graded: _Graded, profile: Profile) -> bool:
    return graded.status == "ok" and graded.scores["accuracy"].value >= profile.correct_threshold


def _kimi_values(members: Sequence[Member]) -> list[float]:
    return kimi_length_rewards([m.length for m in members], [m.correct for m in members])


def _request_groups(graded: Sequence[_Graded]) -> dict[Any, list[int]]:
    """Items sharing `group` without a `group_size`: the group is what this request holds of it; an item without
    a group is a group of its own."""
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, g in enumerate(graded):
        if g.item is not None and g.item.group_size is not None:
            continue
        group = g.item.group if g.item else None
        groups[("group", group) if group is not None else ("alone", i)].append(i)
    return groups
