"""SandboxFusion's `POST /run_jupyter`: notebook cells run in order in one Python namespace, inside the sandbox.

Request and response as SandboxFusion's (`RunJupyterRequest`, `RunJupyterResponse` and its handler in
`sandbox/server/sandbox_api.py` there): `cells`, `cell_timeout` (0: none), `total_timeout` (45), `kernel`
("python3"), `files`, `fetch_files`; the answer `{"status": "Success" | "Failed" | "SandboxError", "message",
"driver", "cells": [{"stdout", "stderr", "display", "error"}], "executor_pod_name": null, "files"}`.

SandboxFusion starts a Jupyter kernel in its sandbox; here a small driver (DRIVER, below) plays the kernel's part
in one sandboxed Python run: each cell is executed in the namespace the cells before it left, its prints go to its
own `stdout`/`stderr`, a last bare expression's value is its `execute_result` display (`{"text/plain": repr}`, and
`_`), an exception is its `error` (`ename`, `evalue`, `traceback`) and the cells after it still run, as a kernel's
do; matplotlib figures are displayed as the inline backend's (`{"text/plain", "image/png"}`, at show() and the cell's
end). The run as a whole is bounded like a `/run_code` run (CPU and wall time from `total_timeout`, memory, processes,
disk); a cell past `cell_timeout` is stopped with a TimeoutError. A driver that did not finish (the total time
passed, a cell killed the process) is `Failed` with no cells; a sandbox that failed is `SandboxError` with its
message, as there.
"""

from __future__ import annotations

import inspect
import json
import secrets
from binascii import b2a_base64
from typing import Any, Literal

from pydantic import BaseModel, Field

from sandbox import runner
from sandbox.executor import Execution, Limits, TestInput
from sandbox.files import decoded_files
from sandbox.fusion import Base64Files, command_result, sandbox_error_result

_SLACK_S = 10.0  # SandboxFusion runs its driver for total_timeout + 10 s


class RunJupyterRequest(BaseModel):
    """SandboxFusion's RunJupyterRequest: same fields, types and defaults."""

    cells: list[str] = Field(..., description="code cells, run in order in one namespace")
    cell_timeout: float = Field(0, ge=0, description="seconds each cell may run; 0: no bound but the total")
    total_timeout: float = Field(45, gt=0, description="seconds all the cells may run")
    kernel: Literal["python3"] = "python3"
    files: Base64Files = Field({}, description="path -> base64 content, written before the cells run")
    fetch_files: list[str] = Field([], description="paths whose contents come back base64 in `files`")

    def given_files(self) -> dict[str, bytes]:
        return decoded_files(self.files)

    def limits(self, memory_mb: int) -> Limits:
        run_s = self.total_timeout + _SLACK_S
        return Limits(time_s=run_s, wall_s=run_s, memory_mb=memory_mb, total_s=run_s + _SLACK_S)

    def driver_input(self, marker: str) -> TestInput:
        config = {"cells": self.cells, "cell_timeout": self.cell_timeout, "marker": marker}
        return TestInput(stdin=json.dumps(config))


def new_marker() -> str:
    """Where the driver's report starts on its stdout: unknown to the cells before they run."""
    return f"\n<<<jupyter-{secrets.token_hex(16)}>>>"


def run_jupyter_response(execution: Execution, marker: str) -> dict[str, Any]:
    """SandboxFusion's RunJupyterResponse of the driver's run."""
    compiled, [run] = execution.compile, execution.tests
    if execution.sandbox_error is not None or run is None:
        driver = sandbox_error_result(execution.sandbox_error or "the sandbox ended without a result")
        return _answer("SandboxError", driver["stderr"], driver)
    if compiled is not None and not compiled.ok:  # a cell's syntax is the cell's error: only a fault gets here
        return _answer("Failed", "", command_result(compiled))
    driver = command_result(run)
    _, found, report = run.stdout.rpartition(marker)
    if driver["status"] != "Finished" or driver["return_code"] != 0 or not found:
        return _answer("Failed", "", driver)
    driver["stdout"] = run.stdout[: len(run.stdout) - len(found) - len(report)]  # what cells wrote to fd 1 itself
    return _answer("Success", "", driver, json.loads(report), execution.fetched)


def _answer(
    status: str, message: str, driver: dict[str, Any], cells: list | None = None, files: dict | None = None
) -> dict[str, Any]:
    return {
        "status": status, "message": message, "driver": driver, "cells": cells or [], "executor_pod_name": None,
        "files": files or {},
    }  # fmt: skip


# The kernel's part, shared by the one-shot driver and a session's kernel: each cell in `namespace`, its streams,
# display and error. A stream is kept up to MAX_STREAM characters.
#
# Figures come back as with ipykernel's inline backend: pyplot.show() and the cell's end put every open figure in the
# cell's display (IPython's repr and PNG, drawn as its print_figure does) and close it, so none is left for the next
# cell or request. matplotlib is never imported here (it costs start-up time): a finder waits for a cell to import
# pyplot and gives it that show() (the sandbox's Agg backend's shows nothing). A figure is drawn within MAX_PIXELS
# and a cell's images kept within MAX_IMAGES base64 characters; one past them, or that fails to draw, is named on
# the cell's stderr instead.
_CELLS = r"""
import ast, binascii, importlib.machinery, io, json, os, signal, sys, traceback

MAX_STREAM, MAX_PIXELS, MAX_IMAGES = 1 << 20, 1 << 24, 1 << 22
real_stdout, real_stderr, write, dumps = sys.stdout, sys.stderr, os.write, json.dumps
namespace = {"__name__": "__main__", "__builtins__": __builtins__}
displays = []  # the running cell's: where show() puts figures


class CellTimeout(BaseException):
    pass


def on_alarm(signum, frame):
    raise CellTimeout


def execute(cell, result):
    try:
        tree = ast.parse(cell, "<cell>", "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<cell>", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
            if value is not None:
                namespace["_"] = value
                result["display"].append({"text/plain": repr(value)})
    finally:  # after an error too, as ipykernel's post-execute hook; within the cell's time
        show()


def show(*args, **kwargs):
    # pyplot.show as ipykernel's inline backend has it: every open figure, in Gcf's order, shown and closed.
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    from matplotlib._pylab_helpers import Gcf

    try:
        for manager in Gcf.get_all_fig_managers():
            try:
                displays.append(figure_display(pyplot, manager.canvas.figure))
            except Exception as exc:
                print(f"Figure {manager.num} is not shown: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        if Gcf.get_all_fig_managers():  # close() collects garbage: only when there is a figure
            pyplot.close("all")


def figure_display(pyplot, figure):
    shown = {"text/plain": repr(figure)}
    if not figure.axes and not figure.lines:  # IPython draws no PNG of an empty figure
        return shown
    width, height = figure.bbox.size
    if width * height <= MAX_PIXELS:  # the tight box, which print_figure draws, may reach past the figure
        box = figure.get_tightbbox(figure.canvas.get_renderer()).padded(pyplot.rcParams["savefig.pad_inches"])
        width, height = box.size * figure.dpi
    if not width * height <= MAX_PIXELS:
        raise ValueError(f"{width:.0f}x{height:.0f} pixels are past the {MAX_PIXELS} a figure is drawn with")
    image = io.BytesIO()
    colors = {"facecolor": figure.get_facecolor(), "edgecolor": figure.get_edgecolor()}
    figure.canvas.print_figure(image, format="png", dpi=figure.dpi, bbox_inches="tight", **colors)
    png = binascii.b2a_base64(image.getvalue(), newline=False).decode()
    if len(png) + sum(len(entry.get("image/png", "")) for entry in displays) > MAX_IMAGES:
        raise ValueError(f"its PNG would take the cell's images past {MAX_IMAGES} base64 characters")
    shown["image/png"] = png
    return shown


class PyplotFinder:
    # Finds matplotlib.pyplot as the path finder does, and runs it with show() for its own.
    def find_spec(self, name, path, target=None):
        found = importlib.machinery.PathFinder.find_spec(name, path, target) if name == "matplotlib.pyplot" else None
        if found is not None and found.loader is not None:
            run = found.loader.exec_module

            def exec_module(module):
                run(module)
                module.show = show

            found.loader.exec_module = exec_module
        return found


def kept(stream):
    text = str(stream.getvalue())
    return text if len(text) <= MAX_STREAM else text[:MAX_STREAM] + f"... ({len(text)} characters)"


def run_cell(cell, cell_timeout):
    global displays
    kernel = os.getpid()
    result = {"stdout": "", "stderr": "", "display": [], "error": []}
    displays = result["display"]
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err
    try:
        signal.setitimer(signal.ITIMER_REAL, cell_timeout)
        try:
            execute(cell, result)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException as exc:
        if isinstance(exc, CellTimeout):
            exc = TimeoutError(f"the cell ran past its {cell_timeout:g} s (cell_timeout)")
        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
        result["error"].append({"ename": type(exc).__name__, "evalue": str(exc), "traceback": lines})
    if os.getpid() != kernel:  # a copy the cell forked came back here: it must not answer for the kernel
        os._exit(0)
    sys.stdout, sys.stderr = real_stdout, real_stderr
    result["stdout"], result["stderr"] = kept(out), kept(err)
    return result


def send(fd, text):
    data = text.encode()
    while data:
        data = data[write(fd, data):]


signal.signal(signal.SIGALRM, on_alarm)
sys.meta_path.insert(0, PyplotFinder())
"""

# /run_jupyter: config on stdin, the cells' results after the marker on stdout.
DRIVER = (
    _CELLS
    + r"""
config = json.loads(sys.stdin.read())
sys.stdin = io.StringIO()
results = [run_cell(cell, config["cell_timeout"]) for cell in config["cells"]]
real_stdout.flush()
send(1, config["marker"] + dumps(results, default=str))
"""
)

# A session's files go in and come back as a run's do: with the runner's own functions (sandbox/runner.py).
_FILES = "from binascii import a2b_base64, b2a_base64\n" + "\n\n".join(
    inspect.getsource(function) for function in (runner.local_path, runner.write_data, runner.fetch_files)
)

# A session's cells run under the system-call filter every test runs under (sandbox/runner.py confine), which the
# host makes (session_filter) and the kernel installs with the runner's own code.
_FILTER_PARTS = (runner.CInt, runner.CFunction, runner.CChar, runner.CULong, runner.install_filter)
_FILTER = (
    "import _ctypes\nfrom _struct import pack\n\n"
    + "\n\n".join(inspect.getsource(part) for part in _FILTER_PARTS)
    + '\nprctl = CFunction(_ctypes.dlsym(_ctypes.dlopen(None, 0), "prctl"))\n'
    + f"PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = {runner.PR_SET_NO_NEW_PRIVS}, {runner.PR_SET_SECCOMP}\n"
    + f"SECCOMP_MODE_FILTER = {runner.SECCOMP_MODE_FILTER}\n"
)


def session_filter() -> str:
    """The filter a session's kernel installs (base64): a test's (runner.confine), for this machine."""
    return b2a_base64(runner.seccomp_program(), newline=False).decode()


# A session's kernel (sandbox/sessions.py), run by RUNNER_BOOTSTRAP: its limits as the first line on stdin, then a
# request a line ({"cells", "cell_timeout", "files": {sandbox path: base64}, "fetch": [sandbox path]}), each answered
# by a line on the descriptor stdout was: {"cells", "files"}, or {"error"} when its files could not be written. The
# cells run in a child: the sandbox's PID 1 ignores signals it has no handler for (a CPU limit's), a child does not.
# Its cells import the runtime libraries (numpy, matplotlib, ...) from where a run's do (the runner's RUNTIME_PATHS).
SESSION_KERNEL = (
    _CELLS
    + _FILES
    + _FILTER
    + f"\nRUNTIME_PATHS = {runner.RUNTIME_PATHS!r}\n"
    + r"""
import resource

sys.path.extend(path for path in RUNTIME_PATHS if os.path.isdir(path))

requests, answers = os.fdopen(os.dup(0), "rb"), os.dup(1)
quiet = os.open("/dev/null", os.O_RDWR)
os.dup2(quiet, 0)
os.dup2(quiet, 1)
limits = json.loads(requests.readline())
workdir = os.path.join(sys.argv[1], "src")  # as a run's: /sandbox/src in the sandbox
os.makedirs(workdir, exist_ok=True)
os.chdir(workdir)
child = os.fork()
if child:
    os.close(answers)
    os.waitpid(child, 0)
    os._exit(0)
memory = limits["memory_mb"] * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
resource.setrlimit(resource.RLIMIT_CPU, (int(limits["cpu_s"]) + 1, int(limits["cpu_s"]) + 2))
install_filter(a2b_base64(limits["syscall_filter"]))
sys.stdin, sys.stdout = io.StringIO(), io.StringIO()
real_stdout = sys.stdout
sys.setrecursionlimit(100_000)
root = sys.argv[1]
for line in requests:
    request = json.loads(line)
    try:
        write_data(root, {path: a2b_base64(content) for path, content in request["files"].items()})
    except OSError as exc:
        send(answers, dumps({"error": f"the session's files could not be written: {exc}"}) + "\n")
        continue
    results = [run_cell(cell, request["cell_timeout"]) for cell in request["cells"]]
    fetched = fetch_files(root, request["fetch"], limits["fetch_bytes"])
    send(answers, dumps({"cells": results, "files": fetched}, default=str) + "\n")
"""
)
