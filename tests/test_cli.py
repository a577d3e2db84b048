"""`reward-api grade` grades a JSONL file offline with the service's graders and profiles."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from reward_api.local import free_port

REPO = Path(__file__).resolve().parent.parent

ITEMS = [
    {"id": 1, "task": "math", "completion": "<think>Two and two make four.</think> \\boxed{4}", "reference": "4"},
    {"id": 2, "task": "math", "completion": "\\boxed{5}", "reference": "4"},
    {"id": 3, "task": "sort", "completion": "1 2 3", "reference": [3, 2, 1]},
    {"id": 4, "task": "math"},
]


def run_grade(tmp_path: Path, *extra: str) -> tuple[list[dict], str]:
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("\n".join(json.dumps(item) for item in ITEMS) + "\nnot json at all\n")
    done = subprocess.run(
        [sys.executable, "-m", "reward_api.cli", "grade", str(source), "-o", str(target), "--workers", "1", *extra],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in target.read_text().splitlines()], done.stderr


def test_grade_file_writes_one_result_per_line_with_a_progress_bar(tmp_path: Path) -> None:
    results, stderr = run_grade(tmp_path)
    assert [r["id"] for r in results] == [1, 2, 3, 4, None]
    assert [r["reward"] for r in results] == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert [r["status"] for r in results] == ["ok", "ok", "ok", "invalid", "invalid"]
    assert "5/5" in stderr and "item" in stderr  # tqdm's bar
    assert "'ok': 3" in stderr


def test_grade_file_with_a_profile(tmp_path: Path) -> None:
    results, _ = run_grade(tmp_path, "--profile", '{"name": "r1", "language": {"target_language": "en"}}')
    assert set(results[0]["components"]) == {"accuracy", "format", "language"}
    assert results[0]["components"]["format"] == 1.0
    assert results[1]["components"]["format"] == 0.0


def test_unknown_profile_is_a_clear_error(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("{}\n")
    done = subprocess.run(
        [sys.executable, "-m", "reward_api.cli", "grade", str(source), "-o", str(tmp_path / "o"), "--profile", "zz"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "unknown profile 'zz'" in done.stderr


def run_serve(env: dict[str, str], timeout_s: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "reward_api.cli", "serve"],
        env=os.environ | env, capture_output=True, text=True, timeout=timeout_s,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"REWARD_API_WORKRES": "2"}, "unknown setting(s) REWARD_API_WORKRES; known: "),
        ({"REWARD_API_DEFAULT_PROFILE": "nope"}, "REWARD_API_DEFAULT_PROFILE='nope': unknown profile 'nope'"),
        ({"REWARD_API_PORT": "eighty"}, "REWARD_API_PORT='eighty' is not a valid int"),
        ({"SANDBOX_LANGUAGES": "python,cobol"}, "SANDBOX_LANGUAGES: unknown language 'cobol'"),
    ],
)
def test_serve_refuses_to_start_on_a_setting_it_would_ignore_or_fail_on(env: dict[str, str], message: str) -> None:
    done = run_serve(env)
    assert done.returncode == 2
    assert message in done.stderr


def test_make_serve_honours_the_documented_host_and_port_variables(tmp_path: Path) -> None:
    """`make serve` as the README shows it, configured only through REWARD_API_* variables."""
    port = free_port()
    env = os.environ | {"REWARD_API_PORT": str(port), "REWARD_API_HOST": "127.0.0.1", "REWARD_API_WORKERS": "1"}
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        make = subprocess.Popen(["make", "serve"], cwd=REPO, env=env, stdout=log, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and make.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        body = {"items": [{"task": "math", "completion": "\\boxed{4}", "reference": "4"}]}
        answer = httpx.post(f"http://127.0.0.1:{port}/v1/rewards", json=body, timeout=30).json()
        assert answer["results"][0]["reward"] == 1.0
    finally:
        with contextlib.suppress(ProcessLookupError):  # already gone: the assertion above says why
            os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=30)
