"""The sandbox as an HTTP service: native judging, SandboxFusion's /run_code, health and metrics.

    POST /v1/judge   {"language", "code", "suite", "limits", "stop_on_first_failure"} -> JudgeReport
    POST /run_code   SandboxFusion's request and response (sandbox/fusion.py)
    POST /run_jupyter   SandboxFusion's notebook cells in one namespace (sandbox/jupyter.py)
    POST /v1/sessions, POST /v1/sessions/{id}/run, DELETE /v1/sessions/{id}   a kernel kept across requests
                     for tool-calling rollouts (sandbox/sessions.py)
    GET  /healthz, /readyz, /metrics

Judging blocks on subprocesses, so it runs in a bounded thread pool (one sandbox per
thread at a time; the executor spawns a sandbox per call and is safe to share): the
event loop keeps answering /healthz while hostile programs spin in every thread.

Admission: a run starts only while it can still finish before its client stops reading
(verl: compile_timeout + run_timeout + 10 s); otherwise the answer is a 504 with
Retry-After, which verl's client retries. Clients that send no headers (verl, the
`sandbox-fusion` package) may carry the token in the URL (`UrlToken`).

HTTP limits are the reward service's (service_kit/http_guard.py): body size and read time,
requests and body bytes in flight (503 + Retry-After beyond), header timeout, connection cap.
A client that disconnects cancels its request, and its run is killed at once (its worker
thread is free again as soon as the sandbox is torn down).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import os
import re
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode

from fastapi import FastAPI, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from pydantic import BaseModel, Field
from starlette.types import ASGIApp, Receive, Scope, Send

from sandbox import compile_cache, fusion, jupyter
from sandbox.client import QUEUE_MARGIN_S
from sandbox.compile_cache import CompileCache
from sandbox.executor import Cancel, Execution, Executor, Limits, TestInput
from sandbox.files import FilePathError, fetch_paths, sandbox_path
from sandbox.isolation import Isolation
from sandbox.judge import JudgeReport, LocalJudge, StdioTest, TestSuite
from sandbox.languages import (
    Language,
    LanguageError,
    catalog,
    get_language,
    missing_toolchains,
    parse_languages,
)
from sandbox.sessions import SessionLimits, Sessions, SessionsFull, UnknownSession
from sandbox.wire import JudgeRequest
from service_kit.errors import ApiError, error_response, validation_detail
from service_kit.http_guard import HttpLimits, RequestGuard
from service_kit.settings import HttpSettings, settings_from_env

log = logging.getLogger("sandbox.http")
T = TypeVar("T")
_KNOWN_PATHS = frozenset({"/v1/judge", "/run_code", "/run_jupyter", "/v1/languages", "/healthz", "/readyz", "/metrics"})
_RUN_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
# RemoteJudge reads for the run's total_s plus its queue margin: a /v1/judge request may wait that
# long for a worker, less the sandbox's start-up.
_JUDGE_START_WITHIN_S = QUEUE_MARGIN_S - fusion.START_UP_S
_PATH_TOKEN = re.compile(r"^/token/([^/]+)(/.*)$")


@dataclass(frozen=True)
class ServiceConfig(HttpSettings):
    """Each field reads `SANDBOX_<FIELD>` (e.g. `SANDBOX_WORKERS=4`); CLI flags override. The HTTP settings
    (body limits, timeouts, in-flight caps) are the reward service's, with the same defaults but the requests in
    flight."""

    port: int = 8080  # SandboxFusion's port
    # Runs queue for a worker within their client's deadline, a 504 beyond it (which verl's scorer retries; it
    # takes a 503 for a failed run): so more may be in flight than the reward service's 256. verl's scorer at its
    # defaults sends 8 workers x 64 at once; this is the connection cap.
    max_requests_in_flight: int = 1024
    workers: int = 0  # sandboxes running at once; 0 = one per CPU core
    parallel: int = 0  # tests of one run at once inside its sandbox; 0 = one per CPU core
    # bwrap (namespaces + cgroup bounds), bwrap-rlimits (cgroups where writable, else per-process rlimits: weaker)
    # or none (no isolation at all, trusted code only): README "Isolation levels"
    isolation: str = "bwrap"
    run_code_memory_mb: int = 1024  # /run_code's memory bound when memory_limit_MB <= 0 (unlimited there)
    # Languages served: comma-separated ids, `default` (python, c, cpp, java, javascript, go, rust) or `all`;
    # the same variable (SANDBOX_LANGUAGES) sets in-process grading's (sandbox/languages)
    languages: str = "default"
    # Compiled programs kept for identical ones (sandbox/compile_cache.py): the bound (0: off) and the directory
    # (empty: <temporary directory>/reward-sandbox-compile-<uid>); in-process grading reads the same variables
    compile_cache_mb: int = compile_cache.DEFAULT_MB
    compile_cache_dir: str = ""
    # auth_token (HttpSettings): the POST and DELETE endpoints need it, as the header or in the URL (UrlToken)
    log_level: str = "info"
    # Notebook sessions (sandbox/sessions.py): how many live at once, and the most a session may ask for (its default)
    max_sessions: int = 16
    session_memory_mb: int = 1024
    session_cpu_s: float = 600.0  # CPU seconds over a session's whole life
    session_idle_s: float = 600.0  # closed after this long without a request

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides: Any) -> ServiceConfig:
        return settings_from_env(cls, "SANDBOX_", environ, overrides)

    def worker_count(self) -> int:
        return self.workers if self.workers > 0 else (os.cpu_count() or 1)


class SandboxMetrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.requests = Counter(
            "sandbox_requests", "HTTP requests by endpoint and code", ["endpoint", "code"], registry=r
        )
        self.request_seconds = Histogram(
            "sandbox_request_seconds", "HTTP request latency", ["endpoint"], buckets=_RUN_BUCKETS, registry=r
        )
        self.runs = Counter(
            "sandbox_runs",
            "Sandbox runs by endpoint, language and outcome",
            ["endpoint", "language", "outcome"],
            registry=r,
        )
        self.tests = Counter(
            "sandbox_tests", "Judged tests by language and verdict", ["language", "verdict"], registry=r
        )
        self.run_seconds = Histogram(
            "sandbox_run_seconds",
            "Time of one sandbox run (compile and all tests)",
            ["endpoint", "language"],
            buckets=_RUN_BUCKETS,
            registry=r,
        )
        self.compile_cache = Counter(
            "sandbox_compile_cache",
            "Runs of compiled languages by whether their compile was kept from an identical program's (hit, miss)",
            ["language", "result"],
            registry=r,
        )
        self.in_flight = Gauge("sandbox_runs_in_flight", "Sandboxes running now", registry=r)
        self.waiting = Gauge("sandbox_runs_waiting", "Runs waiting for a free worker thread", registry=r)
        self.workers = Gauge("sandbox_workers", "Worker threads (sandboxes at once)", registry=r)
        self.errors = Counter(
            "sandbox_errors", "Runs that failed on the sandbox side", ["endpoint", "kind"], registry=r
        )
        self.cancelled = Counter(
            "sandbox_runs_cancelled", "Runs killed because their client went away", ["endpoint"], registry=r
        )
        self.rejected = Counter(
            "sandbox_rejected",
            "Requests answered 504 because no worker could start them in time for their client's deadline",
            ["endpoint", "reason"],
            registry=r,
        )

    def count_compile_cache(self, language: str, details: dict[str, Any]) -> None:
        if (result := details.get("compile_cache")) is not None:
            self.compile_cache.labels(language, result).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)


class Busy(Exception):
    """No worker can start this run in time for it to finish before its client stops reading: a 504."""

    def __init__(self, reason: str, start_within_s: float, waiting: int, workers: int, retry_after_s: int) -> None:
        super().__init__(
            f"the sandbox is busy: no worker could start this run within {start_within_s:.1f}s, the longest it may"
            f" wait and still finish before its client's deadline ({waiting} other runs waiting for {workers}"
            " workers); retry later"
        )
        self.reason = reason
        self.start_within_s = start_within_s
        self.waiting = waiting
        self.retry_after_s = retry_after_s


def earliest_start_s(ahead: int, workers: int, fastest_run_s: float | None) -> float:
    """When a run with `ahead` runs waiting before it can start on `workers` workers, at the earliest.

    A lower bound, not an average, on purpose: a run is refused at once only when the queue could not
    drain in time even if every run were as fast as the fastest yet; any other run waits until its time is
    up. verl retries a 504 only twice, 1 s and 2 s later: refused at once on an estimate, a run comes back
    to the same queue and ends as a 0 (12 runs of 7 s on 2 workers: 4 lost), while a 504 sent when its wait
    is over gives the retry a whole new deadline (all 12 pass).
    """
    return (ahead // workers) * (fastest_run_s or 0.0)


class _Runner:
    """Blocking sandbox runs on `workers` threads, each started in time for its client or refused with Busy.

    Runs wait for a worker on the event loop, first come first served, not in the thread pool's queue: a wait
    ends with Busy when the run could no longer finish before its client's deadline (its `start_within_s`),
    so no program runs for a client that has already given up (verl then scores it 0 as a read timeout).
    """

    def __init__(self, config: ServiceConfig, metrics: SandboxMetrics) -> None:
        self.executor = Executor(
            Isolation(config.isolation),
            parallel=config.parallel or None,
            languages=parse_languages(config.languages),
            compile_cache=CompileCache.configured(config.compile_cache_mb, config.compile_cache_dir),
        )
        self.judge = LocalJudge(self.executor)
        self.workers = config.worker_count()
        self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="sandbox")
        self.free_workers = asyncio.Semaphore(self.workers)
        self.waiting = 0
        self.fastest_run_s: float | None = None  # since start, the self-test included
        self.metrics = metrics
        metrics.workers.set(self.workers)

    async def call(self, endpoint: str, language: str, work: Callable[[Cancel], T], start_within_s: float) -> T:
        """`work(cancel)` on a worker thread; Busy when no worker is free within `start_within_s`.

        When the caller is cancelled (its client disconnected), the run is killed through `cancel`; its worker
        is released once the sandbox is torn down, so admission never counts a busy thread free.
        """
        await self._wait_for_worker(start_within_s)
        self.metrics.in_flight.inc()
        started = time.perf_counter()
        cancel = Cancel()
        run = asyncio.get_running_loop().run_in_executor(self.pool, work, cancel)
        run.add_done_callback(lambda _: self._finished(endpoint, language, time.perf_counter() - started))
        try:
            return await asyncio.shield(run)
        except asyncio.CancelledError:
            cancel.cancel()
            self.metrics.cancelled.labels(endpoint).inc()
            raise

    def _finished(self, endpoint: str, language: str, seconds: float) -> None:
        self.fastest_run_s = min(seconds, self.fastest_run_s or seconds)
        self.metrics.in_flight.dec()
        self.metrics.run_seconds.labels(endpoint, language).observe(seconds)
        self.free_workers.release()

    async def _wait_for_worker(self, start_within_s: float) -> None:
        if earliest_start_s(self.waiting, self.workers, self.fastest_run_s) > start_within_s:
            raise Busy("queue", start_within_s, self.waiting, self.workers, self._retry_after_s(start_within_s))
        self.waiting += 1
        self.metrics.waiting.inc()
        try:
            async with asyncio.timeout(start_within_s):
                await self.free_workers.acquire()
        except TimeoutError:
            others = self.waiting - 1
            raise Busy("expired", start_within_s, others, self.workers, self._retry_after_s(start_within_s)) from None
        finally:
            self.waiting -= 1
            self.metrics.waiting.dec()

    def _retry_after_s(self, start_within_s: float) -> int:
        return max(1, math.ceil(earliest_start_s(self.waiting, self.workers, self.fastest_run_s) - start_within_s))


class SessionCreate(BaseModel):
    """Body of POST /v1/sessions: each bound at most the service's (its default when absent)."""

    session_id: str | None = Field(
        None, pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="name it yourself to make a retried create safe"
    )
    memory_mb: int | None = Field(None, gt=0)
    cpu_s: float | None = Field(None, gt=0, description="CPU seconds over the session's whole life")
    idle_timeout_s: float | None = Field(None, gt=0)


class SessionRun(BaseModel):
    """Body of POST /v1/sessions/{id}/run: /run_jupyter's cells, timeouts and files, and an id that makes a retry
    safe."""

    cells: list[str]
    cell_timeout: float = Field(0, ge=0)
    total_timeout: float = Field(45, gt=0, le=3600)
    request_id: str | None = Field(None, max_length=128, description="a retry with the same id gets the same answer")
    files: fusion.Base64Files = Field({}, description="path -> base64 content, written before the cells run")
    fetch_files: list[str] = Field([], description="paths whose contents come back base64 in `files`")

    def placed_files(self, isolated: bool) -> dict[str, str]:
        """`files` by absolute sandbox path, null contents left out (paths checked before: _check_file_paths)."""
        return {sandbox_path(path, isolated): text for path, text in self.files.items() if text is not None}


def _session_limits(body: SessionCreate, config: ServiceConfig) -> SessionLimits:
    """The session's bounds: what it asks for, refused (422 naming the field) past the service's."""
    most = {
        "memory_mb": config.session_memory_mb,
        "cpu_s": config.session_cpu_s,
        "idle_timeout_s": config.session_idle_s,
    }
    for field, bound in most.items():
        asked = getattr(body, field)
        if asked is not None and asked > bound:
            raise ApiError.at(422, ["body", field], f"{asked:g} is above this sandbox's most, {bound:g}", "too_large")
    chosen = {field: getattr(body, field) or bound for field, bound in most.items()}
    return SessionLimits(**chosen)


def create_app(config: ServiceConfig | None = None) -> FastAPI:
    """Raises IsolationUnavailable when the host cannot isolate as `config.isolation` asks."""
    config = config or ServiceConfig.from_env()
    metrics = SandboxMetrics()
    runner = _Runner(config, metrics)
    state: dict[str, Any] = {"ready": False, "reason": "starting"}
    sessions = Sessions(runner.executor, config.max_sessions)
    session_threads = ThreadPoolExecutor(max(1, config.max_sessions), thread_name_prefix="session")

    async def close_idle_sessions() -> None:
        while True:
            await asyncio.sleep(1.0)
            await asyncio.get_running_loop().run_in_executor(session_threads, sessions.close_idle)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        level = runner.executor.level
        if level.isolation is Isolation.NONE:
            log.warning("INSECURE: isolation 'none': programs run unsandboxed on this host; trusted code only")
        elif level.cgroups is None:
            log.warning("isolation %s, chosen by the operator: no cgroup bounds the runs", level.describe())
        else:
            log.info("isolation %s", level.describe())
        missing = missing_toolchains(runner.executor.languages)
        for reason in missing.values():
            log.warning(reason)
        state["languages"] = [name for name in runner.executor.languages if name not in missing]
        state["languages_unavailable"] = missing
        state.update(await _self_test(runner))
        log.info("ready" if state["ready"] else "not ready", extra=state | {"workers": config.worker_count()})
        reaper = asyncio.get_running_loop().create_task(close_idle_sessions())
        yield
        reaper.cancel()
        await asyncio.to_thread(sessions.close_all)
        session_threads.shutdown(wait=False, cancel_futures=True)
        # Runs still going when the drain ended were cancelled with their requests (killed): wait for their
        # threads to tear the sandboxes down, so no run cgroup outlives the service.
        await asyncio.to_thread(runner.pool.shutdown, wait=True, cancel_futures=True)

    app = FastAPI(
        title="Code sandbox",
        description="Isolated execution and test-case judging of untrusted programs; SandboxFusion-compatible.",
        lifespan=lifespan,
    )

    app.add_middleware(
        RequestGuard, limits=HttpLimits.of(config), requests=metrics.requests,
        request_seconds=metrics.request_seconds, known_paths=_KNOWN_PATHS, logger=log,
        auth_hint="send the header `Authorization: Bearer <token>`, `?token=<token>` in the URL or a "
        "`/token/<token>` path prefix",
    )  # fmt: skip
    app.add_middleware(UrlToken)  # added last, so outermost: nothing else sees a token in the URL

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        # Code over the sandbox's source limit (wire.check_source_size: `too_large`) is a 413, as a body over its limit.
        status = 413 if any(e["type"] == "too_large" for e in exc.errors()) else 422
        return error_response(status, validation_detail(exc.errors()))

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.detail, exc.headers)

    @app.exception_handler(Busy)
    async def _busy(request: Request, exc: Busy) -> JSONResponse:
        metrics.rejected.labels(request.url.path, exc.reason).inc()
        log.warning(
            "rejected: no worker in time",
            extra={
                "path": request.url.path,
                "reason": exc.reason,
                "start_within_s": exc.start_within_s,
                "waiting": exc.waiting,
                "workers": runner.workers,
            },
        )
        headers = {"Retry-After": str(exc.retry_after_s)}
        return JSONResponse(status_code=504, content={"error": str(exc)}, headers=headers)

    @app.post("/v1/judge")
    async def judge(body: JudgeRequest) -> dict[str, Any]:
        """Run `code` against `suite` in a fresh sandbox; one verdict per test."""
        language = get_language(body.language).name
        suite, limits = body.to_suite(), body.to_limits()

        def work(cancel: Cancel) -> JudgeReport:
            return runner.judge.judge(language, body.code, suite, limits, body.stop_on_first_failure, cancel)

        try:
            report = await runner.call("/v1/judge", language, work, _JUDGE_START_WITHIN_S)
        except Busy:
            raise
        except LanguageError as exc:  # not enabled here or its toolchain missing: RemoteJudge says so per item
            raise ApiError.at(422, ["body", "language"], str(exc), "language_unavailable") from None
        except FilePathError as exc:  # a file where the program's own source goes: the request's fault, not ours
            raise ApiError.at(422, ["body", "suite", "files"], str(exc), "bad_path") from None
        except Exception as exc:  # 500: RemoteJudge tries another sandbox
            metrics.errors.labels("/v1/judge", "exception").inc()
            log.exception("judge failed", extra={"language": language})
            raise HTTPException(500, f"the sandbox failed: {exc}") from exc
        _count_report(metrics, language, report)
        return report.to_dict()

    @app.post("/run_code")
    async def run_code(body: fusion.RunCodeRequest) -> dict[str, Any]:
        """SandboxFusion's run_code: compile, run once with `stdin`, report both stages."""
        try:
            lang: Language | None = runner.executor.language(body.language)
        except LanguageError as exc:  # SandboxFusion's own ids included: its client reads the reason
            lang, answer = None, fusion.unsupported(str(exc))
        else:
            _check_file_paths(body, runner.executor.isolated)
            answer = await _run_fusion(runner, body, lang, body.limits(config.run_code_memory_mb))
        metrics.runs.labels("/run_code", lang.name if lang else "unsupported", answer["status"]).inc()
        return answer

    @app.post("/run_jupyter")
    async def run_jupyter(body: jupyter.RunJupyterRequest) -> dict[str, Any]:
        """SandboxFusion's run_jupyter: notebook cells in order in one Python namespace, sandboxed as /run_code."""
        _check_file_paths(body, runner.executor.isolated)
        marker = jupyter.new_marker()

        def work(cancel: Cancel) -> Execution:
            return runner.executor.run(
                "python", jupyter.DRIVER, [body.driver_input(marker)], body.limits(config.run_code_memory_mb),
                cancel=cancel, files=body.given_files(), fetch=body.fetch_files,
            )  # fmt: skip

        execution = await runner.call("/run_jupyter", "python", work, _JUDGE_START_WITHIN_S)
        answer = jupyter.run_jupyter_response(execution, marker)
        metrics.runs.labels("/run_jupyter", "python", answer["status"]).inc()
        return answer

    async def in_session_thread(work: Callable[[], T]) -> T:
        try:
            return await asyncio.get_running_loop().run_in_executor(session_threads, work)
        except UnknownSession as exc:
            raise ApiError.at(404, ["path", "session_id"], str(exc), "unknown_session") from exc
        except SessionsFull as exc:
            raise ApiError.at(503, ["body"], str(exc), "sessions_full", headers={"Retry-After": "5"}) from exc

    @app.post("/v1/sessions")
    async def create_session(body: SessionCreate) -> dict[str, Any]:
        """Open a notebook session: a Python kernel in a sandbox of its own, kept until closed or idle."""
        limits = _session_limits(body, config)
        session = await in_session_thread(lambda: sessions.create(body.session_id, limits))
        return {"session_id": session.id, "limits": dataclasses.asdict(session.limits)}

    @app.post("/v1/sessions/{session_id}/run")
    async def run_in_session(session_id: str, body: SessionRun) -> dict[str, Any]:
        """Run cells in the session's kernel, after the cells before them; answered as /run_jupyter's cells."""
        isolated = runner.executor.isolated
        _check_file_paths(body, isolated)
        files, fetch = body.placed_files(isolated), fetch_paths(body.fetch_files, isolated)
        session = await in_session_thread(lambda: sessions.get(session_id))
        return await in_session_thread(
            lambda: session.run(body.cells, body.cell_timeout, body.total_timeout, body.request_id, files, fetch)
        )

    @app.delete("/v1/sessions/{session_id}")
    async def close_session(session_id: str) -> dict[str, Any]:
        await in_session_thread(lambda: sessions.close(session_id))
        return {"closed": session_id}

    @app.get("/v1/languages")
    def languages() -> dict[str, Any]:
        """What this sandbox runs: each language's toolchain version, test modes and limits (README "Languages")."""
        return {"languages": catalog(runner.executor.languages)}

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        level = runner.executor.level
        body = {**state, "isolation": level.name, "isolation_detail": level.describe()}
        return JSONResponse(status_code=200 if state["ready"] else 503, content=body)

    @app.get("/metrics")
    async def prometheus() -> Response:
        return Response(content=metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return app


async def _run_fusion(runner: _Runner, body: fusion.RunCodeRequest, lang: Language, limits: Limits) -> dict[str, Any]:
    tests = [TestInput(stdin=body.stdin or "")]
    try:
        execution = await runner.call(
            "/run_code",
            lang.name,
            lambda cancel: runner.executor.run(
                lang, body.code, tests, limits, cancel=cancel, files=body.given_files(), fetch=body.fetch_files
            ),
            body.start_within_s(lang),
        )
    except Busy:
        raise
    except Exception as exc:  # SandboxFusion answers 200 SandboxError here, not 500
        runner.metrics.errors.labels("/run_code", "exception").inc()
        log.exception("run_code failed", extra={"language": lang.name})
        return fusion.response(None, fusion.sandbox_error_result(f"exception on running code: {exc}"))
    if execution.sandbox_error:
        runner.metrics.errors.labels("/run_code", "sandbox_error").inc()
    runner.metrics.count_compile_cache(lang.name, execution.details)
    return fusion.run_code_response(lang, execution)


def _check_file_paths(body: fusion.RunCodeRequest | jupyter.RunJupyterRequest | SessionRun, isolated: bool) -> None:
    """A 422 naming the first path of `files` or `fetch_files` the sandbox cannot place, before the run waits."""
    for field, paths in (("files", list(body.files)), ("fetch_files", body.fetch_files)):
        for index, path in enumerate(paths):
            try:
                sandbox_path(path, isolated)
            except FilePathError as exc:
                loc = ["body", field, path] if field == "files" else ["body", field, index]
                raise ApiError.at(422, loc, str(exc), "bad_path") from exc


def _count_report(metrics: SandboxMetrics, language: str, report: JudgeReport) -> None:
    metrics.count_compile_cache(language, report.details)
    for test in report.tests:
        metrics.tests.labels(language, str(test.verdict)).inc()
    if report.sandbox_error:
        outcome = "sandbox_error"
        metrics.errors.labels("/v1/judge", "sandbox_error").inc()
    elif report.compile_error is not None:
        outcome = "compile_error"
    else:
        outcome = "passed" if report.passed == len(report.tests) else "failed"
    metrics.runs.labels("/v1/judge", language, outcome).inc()


async def _self_test(runner: _Runner) -> dict[str, Any]:
    """One tiny program through the real sandbox before answering ready: a broken set-up shows at start."""
    suite = TestSuite(kind="stdio", tests=(StdioTest(input="", output="ok"),))
    try:
        report = await runner.call(
            "self_test",
            "python",
            lambda cancel: runner.judge.judge("python", "print('ok')", suite, Limits(time_s=5), cancel=cancel),
            _JUDGE_START_WITHIN_S,
        )
    except Exception as exc:
        return {"ready": False, "reason": f"self-test failed: {exc}"}
    if report.passed != 1:
        return {"ready": False, "reason": f"self-test failed: {report.to_dict()}"}
    return {"ready": True, "reason": "self-test passed"}


class UrlToken:
    """The token from the URL, for clients that send no headers: `?token=T` (verl posts to its
    `sandbox_fusion.url` as given) or a `/token/T` path prefix (the `sandbox-fusion` package appends
    `/run_code` to its endpoint). It is taken out of the URL, so routes and request logs never see it, and
    becomes the `Authorization: Bearer` header, unless the request has one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(_without_url_token(scope) if scope["type"] == "http" else scope, receive, send)


def _without_url_token(scope: Scope) -> Scope:
    token = None
    if match := _PATH_TOKEN.match(scope["path"]):
        token, path = match.groups()
        scope = scope | {"path": path, "raw_path": path.encode()}
    query = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
    if any(name == "token" for name, _ in query):
        token = next(value for name, value in query if name == "token")
        scope = scope | {"query_string": urlencode([(n, v) for n, v in query if n != "token"]).encode("latin-1")}
    if token is None or any(name == b"authorization" for name, _ in scope["headers"]):
        return scope
    return scope | {"headers": [*scope["headers"], (b"authorization", f"Bearer {token}".encode())]}
