"""The reward service's HTTP contract: one error body for every refusal, an OpenAPI schema that is the
contract (documented statuses, enums, typed profiles; fuzzed with schemathesis against the real server),
examples that run as they are, profile numbers that cannot make a reward non-finite, and /docs that
works with no internet."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from reward_api.grading import TASKS
from reward_api.local import LocalServer
from reward_api.profiles import COMPONENTS, MAX_MAGNITUDE, PRESETS, SECTIONS, Profile
from service_kit.errors import ErrorBody

TOKEN = "s3cret"
RIGHT = {"task": "math", "completion": "\\boxed{4}", "reference": "4"}
WORK_OPERATIONS = [("/v1/rewards", "post"), ("/get_reward", "post"), ("/slime", "post")]
WORK_ERRORS = ("400", "401", "408", "413", "422", "500", "503")
# Examples per operation: enough to reach nested profile sections and odd items, small enough that the
# fuzzing takes 10 to 30 s on 2 cores.
FUZZ_EXAMPLES = 150


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """A service with a token and small limits, to see each refusal."""
    with LocalServer(
        tmp_path_factory.mktemp("strict"),
        REWARD_API_WORKERS="1",
        REWARD_API_AUTH_TOKEN=TOKEN,
        REWARD_API_MAX_BATCH_ITEMS="2",
        REWARD_API_MAX_BODY_MB="0.05",
    ) as srv:
        yield srv


@pytest.fixture(scope="module")
def spec(server: LocalServer) -> dict[str, Any]:
    with server.client() as client:
        return client.get("/openapi.json").json()


def _json(text: str) -> dict[str, str]:
    return {"content": text, "headers": {"content-type": "application/json"}}


# (method, path, request arguments, status, the field `error` must start with)
REFUSALS = [
    ("post", "/v1/rewards", {"json": {"items": [RIGHT]}, "headers": {"Authorization": ""}}, 401,
     "header.authorization"),
    ("post", "/v1/rewards", {"json": {"items": [RIGHT]}, "headers": {"Authorization": "Bearer no"}}, 401,
     "header.authorization"),
    ("post", "/v1/rewards", {"json": {"items": [RIGHT], "profile": "nope"}}, 422, "profile"),
    ("post", "/v1/rewards", {"json": {"items": [RIGHT], "profile": {"name": "nope"}}}, 422, "profile"),
    ("post", "/v1/rewards", {"json": {"items": [], "profile": {"name": "dapo", "length": {"max_length": 10}}}}, 422,
     "profile.length"),
    ("post", "/v1/rewards", {"json": {"items": [], "profile": {"weights": {"speed": 1}}}}, 422, "profile"),
    ("post", "/v1/rewards", {"json": {"items": [RIGHT] * 3}}, 413, "items"),
    ("post", "/v1/rewards", {"json": {"items": [RIGHT | {"completion": "x" * 60_000}]}}, 413, "body"),
    ("post", "/v1/rewards", {"json": {"items": [], "extra": 1}}, 422, "extra"),
    ("post", "/v1/rewards", {"json": {}}, 422, "items"),
    ("post", "/v1/rewards", _json("{not json"), 422, "body"),
    ("post", "/v1/rewards", {"content": b'{"items": ["\xff"]}', "headers": {"content-type": "application/json"}},
     400, "body"),
    ("post", "/get_reward", {"json": {"query": ["a", "b", "c"]}}, 413, "query"),
    ("post", "/get_reward", {"json": {"query": ["a"]}, "params": {"profile": "nope"}}, 422, "query.profile"),
    ("post", "/get_reward", {"json": {"query": ["a", "b"], "prompts": ["p"]}}, 422, "prompts"),
    ("post", "/get_reward", {"json": {"query": ["a", "b"], "labels": ["1", "2", "3"]}}, 422, "labels"),
    ("post", "/slime", {"json": {"response": "1"}, "params": {"reward_key": "status"}}, 422, "query.reward_key"),
    ("post", "/slime", {"json": {"label": "1"}}, 422, "response"),
    ("get", "/v1/rewards", {}, 405, "method"),
    ("get", "/nowhere", {}, 404, "path"),
]  # fmt: skip


@pytest.mark.parametrize(("method", "path", "kwargs", "status", "field"), REFUSALS)
def test_every_refusal_is_the_error_contract_naming_the_field(
    strict: LocalServer, method: str, path: str, kwargs: dict[str, Any], status: int, field: str
) -> None:
    kwargs = dict(kwargs)
    headers = {"Authorization": f"Bearer {TOKEN}"} | kwargs.pop("headers", {})
    with strict.client() as client:
        response = client.request(method, path, headers=headers, **kwargs)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = ErrorBody.model_validate_json(response.text)
    assert body.error.startswith(f"{field}: "), body.error
    assert body.detail and body.detail[0].msg in body.error
    if status == 401:
        assert response.headers["www-authenticate"] == "Bearer"


def test_a_body_nested_too_deeply_says_so(strict: LocalServer) -> None:
    """Valid UTF-8 JSON 10,000 levels deep: the parser gives up, and the answer says why (not "is it UTF-8?")."""
    deep = '{"items": ' + "[" * 10_000 + "]" * 10_000 + "}"
    headers = {"Authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
    with strict.client() as client:
        response = client.post("/v1/rewards", content=deep, headers=headers)
    assert response.status_code == 400, response.text
    body = ErrorBody.model_validate_json(response.text)
    assert "nested too deeply" in body.error and body.detail[0].type == "too_deep", body


@pytest.mark.parametrize(
    ("profile", "field"),
    [
        ('{"weights": {"accuracy": 1e308, "format": 1e308}}', "profile.weights.accuracy"),
        ('{"weights": {"accuracy": NaN}}', "profile.weights.accuracy"),
        ('{"weights": {"accuracy": Infinity}}', "profile.weights.accuracy"),
        ('{"weights": {"accuracy": -Infinity}}', "profile.weights.accuracy"),
        ('{"weights": {"accuracy": 1' + "0" * 400 + "}}", "profile.weights.accuracy"),
        ('{"weights": {"accuracy": true}}', "profile.weights.accuracy"),
        ('{"failure_reward": false}', "profile.failure_reward"),
        ('{"failure_reward": "0.5"}', "profile.failure_reward"),
        ('{"accuracy_range": [0, 1e308]}', "profile.accuracy_range.1"),
        ('{"correct_threshold": NaN}', "profile.correct_threshold"),
        ('{"length": {"cosine_max_value_correct": 1e300}}', "profile.length.cosine_max_value_correct"),
        ('{"length": {"repetition_max_penalty": -1e300}}', "profile.length.repetition_max_penalty"),
        ('{"length": {"max_length": 1e400}}', "profile.length.max_length"),
        ('{"length": {"max_length": true}}', "profile.length.max_length"),
        ('{"math": {"rel_tol": -1}}', "profile.math.rel_tol"),
        ('{"code": {"time_limit_s": 0}}', "profile.code.time_limit_s"),
        ('{"code": {"unknown": 1}}', "profile.code.unknown"),
    ],
)
def test_profile_numbers_are_finite_bounded_and_not_booleans(server: LocalServer, profile: str, field: str) -> None:
    with server.client() as client:
        response = client.post("/v1/rewards", **_json(f'{{"items": [{json.dumps(RIGHT)}], "profile": {profile}}}'))
    assert response.status_code == 422, response.text
    assert response.json()["error"].startswith(f"{field}: "), response.text


def test_the_largest_profile_numbers_still_give_finite_rewards(server: LocalServer) -> None:
    """Every weight, range and component bound at its limit: the reward is large, never inf or null."""
    top = MAX_MAGNITUDE
    profile = {
        "name": "accuracy",
        "weights": dict.fromkeys(COMPONENTS, top),
        "accuracy_range": [-top, top],
        "length": {"cosine_min_value_correct": top, "cosine_max_value_correct": top, "repetition_max_penalty": -top},
        "failure_reward": -top,
    }
    items = [
        RIGHT | {"completion": "<think>a a a a a a</think> \\boxed{4}", "num_tokens": 10**9, "group": 1},
        RIGHT | {"completion": "\\boxed{5}", "num_tokens": 0, "group": 1},
        {"task": "math", "reference": "4"},  # invalid: gets the failure reward
    ]
    with server.client() as client:
        response = client.post("/v1/rewards", json={"items": items, "profile": profile})
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["ok", "ok", "invalid"]
    for result in results:
        assert isinstance(result["reward"], float) and math.isfinite(result["reward"]), result
    assert results[0]["reward"] > top  # the bounds are generous: the weights really were applied


def test_items_with_unknown_tasks_or_absurd_token_counts_are_invalid_not_the_batch(server: LocalServer) -> None:
    items = [RIGHT, {"task": "chess", "completion": "e4"}, RIGHT | {"num_tokens": 10**30}, RIGHT | {"num_tokens": True}]
    with server.client() as client:
        response = client.post("/v1/rewards", json={"items": items, "profile": "dapo"})
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["ok", "invalid", "invalid", "invalid"]
    assert "unknown task 'chess'" in results[1]["details"]["reason"]
    assert "num_tokens" in results[2]["details"]["reason"]


def test_openrlhf_lists_are_one_per_query_or_empty(server: LocalServer) -> None:
    query = ["\\boxed{4}", "\\boxed{5}"]
    with server.client() as client:
        empty = client.post("/get_reward", json={"query": query, "prompts": [], "labels": []})
        paired = client.post("/get_reward", json={"query": query, "prompts": ["", ""], "labels": ["4", "4"]})
        short = client.post("/get_reward", json={"query": query, "labels": ["4"]})
    assert empty.status_code == 200 and len(empty.json()["rewards"]) == 2, empty.text
    assert paired.status_code == 200 and paired.json()["rewards"] == [1.0, 0.0], paired.text
    assert short.status_code == 422
    assert short.json()["error"] == "labels: 1 labels for 2 queries; send one per query, or none"


def test_openapi_documents_every_status_with_the_error_body(spec: dict[str, Any]) -> None:
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}
    for path, method in WORK_OPERATIONS:
        responses = spec["paths"][path][method]["responses"]
        assert sorted(responses) == sorted(("200", *WORK_ERRORS)), path
        for status in WORK_ERRORS:
            assert responses[status]["content"] == {"application/json": {"schema": error_ref}}, (path, status)
        assert "Retry-After" in responses["503"]["headers"]
    for path in ("/healthz", "/readyz", "/metrics"):
        assert spec["paths"][path]["get"]["responses"]["500"]["content"] == {"application/json": {"schema": error_ref}}
    not_ready = spec["paths"]["/readyz"]["get"]["responses"]["503"]["content"]["application/json"]["schema"]
    assert not_ready == {"$ref": "#/components/schemas/NotReady"}
    assert {"error", "detail", "ready"} <= set(spec["components"]["schemas"]["NotReady"]["properties"])
    metrics = spec["paths"]["/metrics"]["get"]["responses"]["200"]["content"]
    assert metrics == {"text/plain": {"schema": {"type": "string"}}}
    assert "HTTPValidationError" not in spec["components"]["schemas"]  # FastAPI's own 422 body is never sent


def test_openapi_names_tasks_presets_components_and_types_every_profile_section(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    item = schemas["RewardRequest"]["properties"]["items"]["items"]
    assert item["properties"]["task"]["enum"] == [*sorted(TASKS), "auto"]
    override = schemas["ProfileOverride"]
    assert override["properties"]["weights"]["propertyNames"] == {"enum": list(COMPONENTS)}
    assert override["properties"]["name"]["enum"] == sorted(PRESETS)
    for section in SECTIONS:
        [ref, null] = override["properties"][section]["anyOf"]
        assert null == {"type": "null"}
        typed = schemas[ref["$ref"].rsplit("/", 1)[1]]
        section_model = Profile.model_fields[section].annotation
        assert typed["additionalProperties"] is False
        assert set(typed["properties"]) == set(section_model.model_fields), section
        assert "required" not in typed, section  # every field optional: null or absent keeps the preset's
    length = schemas["LengthOverride"]["properties"]
    assert length["max_length"]["anyOf"][0] == {"type": "integer", "exclusiveMinimum": 0, "maximum": 10**9}
    profile_param = spec["paths"]["/get_reward"]["post"]["parameters"][0]
    assert profile_param["name"] == "profile" and profile_param["schema"]["anyOf"][0]["enum"] == sorted(PRESETS)


def _examples(spec: dict[str, Any], path: str) -> dict[str, Any]:
    return spec["paths"][path]["post"]["requestBody"]["content"]["application/json"]["examples"]


@pytest.mark.parametrize("path", [path for path, _ in WORK_OPERATIONS])
def test_every_documented_example_runs(server: LocalServer, spec: dict[str, Any], path: str) -> None:
    examples = _examples(spec, path)
    assert len(examples) >= 2
    with server.client() as client:
        for name, example in examples.items():
            response = client.post(path, json=example["value"])
            assert response.status_code == 200, (name, response.text)
            answer = response.json()
            if path == "/v1/rewards":
                assert all(result["status"] == "ok" for result in answer["results"]), (name, answer)
            elif path == "/get_reward":
                assert answer["extra_logs"]["graded"] == [1.0] * len(example["value"]["query"]), (name, answer)
            else:
                assert isinstance(answer, float) and answer > 0, (name, answer)


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_load_only_from_this_service(server: LocalServer, page: str) -> None:
    """No CDN: every script, style, icon and spec the page names is a path on this service, and is served."""
    with server.client() as client:
        html = client.get(page).text
        urls = re.findall(r"""(?:src|href|spec-url)=["']([^"']+)|url: *['"]([^'"]+)""", html)
        urls = [src or url for src, url in urls]
        assert len(urls) >= 3, html
        assert not re.search(r"https?://|//[a-z]", html), html
        for url in urls:
            assert url.startswith("/"), url
            asset = client.get(url)
            assert asset.status_code == 200 and len(asset.content) > 100, url
    assert any(url.endswith(".js") for url in urls)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """The service as the session's, but with a short group wait: a fuzzed `kimi` item with a `group_size` waits
    for group members that never come."""
    env = {"REWARD_API_WORKERS": "2", "REWARD_API_ITEM_DEADLINE_S": "3", "REWARD_API_GROUP_WAIT_S": "0.5"}
    with LocalServer(tmp_path_factory.mktemp("fuzzed"), **env) as server:
        yield server


def test_fuzzed_requests_get_no_5xx_and_answers_that_match_the_schema(fuzzed: LocalServer) -> None:
    """Every operation of the running service's /openapi.json, with requests that fit its schema and requests
    that break it: no 5xx, every status documented, every body valid against its documented schema."""
    schema = schemathesis.openapi.from_url(f"{fuzzed.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {operation.label for operation in operations} >= {f"{m.upper()} {p}" for p, m in WORK_OPERATIONS}
    for operation in operations:
        _fuzz(operation)


def _fuzz(operation: schemathesis.APIOperation) -> None:
    modes = [GenerationMode.POSITIVE]
    if operation.body or operation.query:  # something to break: also requests that do not fit the schema
        modes.append(GenerationMode.NEGATIVE)
    # Not checked: positive_data_acceptance, since some rules span fields, which JSON Schema cannot say
    # (cache_length <= max_length, answer tags set together, the batch size limit): their 422 is right.
    # On /v1/rewards not negative_data_rejection either: items are validated one by one, and an item that
    # breaks its schema is an `invalid` result in a 200, by design (the rest of its batch is graded).
    excluded = [positive_data_acceptance]
    if operation.label == "POST /v1/rewards":
        excluded.append(negative_data_rejection)

    @given(case=st.one_of(*(operation.as_strategy(mode) for mode in modes)))
    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def call(case: schemathesis.Case) -> None:
        case.call_and_validate(excluded_checks=excluded, timeout=60)

    call()
