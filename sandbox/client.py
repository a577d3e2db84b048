"""RemoteJudge: the JudgeBackend of sandbox/judge.py, answered by one or several sandbox services.

    judge = RemoteJudge(["http://sandbox-1:8080", "http://sandbox-2:8080"])
    report = judge.judge("python", code, suite, Limits(time_s=1))

Requests go round-robin over the URLs. A URL that refuses the connection, drops it or
answers 5xx is skipped (and tried last for a while); a single URL is tried twice (a
Service name: the second try may reach another sandbox); SandboxUnavailable is raised
when none answers. A 4xx means the request itself is wrong: ValueError, as LocalJudge
raises for the same input. One connection pool per process (workers may fork).
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Sequence
from typing import Any

import httpx

from sandbox.executor import Limits
from sandbox.files import FilePathError
from sandbox.judge import JudgeReport, TestSuite
from sandbox.languages import LanguageUnavailable
from sandbox.wire import limits_to_dict, report_from_dict, suite_to_dict

# Beyond a run's total_s: how long a request may wait for a free sandbox (the service admits by it).
QUEUE_MARGIN_S = 60.0

# Failures where the sandbox never ran the request (or died running it): another URL may.
_FAIL_OVER = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


class SandboxUnavailable(RuntimeError):
    """No sandbox service answered."""


class RemoteJudge:
    def __init__(
        self,
        urls: str | Sequence[str],
        token: str | None = None,
        queue_margin_s: float = QUEUE_MARGIN_S,
        down_for_s: float = 10.0,  # a URL that failed goes last for this long
        max_connections: int = 64,
    ) -> None:
        self.urls = [url.rstrip("/") for url in ([urls] if isinstance(urls, str) else urls)]
        if not self.urls:
            raise ValueError("RemoteJudge needs at least one sandbox URL")
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.queue_margin_s = queue_margin_s
        self.down_for_s = down_for_s
        self.max_connections = max_connections
        self._turn = itertools.count()
        self._down_until: dict[str, float] = {}
        self._client: httpx.Client | None = None
        self._client_pid = 0

    def judge(
        self, language: str, code: str, suite: TestSuite, limits: Limits, stop_on_first_failure: bool = False
    ) -> JudgeReport:
        body = {
            "language": language,
            "code": code,
            "suite": suite_to_dict(suite),
            "limits": limits_to_dict(limits),
            "stop_on_first_failure": stop_on_first_failure,
        }
        return report_from_dict(self._request("/v1/judge", body, limits.total_s + self.queue_margin_s))

    def languages(self) -> dict[str, Any]:
        """A sandbox service's GET /v1/languages, with the URL that answered under `sandbox`."""
        answer, url = self._request("/v1/languages", None, 60.0, with_url=True)
        return answer | {"sandbox": url}

    def _request(self, path: str, body: dict[str, Any] | None, timeout_s: float, with_url: bool = False) -> Any:
        """POST `body` (GET when None) to the first sandbox that answers; with `with_url`, (answer, its URL)."""
        failures = []
        timeout = httpx.Timeout(timeout_s, connect=5.0)
        for url in self._order():
            try:
                if body is None:
                    response = self._http().get(url + path, timeout=timeout)
                else:
                    response = self._http().post(url + path, json=body, timeout=timeout)
            except _FAIL_OVER as exc:
                failures.append(f"{url}: {type(exc).__name__}: {exc}")
                self._down_until[url] = time.monotonic() + self.down_for_s
                continue
            except httpx.TimeoutException as exc:  # it took the run but did not answer: running it again won't help
                raise SandboxUnavailable(f"{url} did not answer within {timeout_s:.0f}s: {exc}") from exc
            if response.status_code >= 500:
                failures.append(f"{url}: HTTP {response.status_code}: {response.text[:200]}")
                self._down_until[url] = time.monotonic() + self.down_for_s
                continue
            if response.status_code >= 400:
                if _names_language(response):
                    raise LanguageUnavailable(f"the sandbox at {url} cannot run it: {_error_of(response)}")
                if (bad_path := _bad_path(response)) is not None:  # as a local judge raises it
                    raise FilePathError(bad_path)
                raise ValueError(f"sandbox rejected the request ({response.status_code}): {_error_of(response)}")
            return (response.json(), url) if with_url else response.json()
        raise SandboxUnavailable("no sandbox service answered: " + "; ".join(failures))

    def _order(self) -> list[str]:
        """Round-robin from this call's turn; URLs that failed recently go last. A single URL is tried twice:
        behind one Service name (Kubernetes, a load balancer) the second try reaches another sandbox."""
        start = next(self._turn) % len(self.urls)
        rotated = self.urls[start:] + self.urls[:start]
        now = time.monotonic()
        ordered = sorted(rotated, key=lambda url: self._down_until.get(url, 0.0) > now)
        return ordered if len(ordered) > 1 else ordered * 2

    def _http(self) -> httpx.Client:
        if self._client is None or self._client_pid != os.getpid():  # a forked child must not share sockets
            limits = httpx.Limits(max_connections=self.max_connections, max_keepalive_connections=self.max_connections)
            self._client = httpx.Client(headers=self.headers, limits=limits)
            self._client_pid = os.getpid()
        return self._client

    def close(self) -> None:
        if self._client is not None and self._client_pid == os.getpid():
            self._client.close()
        self._client = None

    def __getstate__(self) -> dict[str, Any]:  # picklable for process pools: the client is made anew there
        return self.__dict__ | {"_client": None, "_turn": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state | {"_turn": itertools.count()})

    def __enter__(self) -> RemoteJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _error_of(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:500]
    return str(body.get("error") or body.get("detail") or body) if isinstance(body, dict) else str(body)


def _bad_path(response: httpx.Response) -> str | None:
    """What the sandbox said of a file it cannot place (`bad_path`: one that would replace the program's source)."""
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        return None
    problems = detail if isinstance(detail, list) else []
    return next((str(problem.get("msg")) for problem in problems if problem.get("type") == "bad_path"), None)


def _names_language(response: httpx.Response) -> bool:
    """Whether a refusal is about the request's language (unknown, not enabled there, no toolchain)."""
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        return False
    return isinstance(detail, list) and any(problem.get("loc", [])[-1:] == ["language"] for problem in detail)
