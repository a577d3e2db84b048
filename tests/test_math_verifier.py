"""The math verifier model (profile `math.verifier`, TinyV-style): rules first, and only an answer the rules
reject goes to a verifier model over the OpenAI-compatible chat API.

The plumbing runs against the real vLLM CPU build serving the tiny local chat model (tests/vllm_serving.py),
through the real reward service. The tiny model's verdicts are noise (its words are not True or False), so
the tests assert what the plumbing guarantees: the request reaches vLLM and its reply, parsed strictly,
decides the score; an answer the rules accept never reaches it; a repeated answer comes from the worker's
cache; a verifier that never answers costs its own verdict after timeout_s, visibly, and nothing else.
"""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reward_api.config import Config
from reward_api.graders.maths.verifier import MAX_QUESTION_CHARS, endpoint, parse_verdict, verifier_prompt, verify
from reward_api.local import LocalServer
from reward_api.profiles import MathVerifierSettings
from tests.scrape import metric
from tests.test_service import grade
from tests.vllm_serving import VLLMServer, chat_model, vllm_server

__all__ = ["chat_model", "vllm_server"]  # fixtures of tests.vllm_serving: pytest finds them here by name

VERIFIER_ITEMS = "reward_math_verifier_items_total"
VLLM_REQUESTS = "vllm:request_success_total"
KEY_ENV = "MATH_VERIFIER_TEST_KEY"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """One grading worker, so that an answer's second item meets the first one's cache; the verifier's key
    in the environment, as an operator would set it."""
    with LocalServer(
        tmp_path_factory.mktemp("verifier"), REWARD_API_WORKERS="1", REWARD_API_HEAVY_WORKERS="0",
        REWARD_API_ITEM_DEADLINE_S="20", REWARD_API_MATH_VERIFIER_URLS="http://127.0.0.1, http://h",
        **{KEY_ENV: "test-key"},
    ) as srv:  # fmt: skip
        yield srv


class SilentServer:
    """A loopback port that accepts connections, reads what is sent and never answers."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.received = b""
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed
                return
            self._held.append(conn)
            self.received += conn.recv(65536)

    def close(self) -> None:
        self.sock.close()
        for conn in self._held:
            conn.close()


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.close()


def profile(base_url: str, model: str = "tiny", **settings: Any) -> dict[str, Any]:
    return {"name": "accuracy", "math": {"verifier": {"base_url": base_url, "model": model, **settings}}}


def item(answer: str, reference: str = "4", intro: str = "") -> dict[str, str]:
    return {"task": "math", "completion": f"{intro}\\boxed{{{answer}}}", "reference": reference}


def eventually(read: Callable[[], float], expected: float, timeout_s: float = 30) -> float:
    """`read()` once it equals `expected` (a server's counters may trail its answer), else its last value."""
    deadline = time.monotonic() + timeout_s
    while (value := read()) != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    return value


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("True", True), ("False", False), ("true", True), ("FALSE", False), (" True.\n", True),
        ("**False**", False), ('"True"', True), ("`true`", True),
        ("<think>It could be false.</think>\nTrue", True), ("<think>so: true</think> False", False),
        ("Not true", None), ("True or False", None), ("It is true", None), ("Truely", None), ("T", None),
        ("", None), ("Yes", None), ("1", None), ("True, because 5 = 5", None), ("True\nFalse", None),
        ("<think>True", None), ("Answer: True", None),
    ],
)  # fmt: skip
def test_only_a_bare_true_or_false_is_a_verdict(reply: str, verdict: bool | None) -> None:
    assert parse_verdict(reply) is verdict


def test_the_verifier_reads_the_question_as_tinyv_models_were_trained() -> None:
    asked = verifier_prompt("0.5", "\\frac{1}{2}", "What is half of one?")
    question, reference = "<question>What is half of one?</question>", "<ground_truth_answer>\\frac{1}{2}"
    assert f"{question}\n\n{reference}</ground_truth_answer>" in asked
    assert "<model_answer>0.5</model_answer>" in asked
    assert "<question>" not in verifier_prompt("0.5", "\\frac{1}{2}", None)
    assert "<question>" not in verifier_prompt("0.5", "\\frac{1}{2}", "  ")
    long = "x" * (3 * MAX_QUESTION_CHARS) + " What is half of one?"
    assert "What is half of one?</question>" in verifier_prompt("0.5", "1/2", long)  # its end, where it asks
    assert len(verifier_prompt("0.5", "1/2", long)) < 2 * MAX_QUESTION_CHARS


@pytest.mark.parametrize(
    ("base_url", "url"),
    [
        ("http://h:8000", "http://h:8000/v1/chat/completions"),
        ("http://h:8000/", "http://h:8000/v1/chat/completions"),
        ("http://h:8000/v1", "http://h:8000/v1/chat/completions"),
        ("https://h/proxy/v1/", "https://h/proxy/v1/chat/completions"),
    ],
)
def test_endpoint_follows_vllm_and_the_openai_clients_base_urls(base_url: str, url: str) -> None:
    assert endpoint(base_url) == url


@pytest.mark.slow
def test_a_rejected_answer_goes_to_vllm_and_its_parsed_reply_decides(
    service: LocalServer, vllm_server: VLLMServer, chat_model: Path
) -> None:
    before = metric(vllm_server, VLLM_REQUESTS)
    counted = {o: metric(service, VERIFIER_ITEMS, outcome=o) for o in ("equal", "not_equal", "undecided")}
    [result] = grade(service, [item("5")], profile(vllm_server.url, str(chat_model), api_key_env=KEY_ENV))
    accuracy = result["details"]["accuracy"]
    assert result["status"] == "ok", result
    assert accuracy["verifier"] in ("equal", "not equal", "undecided"), accuracy
    accepted = accuracy["verifier"] == "equal"
    assert (result["reward"], accuracy["method"]) == ((1.0, "verifier") if accepted else (0.0, "numeric"))
    assert ("verifier_reply" in accuracy) == (accuracy["verifier"] == "undecided")
    assert eventually(lambda: metric(vllm_server, VLLM_REQUESTS), before + 1) == before + 1
    outcome = accuracy["verifier"].replace(" ", "_")
    assert metric(service, VERIFIER_ITEMS, outcome=outcome) == counted[outcome] + 1


@pytest.mark.slow
def test_rules_first_an_accepted_answer_never_reaches_the_verifier(
    service: LocalServer, vllm_server: VLLMServer, chat_model: Path
) -> None:
    before = metric(vllm_server, VLLM_REQUESTS)
    results = grade(service, [item("4"), item("2+2"), item("\\frac{8}{2}")], profile(vllm_server.url, str(chat_model)))
    assert [r["reward"] for r in results] == [1.0] * 3
    assert not any("verifier" in r["details"]["accuracy"] for r in results), results
    assert metric(vllm_server, VLLM_REQUESTS) == before


@pytest.mark.slow
def test_the_same_answer_again_is_answered_from_the_workers_cache(
    service: LocalServer, vllm_server: VLLMServer, chat_model: Path
) -> None:
    verifier = profile(vllm_server.url, str(chat_model))
    before = metric(vllm_server, VLLM_REQUESTS)
    [first] = grade(service, [item("7")], verifier)
    assert eventually(lambda: metric(vllm_server, VLLM_REQUESTS), before + 1) == before + 1
    # Another completion with the same final answer: not the service's result cache, the verifier's.
    [second] = grade(service, [item("7", intro="So it is ")], verifier)
    first, second = first["details"]["accuracy"], second["details"]["accuracy"]
    assert "verifier_cached" not in first and second["verifier_cached"] is True, second
    assert second["verifier"] == first["verifier"] and second.get("verifier_reply") == first.get("verifier_reply")
    assert metric(vllm_server, VLLM_REQUESTS) == before + 1
    [other_model] = grade(service, [item("7", intro="Thus ")], profile(vllm_server.url, "no-such-model"))
    assert other_model["details"]["accuracy"]["verifier"].startswith("error: "), other_model  # its own cache entry


def test_a_verifier_that_never_answers_is_cut_at_its_timeout_and_costs_only_its_verdict(
    service: LocalServer, silent: SilentServer
) -> None:
    errors = metric(service, VERIFIER_ITEMS, outcome="error")
    batch = [item("5"), item("4"), {"task": "math", "completion": "\\boxed{4}"}]
    verifier = profile(silent.url, timeout_s=1, api_key_env=KEY_ENV)
    hung, right, invalid = grade(service, batch, verifier, timeout=30)  # answered, not hung
    assert (hung["status"], hung["reward"]) == ("ok", 0.0), hung
    accuracy = hung["details"]["accuracy"]
    cut = f"error: no reply from {silent.url}/v1/chat/completions within 1s; raise timeout_s or check its load"
    assert accuracy["verifier"] == cut, accuracy
    assert accuracy["reason"] == "not equivalent"  # the rules' verdict stands, with its reason
    assert (right["reward"], invalid["status"]) == (1.0, "invalid")
    assert "verifier" not in right["details"]["accuracy"]
    assert b"POST /v1/chat/completions" in silent.received and b"Bearer test-key" in silent.received
    assert metric(service, VERIFIER_ITEMS, outcome="error") == errors + 1
    # One line per VERIFIER_LOG_EVERY_S at most: an earlier test's failure may be the one logged.
    assert "math verifier gave no verdict, the rules' verdict stands: " in service.log()
    # A failed verifier is not remembered: the item sent again asks again, and the service keeps serving.
    [again] = grade(service, batch[:1], verifier, timeout=30)
    assert again["details"]["accuracy"]["verifier"].startswith("error: no reply") and "cached" not in again["details"]
    assert metric(service, VERIFIER_ITEMS, outcome="error") == errors + 2
    assert grade(service, [item("4")])[0]["reward"] == 1.0


def test_a_missing_api_key_is_a_verifier_error_that_names_the_variable(service: LocalServer) -> None:
    [result] = grade(service, [item("5")], profile("http://127.0.0.1:9", api_key_env="MATH_VERIFIER_UNSET"))
    assert result["details"]["accuracy"]["verifier"] == (
        "error: MATH_VERIFIER_UNSET is not set in the reward service's environment"
    )


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"model": "m"}, "base_url"),
        ({"base_url": "127.0.0.1:8000", "model": "m"}, "base_url"),
        ({"base_url": "http://h"}, "model"),
        ({"base_url": "http://h", "model": "m", "timeout_s": 0}, "timeout_s"),
        ({"base_url": "http://h", "model": "m", "api_key_env": "REWARD_API_AUTH_TOKEN"}, "api_key_env"),
        ({"base_url": "http://h", "model": "m", "retries": 3}, "retries"),
    ],
)
def test_a_malformed_verifier_is_a_422_naming_the_field(service: LocalServer, settings: dict, field: str) -> None:
    with service.client() as client:
        response = client.post("/v1/rewards", json={"items": [item("5")], "profile": {"math": {"verifier": settings}}})
    assert response.status_code == 422, response.text
    [first, *_] = response.json()["detail"]
    assert first["loc"][-4:] == ["profile", "math", "verifier", field], first


@pytest.mark.parametrize(
    "base_url",
    ["http://169.254.169.254", "http://127.0.0.1.example.com:8000", "http://hx", "http://h:1@169.254.169.254"],
)
def test_a_verifier_server_the_operator_did_not_list_is_a_422(service: LocalServer, base_url: str) -> None:
    with service.client() as client:
        response = client.post("/v1/rewards", json={"items": [item("5")], "profile": profile(base_url)})
    assert response.status_code == 422, response.text
    [problem] = response.json()["detail"]
    assert problem["loc"] == ["body", "profile", "math", "verifier", "base_url"], problem
    assert "REWARD_API_MATH_VERIFIER_URLS" in problem["msg"]


VERIFIER_URLS = "http://verifier.invalid:8000, http://127.0.0.1, https://api.example.com/team/v1"


@pytest.mark.parametrize(
    "base_url, allowed",
    [
        ("http://verifier.invalid:8000", True),
        ("http://VERIFIER.invalid:8000/", True),
        ("http://verifier.invalid:8000/v1", True),
        ("http://verifier.invalid:8001", False),
        ("http://verifier.invalid", False),  # port 80, not the listed 8000
        ("https://verifier.invalid:8000", False),
        ("http://verifier.invalid:8000@127.0.0.2:8399", False),  # user info: the host is 127.0.0.2
        ("http://verifier.invalid:1@127.0.0.1:8399", False),  # a listed host, but never with user info
        ("http://verifier.invalid:8000.evil.example", False),
        ("http://verifier.invalid:8000?next=http://x", False),
        ("http://verifier.invalid:8000#x", False),
        ("http://127.0.0.1:8399", True),  # listed without a port: every port
        ("http://127.0.0.1", True),
        ("http://127.0.0.10", False),
        ("https://api.example.com/team/v1", True),
        ("https://api.example.com/team/v1/", True),
        ("https://api.example.com/team/v10", False),
        ("https://api.example.com/other", False),
        ("https://api.example.com:443/team/v1", True),
        ("http://[::1]:80", False),
        ("not a url", False),
    ],
)
def test_the_verifier_allow_list_compares_parsed_urls(base_url: str, allowed: bool) -> None:
    assert Config(math_verifier_urls=VERIFIER_URLS).allows_verifier(base_url) is allowed


@pytest.mark.parametrize("entry", ["verifier:8000", "http://u:p@verifier:8000", "ftp://verifier", "http://v?x=1"])
def test_a_verifier_url_the_service_could_not_compare_stops_its_start(entry: str) -> None:
    with pytest.raises(ValueError, match="REWARD_API_MATH_VERIFIER_URLS"):
        Config.from_env({"REWARD_API_MATH_VERIFIER_URLS": f"http://ok, {entry}"})


def test_the_verifiers_timeout_is_cut_to_what_the_items_deadline_leaves(silent: SilentServer) -> None:
    """In a grading worker the pool's alarm holds the item's deadline; the verifier stops before it fires."""
    settings = MathVerifierSettings(base_url=silent.url, model="m", timeout_s=60)
    previous = signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the item's deadline passed"))
    signal.setitimer(signal.ITIMER_REAL, 1.5)
    try:
        verdict = verify("5", "4", settings).verdict
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert verdict.startswith("error: no reply") and "(what the item's deadline left)" in verdict, verdict


def test_no_verifier_by_default(service: LocalServer) -> None:
    [result] = grade(service, [item("5")])
    assert result["reward"] == 0.0 and "verifier" not in result["details"]["accuracy"]
