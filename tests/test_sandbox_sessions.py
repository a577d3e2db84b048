"""Notebook sessions on the real sandbox service (sandbox/sessions.py): a kernel kept across requests, as a
tool-calling rollout's code interpreter uses it, with its bounds over its whole life.

A three-turn tool loop builds on its own earlier turns; files go in before a request's cells and come back after
them (paths the sandbox cannot place are a 422 naming them, files past its disk an error that spares the session); a
retried request is answered, not run again; a session
past its CPU seconds, its total_timeout or its idle time ends and says why; hostile cells (a fork bomb, a memory
hog, an exit, host files, the network) are contained, leave no process behind once closed, and the service goes on.
"""

from __future__ import annotations

import base64
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest

from reward_api.local import LocalServer
from tests import test_syscall_filter as syscall_filter


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    settings = {"SANDBOX_WORKERS": "1", "SANDBOX_MAX_SESSIONS": "3", "SANDBOX_SESSION_IDLE_S": "30"}
    with LocalServer.sandbox(tmp_path_factory.mktemp("sandbox"), **settings) as server:
        yield server


@pytest.fixture
def client(sandbox: LocalServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sandbox.url, timeout=60) as client:
        yield client


def open_session(client: httpx.Client, **limits) -> str:
    answer = client.post("/v1/sessions", json=limits)
    assert answer.status_code == 200, answer.text
    return answer.json()["session_id"]


def run(client: httpx.Client, session: str, *cells: str, **options) -> dict:
    answer = client.post(f"/v1/sessions/{session}/run", json={"cells": list(cells), **options})
    assert answer.status_code == 200, answer.text
    return answer.json()


def shown(answer: dict) -> list:
    return [cell["display"][0]["text/plain"] if cell["display"] else None for cell in answer["cells"]]


def test_a_tool_loop_builds_on_its_earlier_turns(client: httpx.Client) -> None:
    session = open_session(client)
    turns = [
        ("import math\nprimes = [n for n in range(2, 50) if all(n % d for d in range(2, math.isqrt(n) + 1))]", None),
        ("len(primes)", "15"),
        ("sum(primes[-3:])", "131"),  # 41 + 43 + 47
    ]
    for code, expected in turns:
        answer = run(client, session, code)
        assert answer["status"] == "Success" and shown(answer) == [expected], answer
    failed = run(client, session, "undefined_name", "'after the error'")
    assert failed["cells"][0]["error"][0]["ename"] == "NameError" and shown(failed)[1] == "'after the error'"
    assert client.delete(f"/v1/sessions/{session}").json() == {"closed": session}
    assert client.post(f"/v1/sessions/{session}/run", json={"cells": ["1"]}).status_code == 404


def test_a_retried_request_is_answered_not_run_again(client: httpx.Client) -> None:
    session = open_session(client, session_id="retry-me")
    assert open_session(client, session_id="retry-me") == "retry-me"  # a retried create: the same session
    run(client, session, "calls = 0")
    first = run(client, session, "calls += 1\ncalls", request_id="turn-1")
    again = run(client, session, "calls += 1\ncalls", request_id="turn-1")
    assert shown(first) == shown(again) == ["1"]
    assert shown(run(client, session, "calls")) == ["1"]
    client.delete(f"/v1/sessions/{session}")


def test_a_session_ends_past_its_cpu_seconds_and_says_so(client: httpx.Client) -> None:
    session = open_session(client, cpu_s=1)
    answer = run(client, session, "while True:\n    pass", total_timeout=30)
    assert answer["status"] == "Failed" and "used its 1 CPU seconds" in answer["message"], answer
    assert "used its 1 CPU seconds" in run(client, session, "1")["message"]
    client.delete(f"/v1/sessions/{session}")


def test_cells_past_total_timeout_end_the_session_and_a_cell_timeout_only_the_cell(client: httpx.Client) -> None:
    session = open_session(client)
    cut = run(client, session, "x = 1", "while True:\n    pass", "x + 1", cell_timeout=1)
    assert cut["cells"][1]["error"][0]["ename"] == "TimeoutError" and shown(cut)[2] == "2", cut
    ended = run(client, session, "import time\ntime.sleep(60)", total_timeout=1)
    assert ended["status"] == "Failed" and "total_timeout" in ended["message"], ended
    assert run(client, session, "x")["status"] == "Failed"
    client.delete(f"/v1/sessions/{session}")


def test_sessions_are_capped_idle_ones_expire_and_bounds_past_the_services_are_refused(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    settings = {"SANDBOX_WORKERS": "1", "SANDBOX_MAX_SESSIONS": "2", "SANDBOX_SESSION_IDLE_S": "2"}
    with (
        LocalServer.sandbox(tmp_path_factory.mktemp("capped"), **settings) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        first, _ = open_session(client), open_session(client)
        full = client.post("/v1/sessions", json={})
        assert full.status_code == 503 and "SANDBOX_MAX_SESSIONS" in full.json()["error"], full.text
        assert full.headers["retry-after"]
        too_much = client.post("/v1/sessions", json={"memory_mb": 10**6})
        assert too_much.status_code == 422 and too_much.json()["detail"][0]["loc"] == ["body", "memory_mb"]
        time.sleep(4)  # both idle past 2 s: closed
        assert client.post(f"/v1/sessions/{first}/run", json={"cells": ["1"]}).status_code == 404
        open_session(client)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_files_go_in_before_the_cells_and_come_back_after_them(client: httpx.Client) -> None:
    session = open_session(client)
    given = {"data/numbers.txt": b64(b"3 4 5\n"), "/tmp/scale": b64(b"10")}
    summed = "total = sum(map(int, open('data/numbers.txt').read().split())) * int(open('/tmp/scale').read())\ntotal"
    answer = run(client, session, summed, files=given)
    assert answer["status"] == "Success" and shown(answer) == ["120"], answer
    # A later turn reads what an earlier one wrote; what it asks back comes back by the name it gave.
    write = "import os\nos.makedirs('out', exist_ok=True)\nopen('out/total.txt', 'w').write(str(total))"
    answer = run(client, session, write, fetch_files=["out/total.txt", "/sandbox/src/data/numbers.txt", "missing"])
    assert answer["files"] == {"out/total.txt": b64(b"120"), "/sandbox/src/data/numbers.txt": given["data/numbers.txt"]}
    client.delete(f"/v1/sessions/{session}")


def test_fetching_a_symlink_to_host_files_or_a_fifo_gives_nothing_back(client: httpx.Client) -> None:
    session = open_session(client)
    traps = "import os\nos.symlink('/etc/shadow', 'shadow')\nos.symlink('/root', 'home')\nos.mkfifo('pipe')"
    answer = run(client, session, traps, fetch_files=["shadow", "home/.bash_history", "pipe"], total_timeout=10)
    assert answer["status"] == "Success" and answer["files"] == {}, answer
    client.delete(f"/v1/sessions/{session}")


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"files": {"../../etc/passwd": b64(b"x")}}, ["body", "files", "../../etc/passwd"]),
        ({"fetch_files": ["/etc/shadow"]}, ["body", "fetch_files", 0]),
        ({"files": {"data.txt": "not base64!"}}, ["body", "files"]),
    ],
)
def test_a_file_the_session_cannot_place_is_refused_naming_it(client: httpx.Client, body: dict, loc: list) -> None:
    session = open_session(client)
    refused = client.post(f"/v1/sessions/{session}/run", json={"cells": ["1"], **body})
    assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == loc, refused.text
    assert shown(run(client, session, "2")) == ["2"]
    client.delete(f"/v1/sessions/{session}")


def test_files_past_the_sessions_disk_are_an_error_and_the_session_goes_on(client: httpx.Client) -> None:
    session = open_session(client)
    fill = """
import os
f = open('fill', 'wb')
try:
    while True:
        f.write(bytes(1 << 20))
        f.flush()
except OSError as exc:
    full = exc.errno
f.close()
"""
    assert run(client, session, fill, "full")["cells"][1]["display"], "the disk never filled"
    refused = run(client, session, "'not run'", files={"more.bin": b64(bytes(1 << 20))})
    assert refused["status"] == "SandboxError" and "could not be written" in refused["message"], refused
    assert refused["cells"] == []
    assert shown(run(client, session, "os.remove('fill')\n'room again'")) == ["'room again'"]
    client.delete(f"/v1/sessions/{session}")


HOSTILE = {
    "fork-bomb": "import os\nwhile True:\n    os.fork()",
    "memory-hog": "blocks = []\nwhile True:\n    blocks.append(bytearray(1 << 24))",
    "exits": "import os\nos._exit(0)",
    "reads-host-secrets": "open('/etc/shadow').read()",
    "opens-a-socket": "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)",
    "daemon": "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(3600)",
}


def _processes_of_nobody() -> int:
    listed = subprocess.run(["pgrep", "-c", "-u", "nobody"], capture_output=True, text=True)
    return int(listed.stdout.strip() or 0)


@pytest.mark.parametrize("attack", list(HOSTILE))
def test_hostile_cells_are_contained_and_leave_nothing_once_closed(client: httpx.Client, attack: str) -> None:
    before = _processes_of_nobody()
    session = open_session(client, cpu_s=5)
    answer = run(client, session, HOSTILE[attack], total_timeout=5)
    if answer["status"] == "Success":  # the attack failed in its cell: the kernel goes on
        assert answer["cells"][0]["error"] or attack == "daemon", answer
        assert shown(run(client, session, "'still here'")) == ["'still here'"]
    else:
        assert answer["message"], answer
    client.delete(f"/v1/sessions/{session}")
    for _ in range(50):
        if _processes_of_nobody() <= before:
            break
        time.sleep(0.1)
    assert _processes_of_nobody() <= before
    other = open_session(client)
    assert shown(run(client, other, "1 + 1")) == ["2"]
    client.delete(f"/v1/sessions/{other}")


def test_a_sessions_cells_run_under_the_tests_system_call_filter(client: httpx.Client) -> None:
    """Keyrings, io_uring, userfaultfd and the rest are refused in a session as in a test
    (tests/test_syscall_filter.py): a key one cell adds would otherwise outlive the cell and reach other submissions.
    """
    session = open_session(client)
    answer = run(client, session, syscall_filter.python(with_clone=False))
    assert answer["cells"][0]["stdout"] == syscall_filter.expected_lines(with_clone=False) + "\n", answer
    client.delete(f"/v1/sessions/{session}")


def test_a_copy_a_cell_forks_never_answers_for_the_kernel(client: httpx.Client) -> None:
    session = open_session(client)
    for _ in range(3):  # were a copy answering, it would race the kernel for the next requests
        answer = run(client, session, "import os\nwho = 'kernel' if os.fork() else 'copy'\nwho")
        assert shown(answer) == ["'kernel'"], answer
        assert shown(run(client, session, "who")) == ["'kernel'"]
    client.delete(f"/v1/sessions/{session}")
