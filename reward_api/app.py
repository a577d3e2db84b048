"""The HTTP service: native batch API, OpenRLHF and slime endpoints, health and metrics."""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reward_api import __version__
from reward_api.compat import not_computed, openrlhf_answer, openrlhf_items, slime_item
from reward_api.config import Config
from reward_api.engine import RewardEngine
from reward_api.profiles import Profile, resolve_profile
from reward_api.schemas import (
    OpenRLHFRequest,
    OpenRLHFResponse,
    RewardRequest,
    RewardResponse,
    RewardResult,
    SlimeRequest,
)

log = logging.getLogger("reward_api.http")


def create_app(config: Config | None = None) -> FastAPI:
    config = config or Config.from_env()
    engine = RewardEngine(config)
    engine.metrics.workers.set(config.worker_count())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await engine.start()
        log.info("ready", extra={"workers": engine.pool.size, "deadline_s": config.item_deadline_s})
        yield
        await engine.close()

    app = FastAPI(
        title="Verifiable reward service",
        version=__version__,
        description="Rewards for RL on reasoning models: math, format, language, length and sort graders.",
        lifespan=lifespan,
    )
    app.state.engine = engine
    app.add_middleware(_RequestGuard, config=config, engine=engine)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        where = ".".join(str(p) for p in errors[0]["loc"] if p != "body") if errors else ""
        message = f"{where}: {errors[0]['msg']}" if errors else "invalid request"
        detail = [{"loc": e["loc"], "msg": e["msg"], "type": e["type"]} for e in errors]
        return JSONResponse(status_code=422, content={"error": message, "detail": detail})

    def authorize(request: Request) -> None:
        if not config.auth_token:
            return
        supplied = request.headers.get("authorization", "")
        if not secrets.compare_digest(supplied.encode(), f"Bearer {config.auth_token}".encode()):
            raise HTTPException(401, "missing or wrong bearer token (header `Authorization: Bearer <token>`)")

    def profile_or_422(spec: Any) -> Profile:
        try:
            return resolve_profile(spec if spec is not None else config.default_profile)
        except ValueError as exc:
            raise HTTPException(422, f"profile: {exc}") from exc

    def check_batch(count: int) -> None:
        if count > config.max_batch_items:
            raise HTTPException(
                413, f"items: {count} items exceed the limit of {config.max_batch_items}; split the batch"
            )

    @app.post("/v1/rewards", response_model=RewardResponse, dependencies=[Depends(authorize)])
    async def rewards(body: RewardRequest) -> RewardResponse:
        """Grade a batch; results come back in request order, one per item."""
        profile = profile_or_422(body.profile)
        check_batch(len(body.items))
        return RewardResponse(results=await engine.grade(body.items, profile))

    @app.post("/get_reward", response_model=OpenRLHFResponse, dependencies=[Depends(authorize)])
    async def openrlhf_get_reward(body: OpenRLHFRequest, profile: str | None = None) -> OpenRLHFResponse:
        """OpenRLHF remote reward (`--reward.remote_url http://host:port/get_reward`; `--remote_rm_url`
        before 0.10.2). `scores` are the accuracy in [0, 1] for its dynamic filtering; see
        `reward_api.compat.openrlhf_answer`."""
        resolved = profile_or_422(profile)
        check_batch(len(body.query))
        results = await engine.grade(openrlhf_items(body.query, body.prompts, body.labels), resolved)
        _log_not_computed("/get_reward", results)
        return OpenRLHFResponse(**openrlhf_answer(results))

    @app.post("/slime", dependencies=[Depends(authorize)])
    async def slime_reward(body: SlimeRequest, profile: str | None = None, reward_key: str | None = None) -> Any:
        """slime remote reward (`--rm-type remote_rm --rm-url http://host:port/slime`): a bare number,
        or with `?reward_key=K` an object holding the reward under K plus components, status and
        details (pair with slime's `--reward-key K`)."""
        resolved = profile_or_422(profile)
        [result] = await engine.grade([slime_item(body.prompt, body.response, body.label)], resolved)
        _log_not_computed("/slime", [result])
        if reward_key is None:
            return result.reward
        return {reward_key: result.reward, **_result_fields(result)}

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        ready = engine.ready
        body = {"ready": ready, "workers": engine.pool.alive, "want": engine.pool.size}
        return JSONResponse(status_code=200 if ready else 503, content=body)

    @app.get("/metrics")
    async def metrics() -> Response:
        return Response(content=engine.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return app


def _log_not_computed(endpoint: str, results: list[RewardResult]) -> None:
    """These endpoints answer bare numbers, which cannot carry a status: say here what was not graded."""
    message = not_computed(results)
    if message:
        log.warning("%s: %s; answered with the failure reward", endpoint, message)


def _result_fields(result: RewardResult) -> dict[str, Any]:
    return {"components": result.components, "status": result.status, "details": result.details}


_KNOWN_PATHS = {"/v1/rewards", "/get_reward", "/slime", "/healthz", "/readyz", "/metrics"}


class _RequestGuard:
    """Body-size limit (413 before the app reads a byte too many), request metrics and logs."""

    def __init__(self, app: ASGIApp, config: Config, engine: RewardEngine) -> None:
        self.app = app
        self.max_bytes = int(config.max_body_mb * 1024 * 1024)
        self.metrics = engine.metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        endpoint = scope["path"] if scope["path"] in _KNOWN_PATHS else "other"
        started = time.perf_counter()
        status = {"code": 500}

        async def send_and_record(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        body = await self._read_limited(scope, receive)
        if body is None:
            await _send_json(send_and_record, 413, {"error": f"request body exceeds {self.max_bytes} bytes"})
        else:
            await self.app(scope, _replay(body, receive), send_and_record)
        seconds = time.perf_counter() - started
        self.metrics.requests.labels(endpoint, str(status["code"])).inc()
        self.metrics.request_seconds.labels(endpoint).observe(seconds)
        log.info(
            "request",
            extra={"method": scope["method"], "path": scope["path"], "status": status["code"], "ms": seconds * 1e3},
        )

    async def _read_limited(self, scope: Scope, receive: Receive) -> bytes | None:
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            return None
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """Hand the app the body we already read, then the client's own messages (disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _send_json(send: Send, status: int, content: dict[str, Any]) -> None:
    payload = json.dumps(content).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
