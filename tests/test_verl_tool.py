"""verl's multi-turn code tool (`SandboxFusionTool`, PyPI verl 0.7.1) runs a rollout's tool calls on our /run_code.

The tools are built from verl's own YAML tool config and each call goes through its agent loop's `_call_tool`
(tests/verl_tool_loop.py, in a process with verl 0.7.1, which `make test` installs into .venv/verl-0.7.1 beside the
newer verl the other tests use). What the model then reads is each call's tool message: the program's stdout and
stderr when it ran to its end, verl's "no stdout here" when it did not (a time limit), and verl's truncation of
long output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from reward_api.local import LocalServer

REPO = Path(__file__).resolve().parents[1]
VERL_0_7 = REPO / ".venv" / "verl-0.7.1"


def code_call(code: str, **more: object) -> dict:
    return {"name": "code_interpreter", "arguments": {"code": code, **more}}


CPP_ANSWER = '#include <cstdio>\nint main() { std::printf("%d\\n", 6 * 7); }'
# Each turn's calls run at once; each call is a fresh run (SandboxFusion's /run_code keeps no state).
TURNS = [
    [code_call("print(sum(range(10)))")],
    [code_call("import math\nprint(math.comb(10, 3))"), code_call(CPP_ANSWER, language="cpp")],
    [code_call("raise ValueError('no such case')")],
    [code_call("while True:\n    pass", timeout=1)],
    [code_call("print('x' * 1000)")],
    [code_call("print(open('/etc/shadow').read())")],
]


TRACEBACK = """Traceback (most recent call last):
  File "main.py", line 1, in <module>
    raise ValueError('no such case')
ValueError: no such case
"""


def run_tool_loop(url: str, turns: list[list[dict]]) -> list[list[str]]:
    assert (VERL_0_7 / "verl" / "tools" / "sandbox_fusion_tools.py").exists(), "run `make test`: it installs verl 0.7.1"
    env = os.environ | {"PYTHONPATH": f"{REPO}:{VERL_0_7}"}  # our tests/ before the wheel's own tests/
    argv = [sys.executable, "-m", "tests.verl_tool_loop", url, json.dumps(turns)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_verl_code_tool_calls_get_what_the_programs_printed(sandbox: LocalServer) -> None:
    [first], [comb, cpp], [error], [endless], [long], [shadow] = run_tool_loop(f"{sandbox.url}/run_code", TURNS)
    assert first == "45\n"
    assert (comb, cpp) == ("120\n", "42\n")
    assert error == TRACEBACK, error  # as `python main.py` prints it: no frame of our runner
    assert endless == "no stdout here"  # verl's text for a run that did not finish
    assert long == "x" * 128 + "...(truncated)..." + "x" * 127 + "\n"
    assert "root:" not in shadow and ("PermissionError" in shadow or "FileNotFoundError" in shadow), shadow
