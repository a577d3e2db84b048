"""The HTTP service: native batch API, OpenRLHF and slime endpoints, health and metrics."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Body, FastAPI, Query
from fastapi.responses import JSONResponse, Response
from fastapi_offline import FastAPIOffline
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import ValidationError

from reward_api import __version__
from reward_api.compat import grouped, not_computed, openrlhf_answer, openrlhf_items, slime_item, text_of
from reward_api.config import Config
from reward_api.engine import RewardEngine
from reward_api.profiles import PresetName, Profile, ProfileOverride, resolve_profile
from reward_api.schemas import (
    OPENRLHF_EXAMPLES,
    REWARDS_EXAMPLES,
    SLIME_EXAMPLES,
    CodeReadiness,
    NotReady,
    OpenRLHFRequest,
    OpenRLHFResponse,
    Readiness,
    RewardRequest,
    RewardResponse,
    RewardResult,
    SlimeKeyedResult,
    SlimeRequest,
    WithdrawRequest,
    WithdrawResponse,
)
from sandbox.client import RemoteJudge
from sandbox.languages import catalog, enabled_languages
from service_kit.errors import (
    ApiError,
    error_body,
    error_responses,
    install_error_handlers,
    one_detail,
    validation_detail,
)
from service_kit.http_guard import HttpLimits, RequestGuard

log = logging.getLogger("reward_api.http")

# What a grading request can be answered besides 200: the app's own refusals (400, 401, 413, 422) and the
# request guard's (408 slow body, 413 large body, 503 load shed, 500 a bug). No endpoint answers 429.
_WORK_ERRORS = error_responses(400, 401, 408, 413, 422, 500, 503)
# GET endpoints are never shed nor body-limited; only a bug answers an error.
_PROBE_ERRORS = error_responses(500)
# Allocations between the collector's young-generation passes in a serving process (Python's default: 700). A batch
# holds thousands of objects alive while it is graded, so each pass rescanned them: with the default, collections
# took a third of the front's CPU per cheap item. Cyclic garbage waits a little longer; most is freed at once.
SERVING_GC_THRESHOLD = 20_000
ProfileQuery = Annotated[
    PresetName | None, Query(description="A preset name; the service's default profile when absent.")
]
GroupSizeQuery = Annotated[
    int | None,
    Query(
        ge=1,
        le=65536,
        description="Samples per prompt (OpenRLHF's n_samples_per_prompt, slime's --n-samples-per-prompt): a prompt's "
        "samples are its group, completed across requests for group rewards (kimi_length).",
    ),
]
GroupWaitQuery = Annotated[
    float | None,
    Query(
        gt=0,
        le=3600,
        description="The most a sample waits for the rest of its group (seconds), at most REWARD_API_GROUP_WAIT_S.",
    ),
]


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

    # /docs and /redoc load Swagger UI and ReDoc from files in the fastapi-offline package, not from a CDN:
    # training clusters often have no internet. The validator badge would call out to swagger.io: off.
    app = FastAPIOffline(
        title="Verifiable reward service",
        version=__version__,
        description="Rewards for RL on reasoning models: math, format, language, length, sort and code graders. "
        'Every refusal is `{"error": "<field>: <what to do>", "detail": [...]}`.',
        lifespan=lifespan,
        swagger_ui_parameters={"validatorUrl": None},
    )
    app.state.engine = engine
    app.add_middleware(
        RequestGuard, limits=HttpLimits.of(config), requests=engine.metrics.requests,
        request_seconds=engine.metrics.request_seconds, known_paths=_KNOWN_PATHS, logger=log,
    )  # fmt: skip

    install_error_handlers(app)

    def profile_or_422(spec: ProfileOverride | str | None, loc: list[str | int]) -> Profile:
        """The request's profile, or a 422 naming the field at `loc` (where the request carried it)."""
        try:
            profile = resolve_profile(spec if spec is not None else config.default_profile)
        except ValidationError as exc:  # the preset with these overrides is not a valid profile
            raise ApiError(422, validation_detail(exc.errors(), loc)) from exc
        except ValueError as exc:  # an unknown preset
            raise ApiError.at(422, loc, str(exc), "unknown_profile") from exc
        verifier = profile.math.verifier
        if verifier is not None and not config.allows_verifier(verifier.base_url):
            message = (
                f"{verifier.base_url} is not a verifier server this service may call; "
                "its operator lists those in REWARD_API_MATH_VERIFIER_URLS"
            )
            raise ApiError.at(422, [*loc, "math", "verifier", "base_url"], message, "verifier_not_allowed")
        return profile

    def check_batch(count: int, loc: list[str | int]) -> None:
        if count > config.max_batch_items:
            message = f"{count} items exceed the limit of {config.max_batch_items}; split the batch"
            raise ApiError.at(413, loc, message, "too_many_items")

    @app.post(
        "/v1/rewards",
        summary="Grade a batch (native API)",
        response_model=RewardResponse,
        responses=_WORK_ERRORS,
    )
    async def rewards(body: Annotated[RewardRequest, Body(openapi_examples=REWARDS_EXAMPLES)]) -> RewardResponse:
        """Grade a batch; results come back in request order, one per item. An item that cannot be graded
        (unknown task, missing field) is a result with status `invalid`, never a failed batch."""
        profile = profile_or_422(body.profile, ["body", "profile"])
        check_batch(len(body.items), ["body", "items"])
        return RewardResponse(results=await engine.grade(body.items, profile, body.group_wait_s))

    @app.post(
        "/v1/groups/withdraw",
        summary="Withdraw samples that will not come",
        response_model=WithdrawResponse,
        responses=_WORK_ERRORS,
    )
    async def withdraw(body: WithdrawRequest) -> WithdrawResponse:
        """Samples of groups that will not come (an aborted or filtered rollout): each group's component is
        computed over the samples that came, at once when they are all in, instead of after the group wait."""
        profile = profile_or_422(body.profile, ["body", "profile"])
        for withdrawal in body.groups:
            await engine.withdraw(withdrawal.group, withdrawal.group_size, withdrawal.samples, profile)
        return WithdrawResponse(withdrawn=sum(withdrawal.samples for withdrawal in body.groups))

    @app.post(
        "/get_reward",
        summary="OpenRLHF remote reward",
        response_model=OpenRLHFResponse,
        responses=_WORK_ERRORS,
    )
    async def openrlhf_get_reward(
        body: Annotated[OpenRLHFRequest, Body(openapi_examples=OPENRLHF_EXAMPLES)],
        profile: ProfileQuery = None,
        group_size: GroupSizeQuery = None,
        group_wait_s: GroupWaitQuery = None,
    ) -> OpenRLHFResponse:
        """OpenRLHF remote reward (`--reward.remote_url http://host:port/get_reward`; `--remote_rm_url`
        before 0.10.2). `scores` are the accuracy in [0, 1] for its dynamic filtering; see
        `reward_api.compat.openrlhf_answer`."""
        resolved = profile_or_422(profile, ["query", "profile"])
        check_batch(len(body.query), ["body", "query"])
        items = openrlhf_items(body.query, body.prompts, body.labels, group_size)
        results = await engine.grade(items, resolved, group_wait_s)
        _log_not_computed("/get_reward", results)
        return OpenRLHFResponse(**openrlhf_answer(results))

    @app.post(
        "/slime",
        summary="slime remote reward",
        response_model=float | SlimeKeyedResult,
        responses=_WORK_ERRORS,
    )
    async def slime_reward(
        body: Annotated[SlimeRequest, Body(openapi_examples=SLIME_EXAMPLES)],
        profile: ProfileQuery = None,
        group_size: GroupSizeQuery = None,
        group_wait_s: GroupWaitQuery = None,
        reward_key: Annotated[
            str | None, Query(description="Answer an object with the reward under this key (slime's --reward-key).")
        ] = None,
    ) -> float | SlimeKeyedResult:
        """slime remote reward (`--rm-type remote_rm --rm-url http://host:port/slime`): a bare number,
        or with `?reward_key=K` an object holding the reward under K plus components, status and
        details (pair with slime's `--reward-key K`)."""
        if reward_key in SlimeKeyedResult.model_fields:
            message = f"{reward_key!r} is a field of the answer and would hide the reward; pick another key"
            raise ApiError.at(422, ["query", "reward_key"], message, "reserved_key")
        resolved = profile_or_422(profile, ["query", "profile"])
        item = grouped(slime_item(body.prompt, body.response, body.label), text_of(body.prompt), group_size)
        [result] = await engine.grade([item], resolved, group_wait_s)
        _log_not_computed("/slime", [result])
        if reward_key is None:
            return result.reward
        return SlimeKeyedResult(**{reward_key: result.reward}, **_result_fields(result))

    @app.get("/v1/languages")
    def languages() -> dict[str, Any]:
        """The languages code items may use: in-process grading's (SANDBOX_LANGUAGES), with each toolchain's
        version, test modes and limits; with REWARD_API_SANDBOX_URLS, the first sandbox service that answers."""
        if engine.sandbox.urls:
            with RemoteJudge(engine.sandbox.urls, engine.sandbox.token or None) as sandboxes:
                return sandboxes.languages()
        return {"languages": catalog([lang.name for lang in enabled_languages()])}

    @app.get("/healthz", responses=_PROBE_ERRORS)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/readyz",
        response_model=Readiness,
        responses={503: {"model": NotReady, "description": "Grading workers starting or failing to."}, **_PROBE_ERRORS},
    )
    async def readyz() -> JSONResponse:
        code = CodeReadiness(
            available=engine.code.available, isolation=engine.code.isolation, detail=engine.code.detail
        )
        readiness = Readiness(
            ready=engine.ready, workers=engine.pool.alive, want=engine.pool.size, code=code
        ).model_dump()
        if readiness["ready"]:
            return JSONResponse(readiness)
        message = f"{readiness['workers']} of {readiness['want']} grading workers are up; retry when this answers 200"
        body = error_body(f"workers: {message}", one_detail(["workers"], message, "not_ready"))
        return JSONResponse(status_code=503, content=body | readiness)

    @app.get(
        "/metrics",
        response_class=Response,  # no JSON media type: 200 is documented as text, errors as JSON
        responses={
            200: {
                "description": "Prometheus text exposition format.",
                "content": {"text/plain": {"schema": {"type": "string"}}},
            },
            **_PROBE_ERRORS,
        },
    )
    async def metrics() -> Response:
        return Response(content=engine.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return app


def settle_heap() -> None:
    """Make the collector cheap for a serving process: what is alive once the app is built (modules, graders'
    tables, schemas: ~130,000 objects) lives as long as the process, so it is frozen out of every collection
    (the full ones rescanned it all), and young collections run less often (SERVING_GC_THRESHOLD)."""
    gc.collect()  # what is garbage now is not frozen with the rest
    gc.freeze()
    gc.set_threshold(SERVING_GC_THRESHOLD, *gc.get_threshold()[1:])


def _log_not_computed(endpoint: str, results: list[RewardResult]) -> None:
    """These endpoints answer bare numbers, which cannot carry a status: say here what was not graded."""
    message = not_computed(results)
    if message:
        log.warning("%s: %s; answered with the failure reward", endpoint, message)


def _result_fields(result: RewardResult) -> dict[str, Any]:
    return {"components": result.components, "status": result.status, "details": result.details}


_KNOWN_PATHS = frozenset(
    {"/v1/rewards", "/v1/groups/withdraw", "/get_reward", "/slime", "/v1/languages", "/healthz", "/readyz", "/metrics"}
)
