"""MultiPL-E through the reward service: its rows as references, graded as MultiPL-E's own evaluator grades them.

Every language of tests/multiple_cases.py (MultiPL-E's HumanEval_0 in 21 languages, its harness verbatim): the
right completion (the body that continues the prompt) earns 1.0, the wrong one 0.0, and a whole function written
out (prompt and body, as a chat model answers) is run without the prompt again. Through the real service on
loopback, grading in-process with every language enabled (tests/conftest.py), a batch per language: a
multi-process runtime (BEAM) that has yielded the CPU can be starved past its wall limit by other runs beside it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from reward_api.local import LocalServer
from tests.multiple_cases import CASES, MultiplECase


def item(case: MultiplECase, code: str) -> dict:
    # MultiPL-E gives each program 15 s; runtimes start slowly on a loaded 2-core machine
    reference = case.row() | {"time_limit": 10}
    return {"task": "code", "completion": f"Here it is:\n```\n{code}\n```", "reference": reference}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[dict]]:
    results = []
    with LocalServer(tmp_path_factory.mktemp("multiple"), REWARD_API_WORKERS="2") as service, service.client() as c:
        for case in CASES:  # a batch per language: its runs side by side, not beside other runtimes' (above)
            items = [item(case, code) for code in (case.right, case.wrong, case.prompt + case.right)]
            answer = c.post("/v1/rewards", json={"items": items, "profile": "accuracy"}, timeout=300)
            assert answer.status_code == 200, answer.text
            results += answer.json()["results"]
    yield results


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case.language for case in CASES])
def test_multiple_rows_grade_as_multiple_does(graded: list[dict], index: int) -> None:
    right, wrong, whole = graded[3 * index : 3 * index + 3]
    said = [json.dumps(r["details"])[:3000] for r in (right, wrong, whole)]  # whole, not pytest's shortened repr
    assert [r["status"] for r in (right, wrong, whole)] == ["ok"] * 3, said
    assert right["reward"] == 1.0, said[0]
    assert wrong["reward"] == 0.0 and "accepted" not in wrong["details"]["accuracy"]["verdicts"], said[1]
    assert whole["reward"] == 1.0, said[2]
