"""SandboxFusion's `/run_jupyter` on our sandbox service, driven by its own client (`sandbox-fusion` from PyPI).

Cells run in order in one namespace: a bare last expression is displayed, prints and errors belong to their cell,
the cells after an error still run. Files go in and come back as /run_code's do. The notebook is a sandboxed run:
a cell that spins past cell_timeout is stopped, one that ends the process or outlasts total_timeout fails the
notebook, hogs are contained, and the service goes on answering.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator

import httpx
import pytest
from sandbox_fusion import RunJupyterRequest, run_jupyter

from reward_api.local import LocalServer


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with LocalServer.sandbox(tmp_path_factory.mktemp("sandbox"), SANDBOX_WORKERS="2") as server:
        yield server


def notebook(sandbox: LocalServer, cells: list[str], **options):
    return run_jupyter(RunJupyterRequest(cells=cells, **options), endpoint=sandbox.url, max_attempts=1)


def test_sandbox_fusions_example_cells(sandbox: LocalServer) -> None:
    """The cells of SandboxFusion's own RunJupyterRequest example, with what its kernel gives for each."""
    cells = [
        "a = 123",
        "a",
        "print(a)",
        'import sys; sys.stderr.write("stderr message")',
        'raise RuntimeError("error message")',
    ]
    result = notebook(sandbox, cells)
    assert result.status.value == "Success", result
    first, shown, printed, stderr, raised = result.cells
    assert (first.stdout, first.display, first.error) == ("", [], [])
    assert shown.display == [{"text/plain": "123"}]
    assert printed.stdout == "123\n" and printed.display == []
    assert stderr.stderr == "stderr message" and stderr.display == [{"text/plain": "14"}]  # write() returned 14
    [error] = raised.error
    assert (error["ename"], error["evalue"]) == ("RuntimeError", "error message")
    assert "RuntimeError: error message" in "".join(error["traceback"])


def test_state_carries_from_cell_to_cell_and_errors_do_not_stop_the_rest(sandbox: LocalServer) -> None:
    cells = [
        "import math\ndef area(r):\n    return math.pi * r * r",
        "total = 0\nfor r in range(3):\n    total += area(r)",
        "undefined_name",
        "round(total, 3)",
        "def broken(:",
        "_ * 2",  # the last displayed value
    ]
    result = notebook(sandbox, cells)
    assert [cell.display for cell in result.cells] == [
        [],
        [],
        [],
        [{"text/plain": "15.708"}],
        [],
        [{"text/plain": "31.416"}],
    ]
    assert [cell.error[0]["ename"] if cell.error else None for cell in result.cells] == [
        None, None, "NameError", None, "SyntaxError", None,
    ]  # fmt: skip


def test_files_go_in_and_come_back(sandbox: LocalServer) -> None:
    files = {"data/in.csv": base64.b64encode(b"3,4\n").decode()}
    cells = ["a, b = map(int, open('data/in.csv').read().split(','))", "open('out.txt', 'w').write(str(a * b))"]
    result = notebook(sandbox, cells, files=files, fetch_files=["out.txt"])
    assert result.status.value == "Success", result
    assert base64.b64decode(result.files["out.txt"]) == b"12"


def test_a_cell_past_cell_timeout_is_stopped_and_the_next_runs(sandbox: LocalServer) -> None:
    result = notebook(sandbox, ["while True:\n    pass", "'after'"], cell_timeout=1, total_timeout=20)
    assert result.status.value == "Success", result
    assert result.cells[0].error[0]["ename"] == "TimeoutError"
    assert result.cells[1].display == [{"text/plain": "'after'"}]


@pytest.mark.parametrize(
    "cells",
    [
        ["import time\ntime.sleep(60)"],  # outlasts total_timeout
        ["x = 1", "import os\nos._exit(0)"],  # ends the kernel's process
        ["import os\nos.kill(os.getpid(), 9)"],
    ],
    ids=["past-total-timeout", "exits", "kills-itself"],
)
def test_a_notebook_whose_process_does_not_finish_fails_with_no_cells(sandbox: LocalServer, cells: list[str]) -> None:
    result = notebook(sandbox, cells, total_timeout=2)
    assert (result.status.value, result.cells) == ("Failed", []), result
    assert result.driver is not None


HOSTILE = {
    "fork-bomb": "import os\nwhile True:\n    os.fork()",
    "memory-hog": "blocks = []\nwhile True:\n    blocks.append(bytearray(1 << 24))",
    "reads-host-secrets": "open('/etc/shadow').read()",
    "opens-a-socket": "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)",
}


@pytest.mark.parametrize("attack", list(HOSTILE))
def test_hostile_cells_are_contained_and_the_service_goes_on(sandbox: LocalServer, attack: str) -> None:
    result = notebook(sandbox, [HOSTILE[attack], "'still here'"], total_timeout=5)
    if result.status.value == "Success":  # the attack failed inside its cell; the next cell ran
        assert result.cells[0].error, result
        assert result.cells[1].display == [{"text/plain": "'still here'"}]
    else:
        assert result.status.value == "Failed", result
    again = notebook(sandbox, ["1 + 1"])
    assert again.cells[0].display == [{"text/plain": "2"}]


def test_bad_paths_and_contents_are_a_422(sandbox: LocalServer) -> None:
    for body, loc in (
        ({"cells": ["1"], "files": {"/etc/x": "eA=="}}, ["body", "files", "/etc/x"]),
        ({"cells": ["1"], "fetch_files": ["../../root/x"]}, ["body", "fetch_files", 0]),
        ({"cells": ["1"], "files": {"a": "**"}}, ["body", "files"]),
        ({"cells": "1"}, ["body", "cells"]),
    ):
        answer = httpx.post(f"{sandbox.url}/run_jupyter", json=body, timeout=30)
        assert answer.status_code == 422, answer.text
        assert any(detail["loc"][: len(loc)] == loc for detail in answer.json()["detail"]), answer.text
