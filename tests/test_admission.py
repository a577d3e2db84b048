"""Admission beyond the in-flight cap (service_kit/http_guard.py): a request waits for a slot, then is shed.

A burst of per-sample requests larger than REWARD_API_MAX_REQUESTS_IN_FLIGHT queues for the moments each takes
(slime's `remote_rm` raises on a 503 and does not retry); a slot held for good turns the wait into a 503 with
Retry-After at REWARD_API_ADMISSION_WAIT_S, and probes are never queued.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from reward_api.local import LocalServer

ITEM = {"task": "math", "completion": "\\boxed{4}", "reference": "4"}


@pytest.fixture(scope="module")
def two_slots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    env = {"REWARD_API_WORKERS": "1", "REWARD_API_MAX_REQUESTS_IN_FLIGHT": "2", "REWARD_API_ADMISSION_WAIT_S": "3"}
    with LocalServer(tmp_path_factory.mktemp("two-slots"), **env) as server:
        yield server


def test_a_burst_beyond_the_cap_queues_and_every_request_is_answered(two_slots: LocalServer) -> None:
    async def burst() -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=None)) as http:
            posts = [
                http.post(f"{two_slots.url}/v1/rewards", json={"items": [ITEM | {"prompt": f"burst {n}"}]})
                for n in range(60)
            ]
            return list(await asyncio.gather(*posts))

    answers = asyncio.run(burst())
    assert [answer.status_code for answer in answers] == [200] * 60
    assert all(answer.json()["results"][0]["reward"] == 1.0 for answer in answers)


def hold_slot(server: LocalServer) -> socket.socket:
    """A POST whose body never finishes: it holds one work slot until the socket closes."""
    sock = socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1])))
    head = b"POST /v1/rewards HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    sock.sendall(head + b"{")
    return sock


def test_a_request_that_finds_no_slot_in_its_wait_is_shed_with_retry_after(two_slots: LocalServer) -> None:
    holders = [hold_slot(two_slots) for _ in range(2)]
    try:
        time.sleep(0.5)
        started = time.monotonic()
        shed = httpx.post(f"{two_slots.url}/v1/rewards", json={"items": [ITEM]}, timeout=30)
        waited = time.monotonic() - started
        assert shed.status_code == 503 and int(shed.headers["retry-after"]) >= 1, shed.text
        assert shed.json()["detail"][0]["type"] == "overloaded"
        assert waited >= 2.5, f"shed after {waited:.1f} s, before its admission wait of 3 s"
        assert httpx.get(f"{two_slots.url}/readyz", timeout=5).status_code == 200  # probes never queue
    finally:
        for holder in holders:
            holder.close()
    time.sleep(0.5)
    assert httpx.post(f"{two_slots.url}/v1/rewards", json={"items": [ITEM]}, timeout=30).status_code == 200
