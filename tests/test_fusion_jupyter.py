"""SandboxFusion's `/run_jupyter` on our sandbox service, driven by its own client (`sandbox-fusion` from PyPI).

Cells run in order in one namespace: a bare last expression is displayed, prints and errors belong to their cell,
the cells after an error still run. Files go in and come back as /run_code's do. The notebook is a sandboxed run:
a cell that spins past cell_timeout is stopped, one that ends the process or outlasts total_timeout fails the
notebook, hogs are contained, and the service goes on answering. matplotlib figures come back as ipykernel's inline
backend shows them: a PNG display each, at show() or at the cell's end, then closed (in a session too).
"""

from __future__ import annotations

import base64
from typing import Any

import httpx
import pytest
from sandbox_fusion import RunJupyterRequest, run_jupyter

from reward_api.local import LocalServer


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


# SandboxFusion's test_jupyter_plot, its cells as they are there.
FUSION_PLOT = [
    "import matplotlib.pyplot as plt",
    """
x = [1, 2, 3, 4, 5]
y = [2, 3, 5, 7, 11]

plt.plot(x, y)

plt.title('Simple Plot')
plt.xlabel('X-axis')
plt.ylabel('Y-axis')

plt.show()
    """,
]


def png(shown: dict[str, Any]) -> bytes:
    return base64.b64decode(shown["image/png"], validate=True)


def test_sandbox_fusions_plot_cell_shows_its_figure(sandbox: LocalServer) -> None:
    result = notebook(sandbox, FUSION_PLOT)
    assert result.status.value == "Success", result
    assert "image/png" in result.cells[1].display[0]  # SandboxFusion's assertion
    [shown] = result.cells[1].display
    assert shown["text/plain"] == "<Figure size 640x480 with 1 Axes>" and png(shown).startswith(b"\x89PNG")
    assert (result.cells[1].stderr, result.cells[1].error) == ("", [])  # Agg's show() would warn, or show nothing


def test_figures_are_shown_in_order_at_show_and_at_the_cells_end_then_closed(sandbox: LocalServer) -> None:
    cells = [
        "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nfigure, axes = plt.subplots(1, 2)",
        "plt.plot([3, 1])\nplt.show()\n'after show'",  # show() puts the figure before the cell's value
        "plt.get_fignums()",
        "plt.figure()",  # empty: IPython draws no PNG of it
    ]
    result = notebook(sandbox, cells)
    assert result.status.value == "Success", result
    two, shown, left, empty = result.cells
    assert [entry["text/plain"] for entry in two.display] == [
        "<Figure size 640x480 with 1 Axes>", "<Figure size 640x480 with 2 Axes>",
    ]  # fmt: skip
    assert all(png(entry).startswith(b"\x89PNG") for entry in two.display)
    assert png(two.display[0]) != png(two.display[1])
    assert [list(entry) for entry in shown.display] == [["text/plain", "image/png"], ["text/plain"]]
    assert shown.display[1] == {"text/plain": "'after show'"}
    assert left.display == [{"text/plain": "[]"}]  # the cells before closed theirs
    assert empty.display == [{"text/plain": "<Figure size 640x480 with 0 Axes>"}] * 2  # its value, then its display
    assert [cell.stderr for cell in result.cells] == [""] * 4


@pytest.mark.parametrize(
    "drawing, why",
    [
        ("plt.figure(figsize=(500, 500))\nplt.plot([1])", "50000x50000 pixels are past"),
        ("plt.plot([1])\nplt.text(1e6, 1e6, 'far', transform=None)", "pixels are past"),  # its tight box is huge
        ("plt.text(0.5, 0.5, r'$\\frac{1}{$')", "ValueError"),  # bad mathtext fails to draw
    ],
    ids=["huge", "huge-tight-box", "fails-to-draw"],
)
def test_a_figure_that_cannot_be_drawn_is_named_on_stderr_and_the_rest_go_on(
    sandbox: LocalServer, drawing: str, why: str
) -> None:
    cells = [f"import matplotlib.pyplot as plt\n{drawing}\nplt.figure()\nplt.plot([2])", "plt.get_fignums()"]
    result = notebook(sandbox, cells)
    assert result.status.value == "Success", result
    bad, after = result.cells
    assert bad.stderr.startswith("Figure 1 is not shown: ") and why in bad.stderr, bad.stderr
    assert bad.error == [] and png(bad.display[-1]).startswith(b"\x89PNG")  # figure 2 is shown
    assert after.display == [{"text/plain": "[]"}]


def test_a_sessions_figure_comes_back_in_its_request_not_the_next(sandbox: LocalServer) -> None:
    with httpx.Client(base_url=sandbox.url, timeout=60) as client:
        session = client.post("/v1/sessions", json={}).json()["session_id"]

        def run(*cells: str) -> list[dict[str, Any]]:
            answer = client.post(f"/v1/sessions/{session}/run", json={"cells": list(cells)}).json()
            assert answer["status"] == "Success", answer
            return answer["cells"]

        [drawn] = run("import matplotlib.pyplot as plt\nline, = plt.plot([1, 4, 9])")
        [shown] = drawn["display"]
        assert shown["text/plain"] == "<Figure size 640x480 with 1 Axes>" and png(shown).startswith(b"\x89PNG")
        [_, later] = run("x = 1", "plt.get_fignums()")
        assert later["display"] == [{"text/plain": "[]"}]
        [again] = run("plt.bar([1, 2], [3, 4])")  # its value, then its figure: as ipykernel's
        assert [list(entry) for entry in again["display"]] == [["text/plain"], ["text/plain", "image/png"]]
        assert again["display"][0] == {"text/plain": "<BarContainer object of 2 artists>"}
        client.delete(f"/v1/sessions/{session}")


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
