"""The one error contract of both services: every 4xx and 5xx body is

    {"error": "<field>: <what went wrong and what to do>", "detail": [{"loc": [...], "msg": ..., "type": ...}]}

`error` is one line for people and logs; `detail` lists every problem for programs
(pydantic's validation errors, or one entry naming the limit that was hit).

ASGI middleware answers with `send_error`; an app raises `ApiError` and calls `install_error_handlers`,
which also turns FastAPI's own refusals (validation, 400, 404, 405) into this body.
`error_responses` documents the statuses an operation can answer in its OpenAPI schema.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException
from starlette.types import Send


class ErrorDetail(BaseModel):
    loc: list[str | int] = Field(description="Where the problem is: `body`, a field path, a header, a query parameter.")
    msg: str
    type: str = Field(description="A stable machine-readable kind, e.g. `missing`, `too_large`, `overloaded`.")


class ErrorBody(BaseModel):
    error: str = Field(description="`<field>: <what went wrong and what to do>`")
    detail: list[ErrorDetail] = Field(default_factory=list)


def error_body(error: str, detail: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"error": error, "detail": detail or []}


def one_detail(loc: list[str | int], msg: str, kind: str) -> list[dict[str, Any]]:
    return [{"loc": loc, "msg": msg, "type": kind}]


async def send_error(
    send: Send,
    status: int,
    error: str,
    detail: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> None:
    """Answer with the error contract straight from ASGI middleware (no app, no framework)."""
    payload = json.dumps(error_body(error, detail)).encode()
    raw_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw_headers += [(name.lower().encode(), value.encode()) for name, value in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})


def field_of(loc: Sequence[str | int]) -> str:
    """`profile.weights.format` for pydantic's ("body", "profile", "weights", "format"): the body is implied."""
    path = list(loc[1:] if loc and loc[0] == "body" else loc)
    return ".".join(str(part) for part in path) or "body"


def first_problem(detail: Sequence[Mapping[str, Any]]) -> str:
    """The contract's `error` line for these details: `<field>: <message>` of the first."""
    return f"{field_of(detail[0]['loc'])}: {detail[0]['msg']}"


def validation_detail(errors: Sequence[Mapping[str, Any]], prefix: Sequence[str | int] = ()) -> list[dict[str, Any]]:
    """Pydantic's errors as contract details, their locations under `prefix` (where the validated value sits)."""
    return [
        {"loc": [*prefix, *error["loc"]], "msg": error["msg"], "type": error["type"]}
        for error in map(_readable, errors)
    ]


def _readable(error: Mapping[str, Any]) -> Mapping[str, Any]:
    """FastAPI's JSON decode error puts the character offset where a field goes and the reason in ctx."""
    if error["type"] != "json_invalid":
        return error
    [*where, offset] = error["loc"]
    reason = error.get("ctx", {}).get("error", "decode error")
    return {
        "loc": where,
        "msg": f"not valid JSON ({reason} at character {offset}); send a JSON object",
        "type": error["type"],
    }


class ApiError(Exception):
    """A refusal raised by an endpoint or a dependency; answered with the contract by `install_error_handlers`."""

    def __init__(
        self,
        status: int,
        detail: list[dict[str, Any]],
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(first_problem(detail))
        self.status, self.detail, self.headers = status, detail, headers

    @classmethod
    def at(
        cls, status: int, loc: list[str | int], msg: str, kind: str, headers: dict[str, str] | None = None
    ) -> ApiError:
        """One problem at one place: `ApiError.at(413, ["body", "items"], "5000 items exceed ...", "too_many")`."""
        return cls(status, one_detail(loc, msg, kind), headers)


def error_response(status: int, detail: list[dict[str, Any]], headers: dict[str, str] | None = None) -> JSONResponse:
    """The contract's body: `error` says the first problem in one line, `detail` lists them all."""
    return JSONResponse(status_code=status, content=error_body(first_problem(detail), detail), headers=headers)


# What FastAPI's and Starlette's own refusals mean for a client of these services.
_HTTP_ERRORS: dict[int, tuple[str, str, str]] = {
    400: ("body", "could not be read as JSON (is it UTF-8?); send a UTF-8 JSON object", "unreadable_body"),
    404: ("path", "no such endpoint; the endpoints are listed at /docs", "not_found"),
    405: ("method", "not allowed on this endpoint; see /docs for its method", "method_not_allowed"),
}
_TOO_DEEP = (
    "is nested too deeply to read (JSON arrays and objects about 1,000 levels deep); send it nested less deeply",
    "too_deep",
)
_LONG_INTEGER = (
    f"holds an integer of more than {sys.get_int_max_str_digits():,} digits, more than JSON readers take; "
    "send a long integer as a string",
    "integer_too_long",
)


def install_error_handlers(app: FastAPI) -> None:
    """Every refusal the app itself makes follows the contract: ApiError, validation errors, FastAPI's 400,
    the router's 404 and 405. (A request refused before the app by middleware uses `send_error`.)"""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.detail, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, validation_detail(exc.errors()))

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
        where, msg, kind = _HTTP_ERRORS.get(exc.status_code, ("request", str(exc.detail), "refused"))
        if exc.status_code == 400 and isinstance(exc.__cause__, RecursionError):  # FastAPI's json.loads gave up
            msg, kind = _TOO_DEEP
        elif exc.status_code == 400 and "integer string conversion" in str(exc.__cause__):
            msg, kind = _LONG_INTEGER
        return error_response(exc.status_code, one_detail([where], msg, kind), exc.headers)


_STATUS_MEANINGS: dict[int, str] = {
    400: "The body could not be read (not UTF-8, nested too deeply, an integer too long), or the request has "
    "both Transfer-Encoding and Content-Length.",
    401: "A bearer token is configured and the request's `Authorization: Bearer <token>` is missing or wrong.",
    408: "The request body did not arrive within the service's body timeout, or arrived below its minimum rate.",
    413: "The request body or its number of items exceeds the service's limit; split it.",
    422: "The request is malformed; `error` names the first bad field, `detail` lists every problem.",
    500: "The service failed on this request (a bug: the log has the traceback).",
    503: "The service is at its limit of requests in flight; retry after `Retry-After` seconds.",
}
_RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}}}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for these error statuses of an operation, each with the ErrorBody schema."""
    responses: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        response: dict[str, Any] = {"model": ErrorBody, "description": _STATUS_MEANINGS[status]}
        if status == 503:
            response["headers"] = _RETRY_AFTER
        responses[status] = response
    return responses
