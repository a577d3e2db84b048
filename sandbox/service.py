"""The sandbox as an HTTP service: native judging, SandboxFusion's /run_code, health and metrics.

    POST /v1/judge   {"language", "code", "suite", "limits", "stop_on_first_failure"} -> JudgeReport
    POST /run_code   SandboxFusion's request and response (sandbox/fusion.py)
    GET  /healthz, /readyz, /metrics

Judging blocks on subprocesses, so it runs in a bounded thread pool (one sandbox per
thread at a time; the executor spawns a sandbox per call and is safe to share): the
event loop keeps answering /healthz while hostile programs spin in every thread.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from reward_api.config import settings_from_env
from sandbox import fusion
from sandbox.executor import Executor, Limits, TestInput
from sandbox.isolation import Isolation
from sandbox.judge import JudgeReport, LocalJudge, StdioTest, TestSuite
from sandbox.languages import Language, get_language
from sandbox.wire import JudgeRequest, describe

log = logging.getLogger("sandbox.http")
T = TypeVar("T")
_KNOWN_PATHS = {"/v1/judge", "/run_code", "/healthz", "/readyz", "/metrics"}
_RUN_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


@dataclass(frozen=True)
class ServiceConfig:
    """Each field reads `SANDBOX_<FIELD>` (e.g. `SANDBOX_WORKERS=4`); CLI flags override."""

    host: str = "127.0.0.1"
    port: int = 8080  # SandboxFusion's port
    workers: int = 0  # sandboxes running at once; 0 = one per CPU core
    parallel: int = 0  # tests of one run at once inside its sandbox; 0 = one per CPU core
    isolation: str = "bwrap"  # or "none": no isolation at all, trusted code only
    run_code_memory_mb: int = 1024  # /run_code's memory bound when memory_limit_MB <= 0 (unlimited there)
    auth_token: str = ""  # when set, /v1/judge and /run_code need `Authorization: Bearer <token>`
    log_level: str = "info"

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
        self.in_flight = Gauge("sandbox_runs_in_flight", "Sandboxes running now", registry=r)
        self.waiting = Gauge("sandbox_runs_waiting", "Runs waiting for a free worker thread", registry=r)
        self.workers = Gauge("sandbox_workers", "Worker threads (sandboxes at once)", registry=r)
        self.errors = Counter(
            "sandbox_errors", "Runs that failed on the sandbox side", ["endpoint", "kind"], registry=r
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _Runner:
    """The bounded thread pool where blocking sandbox runs happen, with their metrics."""

    def __init__(self, config: ServiceConfig, metrics: SandboxMetrics) -> None:
        self.executor = Executor(Isolation(config.isolation), parallel=config.parallel or None)
        self.judge = LocalJudge(self.executor)
        self.pool = ThreadPoolExecutor(config.worker_count(), thread_name_prefix="sandbox")
        self.metrics = metrics
        metrics.workers.set(config.worker_count())

    async def call(self, endpoint: str, language: str, work: Callable[[], T]) -> T:
        self.metrics.waiting.inc()

        def timed() -> T:
            self.metrics.waiting.dec()
            self.metrics.in_flight.inc()
            started = time.perf_counter()
            try:
                return work()
            finally:
                self.metrics.in_flight.dec()
                self.metrics.run_seconds.labels(endpoint, language).observe(time.perf_counter() - started)

        return await asyncio.get_running_loop().run_in_executor(self.pool, timed)


def create_app(config: ServiceConfig | None = None) -> FastAPI:
    """Raises IsolationUnavailable when the host cannot isolate as `config.isolation` asks."""
    config = config or ServiceConfig.from_env()
    metrics = SandboxMetrics()
    runner = _Runner(config, metrics)
    state: dict[str, Any] = {"ready": False, "reason": "starting"}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if runner.executor.isolation is Isolation.NONE:
            log.warning("INSECURE: isolation 'none': programs run unsandboxed on this host; trusted code only")
        state.update(await _self_test(runner))
        log.info("ready" if state["ready"] else "not ready", extra=state | {"workers": config.worker_count()})
        yield
        runner.pool.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(
        title="Code sandbox",
        description="Isolated execution and test-case judging of untrusted programs; SandboxFusion-compatible.",
        lifespan=lifespan,
    )

    @app.middleware("http")
    async def record(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        started = time.perf_counter()
        response = await call_next(request)
        endpoint = request.url.path if request.url.path in _KNOWN_PATHS else "other"
        metrics.requests.labels(endpoint, str(response.status_code)).inc()
        ms = (time.perf_counter() - started) * 1e3
        log.info("request", extra={"path": request.url.path, "status": response.status_code, "ms": ms})
        return response

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        detail = [{"loc": e["loc"], "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        return JSONResponse(status_code=422, content={"error": describe(exc.errors()), "detail": detail})

    def authorize(request: Request) -> None:
        supplied = request.headers.get("authorization", "").encode()
        if config.auth_token and not secrets.compare_digest(supplied, f"Bearer {config.auth_token}".encode()):
            raise HTTPException(401, "missing or wrong bearer token (header `Authorization: Bearer <token>`)")

    @app.post("/v1/judge", dependencies=[Depends(authorize)])
    async def judge(body: JudgeRequest) -> dict[str, Any]:
        """Run `code` against `suite` in a fresh sandbox; one verdict per test."""
        language = get_language(body.language).name
        suite, limits = body.to_suite(), body.to_limits()

        def work() -> JudgeReport:
            return runner.judge.judge(language, body.code, suite, limits, body.stop_on_first_failure)

        try:
            report = await runner.call("/v1/judge", language, work)
        except Exception as exc:  # 500: RemoteJudge tries another sandbox
            metrics.errors.labels("/v1/judge", "exception").inc()
            log.exception("judge failed", extra={"language": language})
            raise HTTPException(500, f"the sandbox failed: {exc}") from exc
        _count_report(metrics, language, report)
        return report.to_dict()

    @app.post("/run_code", dependencies=[Depends(authorize)])
    async def run_code(body: fusion.RunCodeRequest) -> dict[str, Any]:
        """SandboxFusion's run_code: compile, run once with `stdin`, report both stages."""
        lang = body.resolve_language()
        if lang is None:
            answer = fusion.unsupported(body.language)
        else:
            answer = await _run_fusion(runner, body, lang, body.limits(config.run_code_memory_mb))
        metrics.runs.labels("/run_code", lang.name if lang else "unsupported", answer["status"]).inc()
        return answer

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        body = {"ready": state["ready"], "reason": state["reason"], "isolation": config.isolation}
        return JSONResponse(status_code=200 if state["ready"] else 503, content=body)

    @app.get("/metrics")
    async def prometheus() -> Response:
        return Response(content=metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return app


async def _run_fusion(runner: _Runner, body: fusion.RunCodeRequest, lang: Language, limits: Limits) -> dict[str, Any]:
    tests = [TestInput(stdin=body.stdin or "")]
    try:
        execution = await runner.call(
            "/run_code", lang.name, lambda: runner.executor.run(lang, body.code, tests, limits)
        )
    except Exception as exc:  # SandboxFusion answers 200 SandboxError here, not 500
        runner.metrics.errors.labels("/run_code", "exception").inc()
        log.exception("run_code failed", extra={"language": lang.name})
        return fusion.response(None, fusion.sandbox_error_result(f"exception on running code: {exc}"))
    if execution.sandbox_error:
        runner.metrics.errors.labels("/run_code", "sandbox_error").inc()
    return fusion.run_code_response(lang, execution)


def _count_report(metrics: SandboxMetrics, language: str, report: JudgeReport) -> None:
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
            "self_test", "python", lambda: runner.judge.judge("python", "print('ok')", suite, Limits(time_s=5))
        )
    except Exception as exc:
        return {"ready": False, "reason": f"self-test failed: {exc}"}
    if report.passed != 1:
        return {"ready": False, "reason": f"self-test failed: {report.to_dict()}"}
    return {"ready": True, "reason": "self-test passed"}
