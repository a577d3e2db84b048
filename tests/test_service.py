"""The real service over HTTP: batches, profiles, errors, limits, compat endpoints, metrics."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from reward_api.local import LocalServer as Server

R1_RIGHT = "<think>Two plus two makes four, so the sum is four.</think> The answer is $\\boxed{4}$."
R1_WRONG = "<think>Two plus two makes five, so the sum is five.</think> The answer is $\\boxed{5}$."


def grade(server: Server, items: list, profile=None, **kwargs) -> list[dict]:
    body = {"items": items} | ({"profile": profile} if profile is not None else {})
    with server.client() as client:
        response = client.post("/v1/rewards", json=body, **kwargs)
    assert response.status_code == 200, response.text
    return response.json()["results"]


def test_batch_results_come_back_in_order_with_status_and_details(server: Server) -> None:
    items = [
        {"id": "right", "task": "math", "completion": R1_RIGHT, "reference": "4"},
        {"id": "wrong", "task": "math", "completion": R1_WRONG, "reference": "4"},
        {"id": "no-completion", "task": "math", "reference": "4"},
        {"id": "bad-task", "task": "chess", "completion": "e4", "reference": "e4"},
        {"id": "sorted", "task": "sort", "completion": "0 1 2 3", "reference": [3, 1, 0, 2]},
        "not an object",
    ]
    results = grade(server, items)
    assert [r["id"] for r in results] == ["right", "wrong", "no-completion", "bad-task", "sorted", None]
    assert [r["status"] for r in results] == ["ok", "ok", "invalid", "invalid", "ok", "invalid"]
    assert results[0]["reward"] == 1.0 and results[0]["components"] == {"accuracy": 1.0}
    assert results[0]["details"]["accuracy"]["extracted"] == "4"
    assert results[1]["reward"] == 0.0
    assert "items[2].completion" in results[2]["details"]["reason"]
    assert "unknown task 'chess'" in results[3]["details"]["reason"]
    assert results[4]["reward"] == 1.0
    assert "items[5]" in results[5]["details"]["reason"]


def test_invalid_reference_is_reported_per_item(server: Server) -> None:
    [result] = grade(server, [{"task": "math", "completion": R1_RIGHT, "reference": ""}])
    assert result["status"] == "invalid"
    assert "reference" in result["details"]["reason"]


@pytest.mark.parametrize(
    ("profile", "completion", "expected_reward", "expected_components"),
    [
        ("r1", R1_RIGHT, 3.0, {"accuracy": 1.0, "format": 1.0, "language": 1.0}),
        ("r1", "The answer is \\boxed{4}", 2.0, {"accuracy": 1.0, "format": 0.0, "language": 1.0}),
        ("dapo", R1_WRONG, -1.0, {"accuracy": 0.0, "overlong": 0.0}),
        ("dapo", R1_RIGHT, 1.0, {"accuracy": 1.0, "overlong": 0.0}),
        ({"name": "r1", "weights": {"accuracy": 2.0, "format": 0.5}}, R1_RIGHT, 2.5, {"accuracy": 1.0, "format": 1.0}),
        ("format", R1_WRONG, 1.0, {"accuracy": 0.0, "format": 1.0}),
    ],
)
def test_profiles_combine_components(server: Server, profile, completion, expected_reward, expected_components):
    item = {"task": "math", "completion": completion, "reference": "4", "target_language": "en"}
    [result] = grade(server, [item], profile)
    assert result["status"] == "ok", result
    assert result["components"] == pytest.approx(expected_components)
    assert result["reward"] == pytest.approx(expected_reward)


def test_dapo_soft_overlong_uses_num_tokens(server: Server) -> None:
    profile = {"name": "dapo", "length": {"max_length": 100, "cache_length": 20}}
    items = [{"task": "math", "completion": R1_RIGHT, "reference": "4", "num_tokens": n} for n in (50, 90, 100, 150)]
    overlong = [r["components"]["overlong"] for r in grade(server, items, profile)]
    assert overlong == pytest.approx([0.0, -0.5, -1.0, -1.0])


def test_kimi_length_reward_is_computed_per_group(server: Server) -> None:
    def item(group: str, completion: str, tokens: int) -> dict:
        return {"task": "math", "completion": completion, "reference": "4", "group": group, "num_tokens": tokens}

    items = [item("a", R1_RIGHT, 10), item("a", R1_RIGHT, 30), item("a", R1_WRONG, 20), item("b", R1_RIGHT, 99)]
    results = grade(server, items, "kimi")
    kimi = [r["components"]["kimi_length"] for r in results]
    # group a: min 10, max 30 -> lambda = 0.5, -0.5, 0.0 (wrong: min(0, 0.0)); group b alone: 0.
    assert kimi == pytest.approx([0.5, -0.5, 0.0, 0.0])
    assert [r["reward"] for r in results] == pytest.approx([1.5, 0.5, 0.0, 1.0])


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "items"),
        ({"items": "nope"}, "items"),
        ({"items": [], "profile": "nonexistent"}, "profile"),
        ({"items": [], "profile": {"name": "r1", "weights": {"bogus": 1}}}, "profile"),
        ({"items": [], "profile": {"name": "dapo", "length": {"max_length": 10, "cache_length": 20}}}, "profile"),
        ({"items": [], "extra": 1}, "extra"),
    ],
)
def test_malformed_requests_get_a_4xx_naming_the_field(server: Server, body: dict, field: str) -> None:
    with server.client() as client:
        response = client.post("/v1/rewards", json=body)
    assert 400 <= response.status_code < 500, response.text
    assert field in response.text


def test_body_that_is_not_json_is_a_4xx(server: Server) -> None:
    with server.client() as client:
        response = client.post("/v1/rewards", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422


def test_invalid_unicode_escapes_are_graded_not_refused(server: Server) -> None:
    body = '{"items": [{"task": "math", "completion": "\\ud800 \\\\boxed{4} \\udfff", "reference": "4"}]}'
    with server.client() as client:
        response = client.post("/v1/rewards", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    [result] = response.json()["results"]
    assert result["status"] == "ok" and result["reward"] == 1.0


def test_a_lone_surrogate_in_one_items_id_or_group_fails_only_that_echo(server: Server) -> None:
    """The id and group are echoed or hashed: they encode as U+FFFD, and the other items of the batch stand."""
    good = '{"task": "math", "completion": "\\\\boxed{4}", "reference": "4"}'
    odd = '{"id": "q\\ud800", "group": "g\\udfff", "task": "math", "completion": "\\\\boxed{4}", "reference": "4"}'
    unparsed = '{"id": "r\\ud800", "task": "math", "completion": 7}'
    flag_size = '{"task": "math", "completion": "4", "reference": "4", "group": "h", "group_size": true}'
    body = '{"items": [' + ", ".join([good, odd, unparsed, flag_size, good]) + "]}"
    with server.client() as client:
        response = client.post("/v1/rewards", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["ok", "ok", "invalid", "invalid", "ok"]
    assert "group_size" in json.dumps(results[3]["details"])
    assert (results[1]["id"], results[2]["id"]) == ("q\ufffd", "r\ufffd")


PATHOLOGICAL = [
    "\\boxed{10^{10^{10^{10^{10}}}}}",
    "\\boxed{9^{9^{9^{9^{9}}}}}",
    "\\boxed{" + "(" * 5000 + "1" + ")" * 5000 + "}",
    "\\boxed{" + "{" * 3000 + "x" + "}" * 3000 + "}",
    "x" * 1_000_000 + " \\boxed{4}",
    "\\boxed{" + "1+" * 200_000 + "1}",
    "\\boxed{\\sum_{n=1}^{10^{100}} n^{n^n}}",
    "\\boxed{(x+1)^{100000}}",
    "\\boxed{\\int_0^{\\infty} e^{-x^{1000}} \\sin(x^{x^x}) dx}",
]


def test_pathological_math_finishes_within_deadline_and_server_keeps_serving(server: Server) -> None:
    deadline_s = 3.0
    items = [{"task": "math", "completion": text, "reference": "4"} for text in PATHOLOGICAL]
    started = time.monotonic()
    results = grade(server, items)
    elapsed = time.monotonic() - started
    assert len(results) == len(PATHOLOGICAL)
    for result in results:
        assert result["status"] in {"ok", "timeout", "error"}, result
        assert result["reward"] in (0.0, 1.0)
    assert results[4]["reward"] == 1.0  # the megabyte of noise before a correct answer
    # Nine items on two workers, none allowed past its deadline (plus start-up of replacements).
    assert elapsed < deadline_s * len(PATHOLOGICAL) / 2 + 10, elapsed
    assert grade(server, [{"task": "math", "completion": R1_RIGHT, "reference": "4"}])[0]["reward"] == 1.0


def test_concurrent_batches_all_get_their_own_answers(server: Server) -> None:
    async def one_batch(client: httpx.AsyncClient, n: int) -> list[dict]:
        items = [
            {"id": f"{n}-{k}", "task": "math", "completion": f"\\boxed{{{n * 100 + k}}}", "reference": str(n * 100 + k)}
            for k in range(20)
        ] + [{"id": f"{n}-wrong", "task": "math", "completion": "\\boxed{-1}", "reference": str(n)}]
        response = await client.post("/v1/rewards", json={"items": items})
        assert response.status_code == 200
        return response.json()["results"]

    async def all_batches() -> list[list[dict]]:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            return await asyncio.gather(*(one_batch(client, n) for n in range(1, 9)))

    for n, results in enumerate(asyncio.run(all_batches()), 1):
        assert [r["id"] for r in results] == [f"{n}-{k}" for k in range(20)] + [f"{n}-wrong"]
        assert [r["reward"] for r in results] == [1.0] * 20 + [0.0]


def test_identical_items_are_answered_from_the_cache(server: Server) -> None:
    item = {"task": "math", "completion": "so \\boxed{\\frac{7}{13}}", "reference": "7/13"}
    first, second = grade(server, [item]), grade(server, [item])
    assert first[0]["reward"] == second[0]["reward"] == 1.0
    assert "cached" not in first[0]["details"]
    assert second[0]["details"]["cached"] is True
    other_settings = grade(server, [item], {"name": "accuracy", "math": {"rel_tol": 0.1}})
    assert "cached" not in other_settings[0]["details"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"query": [], "prompts": [], "labels": []}, {"rewards": [], "scores": [], "extra_logs": {}}),
        ({"query": []}, {"rewards": [], "scores": [], "extra_logs": {}}),
        (
            {"query": ["Q: 2+2?<|im_start|>A: \\boxed{4}<|im_end|>"], "prompts": ["Q: 2+2?"], "labels": ["4"]},
            {"rewards": [1.0], "scores": [1.0], "extra_logs": {"accuracy": [1.0], "graded": [1.0]}},
        ),
        (
            {"query": ["sort: 3 1 2 -> 1 2 3", "x \\boxed{5}"], "prompts": ["sort: 3 1 2 ->", "x"],
             "labels": ['{"task": "sort", "reference": [3, 1, 2]}', "4"]},
            {"rewards": [1.0, 0.0], "scores": [1.0, 0.0], "extra_logs": {"accuracy": [1.0, 0.0], "graded": [1.0, 1.0]}},
        ),
    ],
)  # fmt: skip
def test_openrlhf_get_reward(server: Server, body: dict, expected: dict) -> None:
    with server.client() as client:
        response = client.post("/get_reward", json=body)
    assert response.status_code == 200, response.text
    assert response.json() == expected


def test_openrlhf_profile_query_parameter(server: Server) -> None:
    prompt = "What is two plus two?"
    query = prompt + "<think>I add two and two together.</think>\\boxed{4}"
    body = {"query": [query], "prompts": [prompt], "labels": ["4"]}
    with server.client() as client:
        response = client.post("/get_reward", params={"profile": "r1"}, json=body)
    assert response.status_code == 200, response.text
    logs = response.json()["extra_logs"]
    assert logs == {"accuracy": [1.0], "format": [1.0], "language": [1.0], "graded": [1.0]}


def test_slime_single_sample(server: Server) -> None:
    sample = {"prompt": "What is 2+2?", "response": "\\boxed{4}", "label": "4"}
    with server.client() as client:
        assert client.post("/slime", json=sample).json() == 1.0
        keyed = client.post("/slime", params={"reward_key": "score"}, json=sample | {"response": "\\boxed{3}"})
        assert keyed.json()["score"] == 0.0 and keyed.json()["status"] == "ok"
        chat = {"prompt": [{"role": "user", "content": "sort 2 1"}], "response": "1 2", "label": {"task": "sort"}}
        assert client.post("/slime", json=chat).json() == 1.0


def test_health_ready_docs_and_metrics(server: Server) -> None:
    grade(server, [{"task": "math", "completion": "\\boxed{1}", "reference": "1"}])
    with server.client() as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        assert client.get("/readyz").json()["ready"] is True
        assert client.get("/docs").status_code == 200
        schema = client.get("/openapi.json").json()
        assert "/v1/rewards" in schema["paths"] and "/get_reward" in schema["paths"]
        metrics = client.get("/metrics").text
    assert 'reward_items_total{status="ok",task="math"}' in metrics
    assert 'reward_requests_total{code="200",endpoint="/v1/rewards"}' in metrics
    assert "reward_item_grading_seconds_bucket" in metrics
    assert "reward_cache_hits_total" in metrics
    request_logs = [json.loads(line) for line in server.log().splitlines() if '"message": "request"' in line]
    assert any(entry["path"] == "/v1/rewards" and entry["status"] == 200 for entry in request_logs)


def test_timeouts_kill_and_replace_workers_and_are_counted(server: Server) -> None:
    with server.client() as client:
        before = _metric(client.get("/metrics").text, 'reward_items_total{status="timeout",task="math"}')
    [result] = grade(server, [{"task": "math", "completion": "\\boxed{(x+1)^{100000}}", "reference": "4"}])
    with server.client() as client:
        text = client.get("/metrics").text
        # A worker being replaced is normal work: a load balancer must not take the replica out for it.
        assert client.get("/readyz").status_code == 200
    if result["status"] == "timeout":
        assert _metric(text, 'reward_items_total{status="timeout",task="math"}') == before + 1
    assert result["reward"] == 0.0


def _metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


@pytest.fixture(scope="module")
def guarded_server(tmp_path_factory: pytest.TempPathFactory):
    with Server(
        tmp_path_factory.mktemp("guarded"),
        REWARD_API_WORKERS="1",
        REWARD_API_AUTH_TOKEN="s3cret",
        REWARD_API_MAX_BATCH_ITEMS="4",
        REWARD_API_MAX_BODY_MB="0.01",
    ) as srv:
        yield srv


def test_bearer_token_is_required_when_configured(guarded_server: Server) -> None:
    body = {"items": [{"task": "math", "completion": "\\boxed{1}", "reference": "1"}]}
    with guarded_server.client() as client:
        assert client.post("/v1/rewards", json=body).status_code == 401
        assert client.post("/v1/rewards", json=body, headers={"Authorization": "Bearer wrong"}).status_code == 401
        ok = client.post("/v1/rewards", json=body, headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200 and ok.json()["results"][0]["reward"] == 1.0
        assert client.get("/healthz").status_code == 200


def test_oversize_batches_and_bodies_get_413(guarded_server: Server) -> None:
    headers = {"Authorization": "Bearer s3cret"}
    item = {"task": "math", "completion": "\\boxed{1}", "reference": "1"}
    with guarded_server.client(headers=headers) as client:
        too_many = client.post("/v1/rewards", json={"items": [item] * 5})
        assert too_many.status_code == 413 and "items" in too_many.text
        too_big = client.post("/v1/rewards", json={"items": [item | {"completion": "x" * 20_000}]})
        assert too_big.status_code == 413
        assert client.post("/v1/rewards", json={"items": [item] * 4}).status_code == 200
