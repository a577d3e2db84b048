"""Grade a batch: validate each item, answer repeats from the cache, send the rest to
the worker pool, then add length components and combine everything into rewards.

    items -> validate -> cache / in-flight dedup -> pool (text components, deadline)
          -> length components (per item and per group) -> weighted sum -> results

An item waits for a worker at most `queue_timeout_s` from its batch's arrival, then has
its deadline in the worker. An item that looks costly (`grading.looks_costly`: integrals,
long sums, huge texts) waits for the pool's heavy lane instead (lowered once it proves slow). The others go to the pool
in chunks (`WorkerPool.call_many`: one message per worker for many items, each keeping its own deadline):
for cheap items the round trip per item cost more than grading them. A batch is walked in plain loops, with
no task per item, for the same reason. Identical items in flight share one worker call, which is cancelled
when every request waiting for it is gone (a client that disconnects stops its work). An item that burnt
its whole deadline in CPU is remembered as a timeout, so a trainer resending it costs nothing.

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
from collections import Counter, defaultdict
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from pydantic import ValidationError

from reward_api.cache import LRUCache, ProcessCache, ResultCache, digest
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
from reward_api.grading import (
    TASKS,
    ItemJob,
    SandboxConfig,
    TextGrades,
    decode_grades,
    encode_grades,
    grade_text,
    looks_costly,
)
from reward_api.groups import GroupAssembler, Member, Outcome
from reward_api.metrics import Metrics
from reward_api.pool import SOFT_FRACTION, CallOutcome, WorkerPool
from reward_api.profiles import SECTIONS, Profile
from reward_api.schemas import RewardItem, RewardResult, clean_text
from sandbox.compile_cache import CompileCache
from sandbox.isolation import Isolation, IsolationUnavailable, Level, prepare
from sandbox.languages import enabled_languages
from service_kit.http_guard import set_aside

if TYPE_CHECKING:
    from reward_api.group_relay import GroupRelay

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
# Most cheap items one pool message carries to a worker: enough that the message costs little per item, few enough
# that a batch spreads over every worker and a chunk's last item does not wait long behind its first.
CHUNK_ITEMS = 32

_T = TypeVar("_T")


@dataclass
class _SharedCall:
    """One worker call and how many requests' items wait for it."""

    task: asyncio.Future[CallOutcome]
    waiters: int = 0
    chunk: _ChunkCall | None = None  # the pool call that answers it, when it went with other items

    @property
    def done(self) -> asyncio.Future[Any]:
        """What to wait for: the call, or its chunk's pool call (which answers its items before their waiters wake:
        one wake-up per chunk, not per item)."""
        return self.task if self.chunk is None else self.chunk.task

    @property
    def cancelling(self) -> bool:
        """Every waiter left and the call was cancelled: a new request for the item needs a call of its own."""
        return self.waiters == 0 and (self.task.cancelled() or not self.task.done())


@dataclass(eq=False)
class _ChunkCall:
    """One pool call for many items (WorkerPool.call_many), cancelled when no request waits for any of them."""

    task: asyncio.Task[list[CallOutcome]]
    wanted: int  # its items some request still waits for

    def abandon(self) -> None:
        self.wanted -= 1
        if self.wanted == 0:
            self.task.cancel()


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
class _BatchSettings:
    """What every item of a batch shares, made once per batch: its text components, the profile's part of keys."""

    components: tuple[str, ...]
    profile_key: bytes


class _Job(NamedTuple):
    """An item on its way to a worker: its place in the batch, what the worker grades, its cache key and deadline.
    (A tuple: one per item, made faster than a frozen dataclass.)"""

    position: int  # in the batch (not `index`: a tuple has that method)
    item: RewardItem
    job: ItemJob
    key: bytes
    deadline_s: float


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
        self._cache_in_process = isinstance(self.cache, ProcessCache)
        self._grading_seconds = functools.cache(self.metrics.grading_seconds.labels)  # a lookup per item, not a lock
        self._in_flight: dict[bytes, _SharedCall] = {}
        self._chunk_calls: set[asyncio.Task[list[CallOutcome]]] = set()  # each answers its items' shared calls
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
        # Groups split between replicas meet at one through the shared cache's Redis (reward_api/group_relay.py).
        self.relay = _group_relay(self.groups, config, self.metrics) if config.cache_redis_url else None
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
        if self.relay is not None:
            await self.relay.start()

    async def close(self) -> None:
        if self.relay is not None:
            await self.relay.close()
        await self.pool.close()
        await self.cache.close()

    @property
    def ready(self) -> bool:
        return self.pool.ready

    async def grade(
        self, raw_items: Sequence[Any], profile: Profile, group_wait_s: float | None = None
    ) -> list[RewardResult]:
        """Grade a batch, results in its order. `group_wait_s`: the most an item with `group_size` waits for the
        rest of its group (reward_api/groups.py), at most the configured `group_wait_s`."""
        arrived = time.monotonic()
        settings = _BatchSettings(profile.text_components(), _profile_key(profile))
        graded: list[_Graded] = []
        jobs: list[_Job] = []
        for index, raw in enumerate(raw_items):
            try:
                answered, job = self._prepare(raw, index, profile, settings)
            except Exception as exc:
                answered, job = _internal_error(index, exc, _raw_id(raw)), None
            graded.append(answered)
            if job is not None:
                jobs.append(job)
        misses = await self._answer_from_cache(jobs, graded)
        calls = await self._call_all(misses, wait_until=arrived + self.config.queue_timeout_s)
        settled = await self._each([self._settle(job, call) for job, call in zip(misses, calls, strict=True)])
        for job, answered in zip(misses, settled, strict=True):
            graded[job.position] = answered
        lengths = _length_components(graded, profile)
        if "kimi_length" in profile.weights:
            await self._group_components(graded, profile, lengths, group_wait_s)
        names = _reported_components(profile)
        results = [self._result(g, lengths[i], profile, names) for i, g in enumerate(graded)]
        for (task, status), count in Counter(map(_item_labels, graded)).items():  # once per label, not per item
            self.metrics.items.labels(task, status).inc(count)
        return results

    def _prepare(self, raw: Any, index: int, profile: Profile, settings: _BatchSettings) -> tuple[_Graded, _Job | None]:
        """Validate one item and make its job; an item answered without a worker (invalid, code unavailable) has
        no job."""
        try:
            item = RewardItem.model_validate(raw)
        except ValidationError as exc:
            return _Graded(None, status="invalid", item_id=_raw_id(raw), reason=_validation_reason(exc, index)), None
        if item.task == "auto":
            item = item.model_copy(update={"task": "code" if is_code_reference(item.reference) else "math"})
        if item.task not in TASKS:
            reason = f"items[{index}].task: unknown task {item.task!r}; known: {sorted(TASKS)} or auto"
            return _Graded(item, status="invalid", reason=reason), None
        if item.task == "code" and not self.code.available:  # not computed: never a 0 that looks like a failure
            return _Graded(item, status="error", reason=f"items[{index}]: {self.code.detail}"), None
        job = ItemJob(
            task=item.task,
            completion=item.completion,
            reference=item.reference,
            prompt=item.prompt,
            target_language=item.target_language,
            components=settings.components,
            profile=profile,
            sandbox=self.sandbox,
        )
        try:
            deadline_s = self._deadline_s(job)
        except InvalidItem as exc:
            return _Graded(item, status="invalid", reason=str(exc)), None
        return _Graded(item), _Job(index, item, job, _job_key(job, settings.profile_key), deadline_s)

    async def _answer_from_cache(self, jobs: list[_Job], graded: list[_Graded]) -> list[_Job]:
        """Answer the jobs the cache knows (into `graded`); the others, to grade."""
        found = await self._each([self.cache.get(job.key) for job in jobs])
        misses = []
        for job, cached in zip(jobs, found, strict=True):
            if cached is None:
                misses.append(job)
            else:
                graded[job.position] = _from_text_grades(job.item, cached, cached=True)
        self.metrics.cache_hits.inc(len(jobs) - len(misses))
        self.metrics.cache_misses.inc(len(misses))
        return misses

    async def _each(self, calls: list[Coroutine[Any, Any, _T]]) -> list[_T]:
        """Await calls that use the cache: the process's own LRU answers each at once, so in turn (a task apiece
        would cost more than the lookup); a shared cache batches calls made together into one round trip, so all
        at once."""
        if self._cache_in_process:
            return [await call for call in calls]
        return await asyncio.gather(*calls)

    async def _settle(self, job: _Job, call: asyncio.Future[CallOutcome]) -> _Graded:
        """A graded job, remembered in the cache when it may be; a bug here is this item's `error`."""
        try:
            return await self._settle_outcome(job, call.result())
        except Exception as exc:
            return _internal_error(job.position, exc, job.item.id)

    async def _settle_outcome(self, job: _Job, outcome: CallOutcome) -> _Graded:
        self._grading_seconds(job.item.task).observe(outcome.seconds)
        if outcome.status != "ok":
            await self._remember_if_costly(job.key, job.job, outcome, job.deadline_s)
            return _Graded(
                job.item, status=outcome.status, reason=outcome.error,
                seconds=outcome.seconds, queued_seconds=outcome.queued_seconds,
            )  # fmt: skip
        if not self._verifier_failed(job.job, outcome.value):  # else the verifier is asked again when the item returns
            await self.cache.put(job.key, outcome.value, outcome.pickled)  # the worker's bytes: no re-pickling
        graded = _from_text_grades(job.item, outcome.value, cached=False)
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
        await self.cache.put(key, TextGrades("timeout", reason=reason))

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

    async def _call_all(self, jobs: list[_Job], wait_until: float) -> list[asyncio.Future[CallOutcome]]:
        """Grade `jobs` in workers; their calls, each done. Identical items in flight at once share one call; a call
        is cancelled (its worker stopped) only when no request waits for it any more. Cheap items go to the pool in
        chunks (one message per worker for many items), costly and code ones one by one."""
        calls: list[_SharedCall] = []
        chunk: list[tuple[_Job, _SharedCall]] = []
        for job in jobs:
            shared = self._in_flight.get(job.key)
            if shared is None or shared.cancelling:
                if job.job.task == "code" or looks_costly(job.job):
                    shared = _SharedCall(asyncio.ensure_future(self._call_one(job, wait_until)))
                    shared.task.add_done_callback(lambda _, key=job.key, ended=shared: self._forget_call(key, ended))
                else:
                    shared = _SharedCall(asyncio.get_running_loop().create_future())
                    chunk.append((job, shared))
                self._in_flight[job.key] = shared
            calls.append(shared)
        for piece in _pieces(chunk, self.pool.size):
            self._call_chunk(piece, wait_until)
        for shared in calls:
            shared.waiters += 1
        try:
            if calls:
                await asyncio.wait({shared.done for shared in calls})
        finally:
            for job, shared in zip(jobs, calls, strict=True):
                shared.waiters -= 1
                if shared.waiters == 0 and not shared.task.done():
                    shared.task.cancel()
                    if shared.chunk is not None:
                        self._forget_call(job.key, shared)
                        shared.chunk.abandon()
        return [shared.task for shared in calls]

    def _call_one(self, job: _Job, wait_until: float) -> Coroutine[Any, Any, CallOutcome]:
        return self.pool.call(
            grade_text, job.job, deadline_s=job.deadline_s, wait_until=wait_until,
            in_children=job.job.task == "code",  # its work is its sandboxed programs, limited on their own
            heavy=looks_costly(job.job),
        )  # fmt: skip

    def _call_chunk(self, piece: list[tuple[_Job, _SharedCall]], wait_until: float) -> None:
        """One pool call for `piece`'s jobs; when it ends, it answers each job's call and forgets it."""
        task = asyncio.get_running_loop().create_task(
            self.pool.call_many(grade_text, [(job.job,) for job, _ in piece], self.config.item_deadline_s, wait_until)
        )
        self._chunk_calls.add(task)
        task.add_done_callback(self._chunk_calls.discard)
        chunk = _ChunkCall(task, wanted=len(piece))
        for _, shared in piece:
            shared.chunk = chunk

        def answer(task: asyncio.Task[list[CallOutcome]]) -> None:
            failure = None if task.cancelled() else task.exception()
            for i, (job, shared) in enumerate(piece):
                self._forget_call(job.key, shared)
                if shared.task.done():  # cancelled: nobody waits for it
                    continue
                if task.cancelled():
                    shared.task.cancel()
                elif failure is not None:
                    shared.task.set_exception(failure)
                else:
                    shared.task.set_result(task.result()[i])

        task.add_done_callback(answer)

    def _forget_call(self, key: bytes, ended: _SharedCall) -> None:
        if self._in_flight.get(key) is ended:  # not a newer call for the same item
            del self._in_flight[key]

    async def _group_components(
        self, graded: Sequence[_Graded], profile: Profile, out: list[dict[str, float]], group_wait_s: float | None
    ) -> None:
        """kimi_length over each item's group: the request's items sharing its `group`, or, with `group_size`, the
        whole group however many requests it came in (reward_api/groups.py), or what of it came within the wait."""
        for members in _request_groups(graded).values():
            values = _kimi_values([Member("", graded[i].tokens, _correct(graded[i], profile)) for i in members])
            for i, value in zip(members, values, strict=True):
                out[i]["kimi_length"] = min(value, _bonus_ceiling(graded[i]))
                if graded[i].item is not None and graded[i].item.group is not None:
                    graded[i].group = {"members": len(members), "expected": None, "formed": "request"}
                    self.metrics.group_items.labels("request").inc()
        sized = [i for i, g in enumerate(graded) if g.item is not None and g.item.group_size is not None]
        profile_json = profile.model_dump_json()
        join = self.groups.join if self.relay is None else self.relay.join
        with set_aside():  # waiting for other requests' samples is not work: it must not keep them out
            outcomes = await asyncio.gather(*(
                join(
                    _group_key(profile_json, graded[i].item.group),
                    graded[i].item.group_size,
                    _member(graded[i], profile),
                    group_wait_s,
                )
                for i in sized
            ))  # fmt: skip
        short: dict[str, Outcome] = {}  # group -> how it was answered, for one log line a group, not one an item
        for i, outcome in zip(sized, outcomes, strict=True):
            graded[i].group = {"members": outcome.members, "expected": outcome.expected, "formed": outcome.formed}
            out[i]["kimi_length"] = min(outcome.value, _bonus_ceiling(graded[i]))
            self.metrics.group_items.labels("complete" if outcome.formed == "group_size" else outcome.formed).inc()
            if outcome.formed != "group_size":
                short[_KEY_JSON(graded[i].item.group)] = outcome
        for group, outcome in short.items():
            log.warning(
                "group %s answered %s: kimi_length over %d of its %d samples (waited at most %gs; send every sample "
                "with the same group and group_size, to the same replica)",
                group, outcome.formed, outcome.members, outcome.expected, self.groups.bound(group_wait_s),
            )  # fmt: skip

    async def withdraw(self, group: str | int, group_size: int, samples: int, profile: Profile) -> None:
        """`samples` of a group will not come (aborted, filtered out): it completes over the others."""
        key = _group_key(profile.model_dump_json(), group)
        if self.relay is None:
            self.groups.withdraw(key, group_size, samples)
        else:
            await self.relay.withdraw(key, group_size, samples)
        log.info("group %s: %d of its %d samples withdrawn", _KEY_JSON(group), samples, group_size)

    def _result(self, graded: _Graded, lengths: dict[str, float], profile: Profile, names: list[str]) -> RewardResult:
        item_id = graded.item.id if graded.item else graded.item_id
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


def open_result_cache(config: Config, metrics: Metrics) -> ResultCache[TextGrades]:
    """The process LRU of text grades, with the shared Redis behind it when one is configured."""
    try:
        lru: LRUCache[TextGrades] = LRUCache(config.cache_entries, int(config.cache_mb * 1024 * 1024))
    except (OSError, OverflowError) as exc:
        raise ValueError(f"REWARD_API_CACHE_MB={config.cache_mb:g}: cannot map that much memory ({exc})") from None
    if not config.cache_redis_url:
        return ProcessCache(lru)
    try:
        from reward_api.shared_cache import SharedCache  # imports redis, needed only then
    except ImportError as exc:
        raise ValueError(
            f"REWARD_API_CACHE_REDIS_URL is set but the redis package is not there ({exc}): "
            "pip install 'reward-service[server]', or unset REWARD_API_CACHE_REDIS_URL"
        ) from None
    return SharedCache(lru, config, metrics, encode_grades, decode_grades)


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


def _item_labels(graded: _Graded) -> tuple[str, str]:
    """reward_items' labels: task (a bounded set) and status."""
    return (graded.item.task if graded.item and graded.item.task in TASKS else "unknown", graded.status)


def _reported_components(profile: Profile) -> list[str]:
    return ["accuracy", *(name for name in profile.weights if name != "accuracy")]


def _from_text_grades(item: RewardItem, grades: TextGrades, cached: bool) -> _Graded:
    return _Graded(item, status=grades.status, scores=grades.scores, reason=grades.reason, cached=cached)


def _internal_error(index: int, exc: Exception, item_id: str | int | None) -> _Graded:
    """A bug while grading one item is this item's `error`, never its batch's failure."""
    log.error("grading items[%d] failed inside the service", index, exc_info=exc)
    return _Graded(
        None, status="error", item_id=item_id, reason=f"items[{index}]: internal error ({type(exc).__name__})"
    )


def _pieces(items: list[_T], workers: int) -> list[list[_T]]:
    """`items` in chunks of at most CHUNK_ITEMS and even sizes, at least one per worker while items last."""
    if not items:
        return []
    count = max(math.ceil(len(items) / CHUNK_ITEMS), min(len(items), workers))
    size = math.ceil(len(items) / count)
    return [items[i : i + size] for i in range(0, len(items), size)]


def _raw_id(raw: Any) -> str | int | None:
    """Echo the id of an item that failed validation, when it has a usable one."""
    item_id = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(item_id, str):
        return clean_text(item_id)
    return item_id if isinstance(item_id, int) and not isinstance(item_id, bool) else None


def _validation_reason(exc: ValidationError, index: int) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"items[{index}]{'.' + where if where else ''}: {first['msg']}"


def _profile_key(profile: Profile) -> bytes:
    """What of the profile can change a text grade: the text components it asks for and their settings, hashed
    (its JSON is ~700 characters: hashed once per batch, not once per item's key)."""
    return digest(",".join(profile.text_components()), profile.model_dump_json(include=set(SECTIONS)))


# Keys' JSON: one encoder for all (json.dumps with options builds one per call, which costs more than most encodings).
_KEY_JSON = json.JSONEncoder(sort_keys=True, default=str).encode


def _job_key(job: ItemJob, profile_key: bytes) -> bytes:
    """Everything that can change a text grade: task, texts, reference, and the components and settings
    (`_profile_key`, made once per batch)."""
    reference = _KEY_JSON(job.reference)
    return digest(job.task, job.completion, reference, job.prompt or "", job.target_language or "", profile_key)


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


def _member(graded: _Graded, profile: Profile) -> Member:
    """A group member; the same completion sent twice (padding, a retry) is the same sample."""
    assert graded.item is not None
    return Member(digest(graded.item.completion, str(graded.tokens)).hex(), graded.tokens, _correct(graded, profile))


def _group_relay(groups: GroupAssembler, config: Config, metrics: Metrics) -> GroupRelay:
    from reward_api.group_relay import GroupRelay  # imports redis, needed only with a shared Redis (as the cache)

    return GroupRelay(groups, config.cache_redis_url, metrics)


def _group_key(profile_json: str, group: str | int) -> str:
    """A group across requests and replicas: its name under one profile (the same name under another profile is
    another group), hashed to a fixed size."""
    return digest(profile_json, _KEY_JSON(group)).hex()


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
