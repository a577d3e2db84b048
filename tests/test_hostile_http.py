"""Both services under hostile HTTP clients (issue 8, items 2, 5, 6, 10 and the error body of 11), on loopback.

Slow headers (slowloris), slow bodies, huge bodies, bursts of large bodies, clients that disconnect,
an exception escaping the app, load shedding and the trainer client's answer to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import resource
import select
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reward_api.local import LocalServer
from tests.scrape import metric
from trainer_client import RewardClient, RewardServiceError

MB = 1024 * 1024
HEADER_TIMEOUT_S = 2
TOKEN = "s3cret"


# Math the service once took its whole deadline on (issue 8, item 4) it now decides in under a second: a program
# that spins until its CPU time limit is what stays slow. Each copy differs, so none is answered from the cache.
SPIN = "```python\nwhile True:\n    pass\n```"


def spinning_code(copy: int) -> dict:
    return {
        "task": "code",
        "completion": SPIN + "\n" * copy,
        "reference": {"inputs": [""], "outputs": ["x"], "time_limit": 2},
    }


SMALL = {"items": [{"task": "math", "completion": "\\boxed{2}", "reference": "2"}]}


@pytest.fixture(scope="module")
def reward(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """Default limits but short header and body timeouts, so slow clients are cut off within the test."""
    env = {"REWARD_API_HEADER_TIMEOUT_S": str(HEADER_TIMEOUT_S), "REWARD_API_BODY_TIMEOUT_S": "2"}
    with LocalServer(
        tmp_path_factory.mktemp("reward"), REWARD_API_WORKERS="2", REWARD_API_ITEM_DEADLINE_S="10", **env
    ) as server:
        yield server


@pytest.fixture(scope="module")
def shedding(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """One work request at once and 20 connections; started with a low soft open-files limit it must raise."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(512, hard), hard))  # inherited by the server process
    try:
        server = LocalServer(
            tmp_path_factory.mktemp("shedding"),
            REWARD_API_WORKERS="1",
            REWARD_API_MAX_REQUESTS_IN_FLIGHT="1",
            REWARD_API_ADMISSION_WAIT_S="0",  # shed at once: tests/test_admission.py waits
            REWARD_API_MAX_CONNECTIONS="20",
        ).start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with LocalServer.sandbox(tmp_path_factory.mktemp("sandbox"), SANDBOX_WORKERS="1") as server:
        yield server


FAULTY_APP = '''
"""The reward service plus a route that raises: the only way to make its app fail on purpose."""
from reward_api.app import create_app
from service_kit.cli import configure_logging
from reward_api.config import Config
from service_kit.http_guard import serve

if __name__ == "__main__":
    config = Config.from_env()
    configure_logging(config.log_level)
    app = create_app(config)

    @app.get("/fault")
    async def fault() -> None:
        raise RuntimeError("injected fault")

    serve(app, config)
'''


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """A token, and the default body timeout (60 s) and minimum body rate (0.5 MB/s after 5 s)."""
    with LocalServer(tmp_path_factory.mktemp("guarded"), REWARD_API_WORKERS="1", REWARD_API_AUTH_TOKEN=TOKEN) as server:
        yield server


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    folder = tmp_path_factory.mktemp("faulty")
    (folder / "faulty_app.py").write_text(FAULTY_APP)
    with LocalServer(folder, module="faulty_app", PYTHONPATH=str(folder), REWARD_API_WORKERS="1") as server:
        yield server


def log_lines(server: LocalServer, message: str) -> list[dict]:
    lines = [json.loads(line) for line in server.log().splitlines() if line.startswith("{")]
    return [line for line in lines if message in line["message"]]


def peak_rss_mb(server: LocalServer) -> float:
    """The server process's peak resident memory so far (VmHWM)."""
    assert server.process is not None
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


def raw_request(server: LocalServer, head: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(head)
    return sock


def post_head(path: str, length: int, extra: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Type: application/json\r\n"
        f"{extra}Content-Length: {length}\r\n\r\n"
    ).encode()


def read_answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of the one answer on `sock` (`Connection: close`: the server closes it after)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode().split("\r\n")
    headers = {name.lower(): value.strip() for name, value in (line.split(":", 1) for line in header_lines)}
    return int(status_line.split()[1]), headers, body


# --- slow and stalled clients (item 6) -------------------------------------------------------------------


def test_slowloris_connections_are_closed_and_counted_while_normal_requests_are_answered(reward: LocalServer) -> None:
    sockets = [raw_request(reward, b"POST /v1/rewards HTTP/1.1\r\nHost: test\r\n") for _ in range(200)]
    opened = time.monotonic()
    with reward.client() as client:
        assert client.post("/v1/rewards", json=SMALL).status_code == 200  # answered meanwhile
    open_ = set(sockets)
    while open_ and time.monotonic() - opened < 30:
        for sock in list(open_):
            try:
                sock.send(b"X")  # one header byte at a time, each well within the timeout
            except OSError:  # reset: the server closed it
                open_.discard(sock)
        readable, _, _ = select.select(list(open_), [], [], 0.5)
        for sock in readable:
            try:
                closed = sock.recv(1) == b""
            except OSError:
                closed = True
            if closed:
                open_.discard(sock)
    closed_after_s = time.monotonic() - opened
    for sock in sockets:
        sock.close()
    assert not open_, f"{len(open_)} of 200 slow-header connections still open after {closed_after_s:.0f}s"
    time.sleep(1.5)  # the count is logged once a second at most
    counts = log_lines(reward, "sent no complete request headers")
    assert sum(line["closed"] for line in counts) >= 200
    assert len(counts) <= 10, "one line per batch of closed connections, not one per connection"
    assert all(line["header_timeout_s"] == HEADER_TIMEOUT_S for line in counts)


def test_slow_body_gets_408_and_the_connection_closes(reward: LocalServer) -> None:
    sock = raw_request(reward, post_head("/v1/rewards", 1000) + b'{"items": [')
    status, headers, body = read_answer(sock)  # the remaining 990 bytes never come
    assert status == 408 and headers["connection"] == "close"
    error = json.loads(body)
    assert error["error"].startswith("body: the request body did not arrive in time (11 bytes in 2.0 s")
    assert error["detail"][0]["type"] == "timeout"
    assert metric(reward, "reward_requests_total", code="408", endpoint="/v1/rewards") >= 1


def test_declared_bodies_that_never_come_lose_the_budget_at_the_minimum_rate(guarded: LocalServer) -> None:
    """Two sockets declaring 64 MB each hold the whole 128 MB in flight; they are cut off once their rate falls
    below the minimum (5 s), not after the 60 s body timeout, and the service takes other bodies again."""
    auth = f"Authorization: Bearer {TOKEN}\r\n"
    started = time.monotonic()
    holders = [raw_request(guarded, post_head("/v1/rewards", 64 * MB, auth)) for _ in range(2)]
    time.sleep(0.5)
    with guarded.client() as client:
        shed = client.post("/v1/rewards", json=SMALL, headers={"Authorization": f"Bearer {TOKEN}"})
    assert shed.status_code == 503, shed.text  # the budget is theirs while they are within the rate's grace
    for sock in holders:
        status, _, body = read_answer(sock)
        assert status == 408 and "MB/s after the first 5 s" in json.loads(body)["error"]
    assert time.monotonic() - started < 30, "cut off by the 60 s body timeout, not the minimum rate"
    with guarded.client() as client:
        again = client.post("/v1/rewards", json=SMALL, headers={"Authorization": f"Bearer {TOKEN}"})
    assert again.status_code == 200, again.text


def test_an_unauthorised_request_is_refused_from_its_headers_and_holds_no_budget(guarded: LocalServer) -> None:
    """No body byte is awaited before the 401, and declared bodies without the token take nothing from others."""
    strangers = [raw_request(guarded, post_head("/v1/rewards", 64 * MB)) for _ in range(3)]  # 192 MB declared
    for sock in strangers:
        status, headers, body = read_answer(sock)  # answered though not a byte of the body was sent
        assert status == 401 and headers["www-authenticate"] == "Bearer", body
        assert json.loads(body)["detail"][0]["loc"] == ["header", "authorization"]
    with guarded.client() as client:
        for scheme in ("Bearer", "bearer", "BEARER"):  # RFC 9110: the scheme is case-insensitive
            answer = client.post("/v1/rewards", json=SMALL, headers={"Authorization": f"{scheme} {TOKEN}"})
            assert answer.status_code == 200, (scheme, answer.text)
        assert client.post("/v1/rewards", json=SMALL, headers={"Authorization": "Basic s3cret"}).status_code == 401


def test_a_request_with_both_transfer_encoding_and_content_length_is_a_400(reward: LocalServer) -> None:
    """Two framings are how requests are smuggled past a proxy that reads the other one."""
    body = json.dumps(SMALL).encode()
    chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    sock = raw_request(reward, post_head("/v1/rewards", len(chunked), "Transfer-Encoding: chunked\r\n") + chunked)
    status, _, answer = read_answer(sock)
    assert status == 400, answer
    assert json.loads(answer)["detail"][0]["loc"] == ["header", "transfer-encoding"]


def test_a_json_integer_too_long_to_read_is_a_400_saying_so(reward: LocalServer) -> None:
    body = b'{"items": [{"task": "math", "completion": "x", "reference": ' + b"7" * 5000 + b"}]}"
    with reward.client() as client:
        answer = client.post("/v1/rewards", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"][0]["type"] == "integer_too_long"
    assert "send a long integer as a string" in answer.json()["error"]


def test_open_connections_are_capped_with_503(shedding: LocalServer) -> None:
    idle = [socket.create_connection(("127.0.0.1", shedding.port)) for _ in range(25)]
    try:
        time.sleep(0.5)  # let the server accept them all
        with shedding.client() as client:
            assert client.get("/healthz").status_code == 503
    finally:
        for sock in idle:
            sock.close()
    time.sleep(0.5)
    assert httpx.get(f"{shedding.url}/healthz").status_code == 200


def test_the_open_files_limit_is_raised_to_the_hard_limit_at_start(shedding: LocalServer) -> None:
    assert shedding.process is not None
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    limits = Path(f"/proc/{shedding.process.pid}/limits").read_text()
    server_soft = int(re.search(r"Max open files\s+(\d+)", limits).group(1))
    assert server_soft == hard
    [line] = log_lines(shedding, "open-files limit")
    assert line["nofile"] == hard and line["was"] == min(512, hard)


# --- bodies: size and memory (item 10) ------------------------------------------------------------------


def test_a_declared_huge_body_gets_413_before_it_is_sent(reward: LocalServer, sandbox: LocalServer) -> None:
    for server, path in ((reward, "/v1/rewards"), (sandbox, "/run_code")):
        status, headers, body = read_answer(raw_request(server, post_head(path, 200 * MB)))
        assert status == 413 and headers["connection"] == "close"
        assert json.loads(body)["detail"][0]["type"] == "too_large"


def test_sandbox_stops_reading_a_huge_streamed_body(sandbox: LocalServer) -> None:
    """One 200 MB body took the sandbox from 56 to 875 MB; now it stops at its 64 MB limit, chunked or not."""
    before = peak_rss_mb(sandbox)

    def chunks() -> Iterator[bytes]:
        yield b'{"language": "python", "code": "'
        for _ in range(200):
            yield b"x" * MB

    try:
        status = httpx.post(f"{sandbox.url}/run_code", content=chunks(), timeout=60).status_code
    except httpx.WriteError:  # the server answered and closed while the client was still sending
        status = 413
    assert status == 413
    assert peak_rss_mb(sandbox) - before < 300, f"peak RSS {before:.0f} -> {peak_rss_mb(sandbox):.0f} MB"
    assert metric(sandbox, "sandbox_requests_total", code="413", endpoint="/run_code") >= 1


def test_a_burst_of_large_bodies_is_shed_before_it_is_buffered(reward: LocalServer) -> None:
    """8 x 60 MB at once took 1.37 GB; now only what fits in max_body_mb_in_flight (128 MB) is read."""
    size = 60 * MB
    body = b'{"items": "' + b"x" * (size - 13) + b'"}'
    before = peak_rss_mb(reward)
    sockets = [raw_request(reward, post_head("/v1/rewards", size)) for _ in range(8)]  # all declared first
    answers: list[tuple[int, dict[str, str], bytes]] = [(0, {}, b"")] * 8

    def send(index: int) -> None:
        with contextlib.suppress(OSError):  # refused: the server closed it
            sockets[index].sendall(body)
        answers[index] = read_answer(sockets[index])

    threads = [threading.Thread(target=send, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    statuses = sorted(status for status, _, _ in answers)
    assert statuses == [422, 422] + [503] * 6, statuses  # two fit in 128 MB; the app refuses their content
    for status, headers, answer in answers:
        if status == 503:
            assert int(headers["retry-after"]) >= 1
            assert json.loads(answer)["error"].startswith("server: overloaded")
    grew = peak_rss_mb(reward) - before
    assert grew < 900, f"peak RSS grew {grew:.0f} MB for 2 admitted bodies of 60 MB"


# --- disconnects (item 5) --------------------------------------------------------------------------------


def test_a_disconnected_request_stops_being_graded(reward: LocalServer) -> None:
    with reward.client() as client:
        [spun] = client.post("/v1/rewards", json={"items": [spinning_code(0)]}).json()["results"]
    assert spun["details"]["accuracy"]["verdicts"] == {"time_limit": 1}  # it is slow indeed: 2 s of CPU or more
    before = metric(reward, "reward_items_total", task="code")
    # 20 items of >= 2 s on 2 workers: >= 20 s of work for a client that gives up after 1 s.
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{reward.url}/v1/rewards", json={"items": [spinning_code(i) for i in range(1, 21)]}, timeout=1)
    with reward.client(timeout=60) as client:
        [small] = client.post("/v1/rewards", json=SMALL).json()["results"]
    # Behind the abandoned items it would wait for their 20 s of work.
    assert small["status"] == "ok" and small["reward"] == 1.0, small
    assert metric(reward, "reward_items_total", task="code") == before, "items of the abandoned request were graded"
    assert metric(reward, "reward_requests_total", code="499", endpoint="/v1/rewards") == 1
    assert log_lines(reward, "client disconnected before the answer; its work was cancelled")


def test_a_disconnected_run_code_frees_its_worker_when_the_run_ends(sandbox: LocalServer) -> None:
    sleeper = {"language": "python", "code": "import time; time.sleep(3); print('late')", "run_timeout": 10}
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{sandbox.url}/run_code", json=sleeper, timeout=1)
    assert httpx.get(f"{sandbox.url}/healthz", timeout=5).status_code == 200
    quick = {"language": "python", "code": "print('hi')"}
    answer = httpx.post(f"{sandbox.url}/run_code", json=quick, timeout=30).json()  # waits for the one worker
    assert answer["status"] == "Success" and answer["run_result"]["stdout"] == "hi\n"
    assert metric(sandbox, "sandbox_requests_total", code="499", endpoint="/run_code") >= 1
    assert metric(sandbox, "sandbox_runs_in_flight") == 0


# --- 500s are visible (item 2) and use the error body (item 11) --------------------------------------------


def test_an_exception_in_the_app_is_a_logged_and_counted_500_with_the_error_body(faulty: LocalServer) -> None:
    answer = httpx.get(f"{faulty.url}/fault")
    assert answer.status_code == 500
    assert answer.json()["error"].startswith("server: internal error")
    assert answer.json()["detail"][0]["type"] == "internal_error"
    assert metric(faulty, "reward_requests_total", code="500", endpoint="other") == 1
    [failed] = log_lines(faulty, "request failed")
    assert "RuntimeError: injected fault" in failed["exception"]
    requests = [line for line in log_lines(faulty, "request") if line["message"] == "request"]
    assert [line["status"] for line in requests if line["path"] == "/fault"] == [500]
    assert httpx.get(f"{faulty.url}/healthz").status_code == 200


# --- load shedding and Retry-After (item 10) ---------------------------------------------------------------


def _hold_the_only_slot(server: LocalServer) -> socket.socket:
    """A request whose body never finishes: it holds the server's one work slot until the socket closes."""
    sock = raw_request(server, post_head("/v1/rewards", 100) + b"{")
    time.sleep(0.5)
    return sock


def test_load_beyond_the_in_flight_cap_is_shed_with_retry_after(shedding: LocalServer) -> None:
    holder = _hold_the_only_slot(shedding)
    try:
        shed = httpx.post(f"{shedding.url}/v1/rewards", json=SMALL)
        assert shed.status_code == 503 and int(shed.headers["retry-after"]) >= 1
        assert shed.json()["detail"][0]["type"] == "overloaded"
        assert httpx.get(f"{shedding.url}/readyz").status_code == 200  # probes are never shed
    finally:
        holder.close()
    time.sleep(0.5)
    assert httpx.post(f"{shedding.url}/v1/rewards", json=SMALL).status_code == 200


def test_trainer_client_waits_as_long_as_retry_after_asks_and_says_so(shedding: LocalServer) -> None:
    async def grade(retries: int) -> list:
        async with RewardClient(shedding.url, retries=retries, backoff_s=0.01) as client:
            return await client.grade(SMALL["items"])

    holder = _hold_the_only_slot(shedding)
    try:
        started = time.monotonic()
        with pytest.raises(RewardServiceError, match=r"HTTP 503 \(Retry-After \d+ s.*asked to retry later"):
            asyncio.run(grade(retries=2))
        assert time.monotonic() - started >= 2  # two waits of Retry-After >= 1 s; its own backoff is 0.01 s
        threading.Timer(1.5, holder.close).start()  # the slot frees while the client waits
        [result] = asyncio.run(grade(retries=5))
        assert result.reward == 1.0
    finally:
        holder.close()
