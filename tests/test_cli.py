"""`reward-api grade` grades a JSONL file offline with the service's graders and profiles."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
