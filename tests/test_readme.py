"""Every fenced block of README.md is an example that a handler here runs, and its output is what the README shows.

Each block is preceded by a marker line `<!-- example: NAME -->` (an HTML comment: invisible when rendered);
HANDLERS maps each name to the function that runs that block for real. The meta-tests fail when a block has no
marker, a marker no handler, or a handler no block, so an example added later without a test fails the suite.

Answer blocks (`ANSWERS`) show a stable subset of the real answer (volatile fields such as timings left out) and
are compared with `assert_shows`: every key shown equal, recursively; lists of the same length, element-wise.

Long jobs are checked only as far as is honest in seconds: the make target runs the command the README names
(`make -n`) and the script accepts the flags shown (`--help`). Elsewhere they run for real: the demo's training in
tests/test_trainer.py, `make serve` in
tests/test_cli.py::test_make_serve_honours_the_documented_host_and_port_variables, the client install in
tests/test_install.py; the benchmarks only when run (`make bench`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from reward_api.config import Config
from reward_api.local import LocalServer, free_port
from reward_api.profiles import PRESETS, ProfileOverride, resolve_profile
from sandbox.cgroups import host_version
from tests.frameworks import framework_python
from trainer_client.config import load_config

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
MARKER = re.compile(r"^<!-- example: ([a-z0-9-]+) -->$")
FENCE = re.compile(r"^(`{3,})([\w+-]*)\s*$")
# The addresses the README's examples use for the reward service and the sandbox service.
REWARD_ADDRESS = re.compile(r"(https?://)?(localhost|127\.0\.0\.1):8000")
SANDBOX_ADDRESS = re.compile(r"(https?://)?(localhost|127\.0\.0\.1):8080")


@dataclass(frozen=True)
class Block:
    name: str | None  # from the marker line right above the fence; None when there is none
    language: str
    text: str
    line: int  # of the opening fence, 1-based


def parse_blocks(markdown: str) -> list[Block]:
    """The fenced blocks (fences at the start of a line, closed by at least as many backticks)."""
    lines = markdown.splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence, language = opening.groups()
        closing = re.compile(rf"^`{{{len(fence)},}}\s*$")
        end = next((i for i in range(index + 1, len(lines)) if closing.match(lines[i])), None)
        assert end is not None, f"README.md:{index + 1}: the fenced block is never closed"
        marker = MARKER.match(lines[index - 1].strip()) if index else None
        text = "\n".join(lines[index + 1 : end]) + "\n"
        blocks.append(Block(marker.group(1) if marker else None, language, text, index + 1))
        index = end + 1
    return blocks


BLOCKS = parse_blocks(README.read_text(encoding="utf-8"))
NAMED = {block.name: block for block in BLOCKS if block.name}


def example(name: str) -> Block:
    assert name in NAMED, f"README.md has no block marked `<!-- example: {name} -->`"
    return NAMED[name]


def assert_shows(shown: Any, real: Any, path: str = "$") -> None:
    """The README's `shown` answer is part of the `real` one: each key shown is there with an equal value."""
    if isinstance(shown, dict):
        assert isinstance(real, dict), f"{path}: the README shows an object, the real answer is {real!r}"
        for key, value in shown.items():
            assert key in real, f"{path}: the README shows {key!r}, the real answer has only {sorted(real)}"
            assert_shows(value, real[key], f"{path}.{key}")
    elif isinstance(shown, list):
        assert isinstance(real, list) and len(real) == len(shown), f"{path}: the README shows {shown!r}, real {real!r}"
        for index, (shown_item, real_item) in enumerate(zip(shown, real, strict=True)):
            assert_shows(shown_item, real_item, f"{path}[{index}]")
    else:
        assert shown == real, f"{path}: the README shows {shown!r}, the real answer is {real!r}"


# --- running commands -------------------------------------------------------------------------------------------


def command_lines(text: str) -> list[list[str]]:
    """A shell block's commands as argv lists: continued and quoted lines joined, comments dropped."""
    commands: list[list[str]] = []
    pending = ""
    for line in text.replace("\\\n", " ").splitlines():
        pending += line + "\n"
        try:
            argv = shlex.split(pending, comments=True)
        except ValueError:  # a quote still open: the command goes on
            continue
        if argv:
            commands.append(argv)
        pending = ""
    assert not pending, f"unbalanced quotes in:\n{text}"
    return commands


def run_bash(script: str, cwd: Path = REPO, timeout_s: float = 120) -> str:
    done = subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=timeout_s)
    assert done.returncode == 0, f"{script}\nexit {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def assert_make_runs(target: str, commands: list[str]) -> None:
    """`make TARGET` exists and runs each of `commands` (a dry run: `make -n` prints, executes nothing)."""
    printed = run_bash(f"make -n {shlex.quote(target)}")
    for command in commands:
        assert command in printed, f"`make {target}` does not run `{command}`; it runs:\n{printed}"


def assert_accepts_flags(argv: list[str]) -> None:
    """The program parses its arguments, and every `--flag` in `argv` is one its `--help` lists."""
    argv = [word.strip("[]") for word in argv]
    flags = [word for word in argv if word.startswith("--")]
    program = argv[: argv.index(flags[0])] if flags else argv
    help_text = run_bash(shlex.join([*program, "--help"]))
    for flag in flags:
        listed = re.search(rf"{re.escape(flag)}(?![\w-])", help_text)
        assert listed, f"{shlex.join(program)} has no {flag}:\n{help_text}"


def curl_json(text: str) -> Any:
    """The JSON body a `curl ... -d '<json>'` block sends."""
    (argv,) = command_lines(text)
    return json.loads(argv[argv.index("-d") + 1])


def wait_ready(process: subprocess.Popen, url: str, log: Path) -> httpx.Response:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, f"it exited with {process.returncode}:\n{log.read_text()}"
        try:
            ready = httpx.get(f"{url}/readyz", timeout=2)
            if ready.status_code == 200:
                return ready
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"not ready after 120 s:\n{log.read_text()}")


@contextmanager
def serving(command: str, url: str, env: dict[str, str], log: Path) -> Iterator[httpx.Response]:
    """Run a README serve command as the user would, until its `/readyz` answers 200; yields that answer."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["bash", "-c", f"exec {command}"], cwd=REPO, env=os.environ | env, stdout=out, stderr=out,
            start_new_session=True,
        )  # fmt: skip
    try:
        yield wait_ready(process, url, log)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


# --- the handlers: one per marker -------------------------------------------------------------------------------

# What `make -n TARGET` must show for the make targets the README names (their comments say what they do).
MAKE_RUNS = {
    "serve": ["reward-api serve"],
    "test": ["ruff check", "pytest"],
    "demo": ["trainer-client demo --output runs/demo"],
    "bench": [
        "bench/math_throughput.py",
        "bench/math_hard_forms.py",
        "bench/math_hard_throughput.py",
        "bench/front_cpu.py --ray",
        "bench/code_throughput.py --http",
        "bench/sandbox_phases.py",
        "bench/jvm_archives.py",
        "bench/cache_soak.py",
        "bench/adapter_throughput.py",
        "bench/load.py",
        "bench/scale.py",
    ],
}


def check_start(block: Block, request: pytest.FixtureRequest) -> None:
    """make serve/test/demo. Run for real: make serve in tests/test_cli.py, the demo's training in test_trainer.py."""
    targets = [argv[1] for argv in command_lines(block.text)]
    assert targets == ["serve", "test", "demo"]
    for target in targets:
        assert_make_runs(target, MAKE_RUNS[target])
    host, port = re.search(r"serves on http://([\d.]+):(\d+)", block.text).groups()
    assert (host, int(port)) == (Config.host, Config.port)


def check_install_client(block: Block, request: pytest.FixtureRequest) -> None:
    """The extra named exists; tests/test_install.py installs it into a fresh venv and imports every adapter."""
    (argv,) = command_lines(block.text)
    assert argv[:2] == ["pip", "install"]
    extra = re.fullmatch(r".*\[(\w+)\]", argv[2]).group(1)
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extra in extras, f"pyproject.toml has no extra {extra!r}: {sorted(extras)}"


def check_first_request(block: Block, request: pytest.FixtureRequest) -> None:
    server: LocalServer = request.getfixturevalue("server")
    answer = run_bash(REWARD_ADDRESS.sub(server.url, block.text))
    assert_shows(json.loads(example("first-request-answer").text), json.loads(answer))


def check_eval_labels(block: Block, request: pytest.FixtureRequest) -> None:
    """The labels the block writes make a group of 4 through a URL that says 8: answered over the 4 at once (the
    request's timeout is far under the 90 s group wait), each right sample rewarded."""
    namespace: dict[str, Any] = {}
    exec(block.text, namespace)  # the README's own code
    [row] = namespace["eval_rows"]
    server: LocalServer = request.getfixturevalue("server")
    responses = ["\\boxed{4}", "so \\boxed{4}", "\\boxed{5}", "maybe \\boxed{3}"]
    body = {"query": [row["input"] + r for r in responses], "prompts": [row["input"]] * 4, "labels": [row["label"]] * 4}
    with server.client(timeout=30) as client:
        answer = client.post("/get_reward?profile=kimi&group_size=8", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["scores"] == [1.0, 1.0, 0.0, 0.0]


def check_inline_profile(block: Block, request: pytest.FixtureRequest) -> None:
    """The service takes the inline profile; sections merge field by field into the preset's, weights replace."""
    profile = json.loads(block.text)["profile"]
    resolved = resolve_profile(ProfileOverride.model_validate(profile))
    preset = PRESETS[profile["name"]]
    assert resolved.weights == profile["weights"]
    assert resolved.accuracy_range == preset.accuracy_range == (-1.0, 1.0)
    assert resolved.format.mode == profile["format"]["mode"]
    kept = preset.length.model_dump(exclude=set(profile["length"]))
    assert resolved.length.model_dump() == kept | profile["length"]
    server: LocalServer = request.getfixturevalue("server")
    right = {"task": "math", "completion": "\\boxed{4}", "reference": "4", "num_tokens": 7680}
    wrong = {"task": "math", "completion": "\\boxed{5}", "reference": "4", "num_tokens": 100}
    with server.client() as client:
        answer = client.post("/v1/rewards", json={"profile": profile, "items": [right, wrong]})
    assert answer.status_code == 200, answer.text
    # 7680 tokens lie half-way into the 1024-token window before 8192: overlong -0.5, weighed 0.5.
    assert [r["reward"] for r in answer.json()["results"]] == [1.0 - 0.25, -1.0]


def check_grade_file(block: Block, request: pytest.FixtureRequest) -> None:
    """`reward-api grade` on the first request's items gives the first request's answer, one line per item."""
    work: Path = request.getfixturevalue("tmp_path")
    items = curl_json(example("first-request").text)["items"]
    (argv,) = command_lines(block.text)
    (work / argv[argv.index("grade") + 1]).write_text("".join(json.dumps(item) + "\n" for item in items))
    run_bash(block.text.replace(".venv/bin/", f"{REPO}/.venv/bin/"), cwd=work)
    results = [json.loads(line) for line in (work / argv[argv.index("-o") + 1]).read_text().splitlines()]
    assert_shows(json.loads(example("first-request-answer").text)["results"], results)


def check_sandbox_serve(block: Block, request: pytest.FixtureRequest) -> None:
    """Each command starts the sandbox service (on loopback and a free port here) and it gets ready."""
    work: Path = request.getfixturevalue("tmp_path")
    for number, argv in enumerate(command_lines(block.text)):
        port = free_port()
        argv = [{"0.0.0.0": "127.0.0.1", "8080": str(port)}.get(word, word) for word in argv]
        isolation = argv[argv.index("--isolation") + 1] if "--isolation" in argv else "bwrap"
        level = "none" if isolation == "none" else f"bwrap+cgroup{host_version()}"
        log = work / f"sandbox-{number}.log"
        with serving(shlex.join(argv), f"http://127.0.0.1:{port}", {"SANDBOX_PORT": str(port)}, log) as ready:
            assert ready.json()["isolation"] == level
        assert ("INSECURE" in log.read_text()) == (isolation == "none")


def check_judge_request(block: Block, request: pytest.FixtureRequest) -> None:
    sandbox: LocalServer = request.getfixturevalue("sandbox")
    answer = run_bash(SANDBOX_ADDRESS.sub(sandbox.url, block.text))
    assert_shows(json.loads(example("judge-answer").text), json.loads(answer))


def check_languages(block: Block, request: pytest.FixtureRequest) -> None:
    """The curl lists every language the README's table does, each available (make test installs them all)."""
    sandbox: LocalServer = request.getfixturevalue("sandbox")
    entries = json.loads(run_bash(SANDBOX_ADDRESS.sub(sandbox.url, block.text)))["languages"]
    section = README.read_text().split("### Languages", 1)[1].split("###", 1)[0]
    table = re.findall(r"^\| `([a-z_]+)`", section, re.MULTILINE)
    available = [entry["id"] for entry in entries if entry["available"]]
    assert available == table and all(entry["version"] for entry in entries if entry["available"])


def check_code_bench(block: Block, request: pytest.FixtureRequest) -> None:
    (argv,) = command_lines(block.text)
    assert_accepts_flags(argv)
    assert_make_runs("bench", [shlex.join(argv[1:])])


def check_reward_client(block: Block, request: pytest.FixtureRequest) -> None:
    """The example runs against the service and prints what its `# -> ...` comments show."""
    server: LocalServer = request.getfixturevalue("server")
    code = REWARD_ADDRESS.sub(server.url, block.text)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    shown = re.findall(r"# -> (.+)$", block.text, flags=re.MULTILINE)
    assert shown, "the example shows no output (`# -> ...` comments)"
    assert done.stdout.splitlines() == [line.strip() for line in shown]


def check_trainer_cli(block: Block, request: pytest.FixtureRequest) -> None:
    """`make demo` is the command its comment names; `train` takes `--config`. tests/test_trainer.py trains."""
    make_demo, train = block.text.splitlines()
    assert_make_runs("demo", [make_demo.split("# = ", 1)[1].strip()])
    assert_accepts_flags(shlex.split(train, comments=True))


def check_trainer_config(block: Block, request: pytest.FixtureRequest) -> None:
    """The trainer's own loader validates the config and keeps every value shown."""
    path = request.getfixturevalue("tmp_path") / "my.toml"
    path.write_text(block.text)
    config = load_config(path)
    for section, fields in tomllib.loads(block.text).items():
        for field, value in fields.items():
            assert getattr(getattr(config, section), field) == value, f"[{section}] {field}"


def check_rollout_bench(block: Block, request: pytest.FixtureRequest) -> None:
    (argv,) = command_lines(block.text)
    assert_accepts_flags(argv)


def check_bench(block: Block, request: pytest.FixtureRequest) -> None:
    """`make bench` runs both scripts the comment names, and they parse their arguments."""
    (argv,) = command_lines(block.text)
    assert argv == ["make", "bench"]
    assert_make_runs("bench", MAKE_RUNS["bench"])
    for script in MAKE_RUNS["bench"]:
        assert_accepts_flags([".venv/bin/python", *script.split()])


def check_trl_reward_functions(block: Block, request: pytest.FixtureRequest) -> None:
    """The block's functions, called the way TRL calls them, grade a group of 8 on the service.

    tests/test_trl_compat.py runs them inside a real GRPOTrainer step.
    """
    import asyncio

    from trl.trainer.utils import get_callable_name, is_async_callable

    server: LocalServer = request.getfixturevalue("server")
    request.getfixturevalue("monkeypatch").setenv("REWARD_SERVICE_URL", server.url)
    namespace: dict[str, Any] = {}
    exec(block.text, namespace)
    accuracy_r1, length_kimi = namespace["reward_funcs"]
    assert [is_async_callable(f) for f in (accuracy_r1, length_kimi)] == [False, True]
    assert get_callable_name(accuracy_r1) != get_callable_name(length_kimi)
    group = {
        "prompts": ["What is 6 times 7?"] * 8,
        "completions": [f"<think>Six sevens.</think> \\boxed{{{42 if i % 2 else 41}}}" for i in range(8)],
        "completion_ids": [[0] * (10 + i) for i in range(8)],
        "answer": ["42"] * 8,
    }
    assert accuracy_r1(**group) == [3.0 if i % 2 else 2.0 for i in range(8)]  # format and language kept
    lengths, right = [len(ids) for ids in group["completion_ids"]], [i % 2 == 1 for i in range(8)]
    lambdas = [0.5 - (n - min(lengths)) / (max(lengths) - min(lengths)) for n in lengths]  # Kimi k1.5
    expected = [1 + lam if ok else min(0.0, lam) for lam, ok in zip(lambdas, right, strict=True)]
    assert asyncio.run(length_kimi(**group)) == pytest.approx(expected)


Handler = Callable[[Block, pytest.FixtureRequest], None]


def check_in_verl(block: Block, request: pytest.FixtureRequest) -> None:
    """verl's examples run in verl's environment (tests/frameworks/verl/readme_checks.py), on the service."""
    server: LocalServer = request.getfixturevalue("server")
    argv = [str(framework_python("verl")), "-m", "tests.frameworks.verl.readme_checks", block.name or "", server.url]
    done = subprocess.run(argv, input=block.text, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{block.name} in verl's environment:\n{done.stdout}\n{done.stderr}"


HANDLERS: dict[str, Handler] = {
    "trl-reward-functions": check_trl_reward_functions,
    "verl-reward-function": check_in_verl,
    "verl-reward-manager": check_in_verl,
    "start": check_start,
    "install-client": check_install_client,
    "first-request": check_first_request,
    "inline-profile": check_inline_profile,
    "eval-labels": check_eval_labels,
    "grade-file": check_grade_file,
    "sandbox-serve": check_sandbox_serve,
    "judge-request": check_judge_request,
    "languages": check_languages,
    "verl-sandbox-fusion": check_in_verl,
    "code-bench": check_code_bench,
    "reward-client": check_reward_client,
    "trainer-cli": check_trainer_cli,
    "trainer-config": check_trainer_config,
    "rollout-bench": check_rollout_bench,
    "bench": check_bench,
}
# Blocks that show a handler's expected answer: checked by that handler.
ANSWERS = {"first-request-answer": "first-request", "judge-answer": "judge-request"}


@pytest.mark.parametrize("name", sorted(HANDLERS))
def test_readme_example(name: str, request: pytest.FixtureRequest) -> None:
    HANDLERS[name](example(name), request)


# --- meta-tests: no block goes untested --------------------------------------------------------------------------


def test_every_block_has_a_marker() -> None:
    unmarked = [f"README.md:{block.line} ({block.language or 'no language'})" for block in BLOCKS if not block.name]
    assert not unmarked, f"precede each with `<!-- example: NAME -->` and add a handler here: {unmarked}"


def test_every_marker_precedes_a_block_and_names_one_block() -> None:
    markers = [line for line in README.read_text(encoding="utf-8").splitlines() if MARKER.match(line.strip())]
    assert len(markers) == len(NAMED) == len([block for block in BLOCKS if block.name]), markers


def test_every_marker_has_a_handler_and_every_handler_a_marker() -> None:
    assert set(ANSWERS.values()) <= set(HANDLERS)
    assert sorted(NAMED) == sorted(HANDLERS.keys() | ANSWERS.keys())


@pytest.mark.parametrize(
    ("shown", "real", "matches"),
    [
        ({"a": 1}, {"a": 1, "seconds": 0.1}, True),
        ({"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [1, {"c": 2, "d": 3}], "e": 4}}, True),
        ({"a": 1}, {"a": 2}, False),
        ({"a": 1}, {"b": 1}, False),
        ({"a": [1]}, {"a": [1, 2]}, False),
        ({"a": [{"b": 1}]}, {"a": [{"b": 0}]}, False),
        ({"a": {}}, {"a": 1}, False),
    ],
)
def test_answers_are_compared_key_by_key(shown: Any, real: Any, matches: bool) -> None:
    try:
        assert_shows(shown, real)
    except AssertionError:
        assert not matches
    else:
        assert matches
