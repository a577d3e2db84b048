"""A verifier model for math answers the rules reject, as TinyV does (Xu et al. 2025, arXiv:2505.14625).

Rules first: `grade_math` asks the verifier only about an answer its rules rejected, so a verifier can
turn a false negative into a pass, never a rule's pass into a fail. It speaks the OpenAI-compatible chat
API that `vllm serve` serves (`POST {base_url}/v1/chat/completions`); its accuracy is the chosen model's.

- The prompt is ours, under TinyV's tag names and closing line (what TinyV models were trained on): the
  item's question when it has a prompt (TinyV's models read one; at most MAX_QUESTION_CHARS of it), the
  reference and the extracted answer, and it asks for one word, True or False.
- The reply is read strictly: that one word (any case, bold or quoted, a final period), after the last
  `</think>` of a thinking model. TinyV reads any reply containing "true" as True ("not true" passes);
  here anything else is `undecided`, and the rules' verdict stands.
- It runs in a grading worker, inside the item's deadline: a call gets `timeout_s`, cut to what the
  worker's alarm leaves (see reward_api.pool), so a slow verifier costs its own verdict, not the item.
- Verdicts (`undecided` included, never a failed call) are remembered per worker in a bounded LRU keyed
  by model, base_url, max_tokens, answer and reference: a group's samples often share their final answer.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import signal
import time
from dataclasses import dataclass

import httpx

from reward_api.cache import LRUCache, digest
from reward_api.profiles import MathVerifierSettings

PROMPT = (
    "You are checking a math answer against its reference. A rule-based checker found them different, but "
    "the model's answer may still be correct, written in another form: other notation, LaTeX or Unicode, "
    "another order of solutions, other names of variables, a label or units around the value, or a value "
    "that rounds to the reference as written. It is incorrect if it differs in value, misses or adds a "
    "solution, or has a wrong endpoint or bracket.\n\n"
    "{question}<ground_truth_answer>{reference}</ground_truth_answer>\n\n"
    "<model_answer>{answer}</model_answer>\n\n"
    'Return "True" if the model\'s answer is correct, otherwise return "False".'
)
# Answers or references longer than this are not sent: a final answer is short, and a long one would
# overflow a small verifier's context (its server would refuse the prompt).
MAX_SENT_CHARS = 2000
MAX_QUESTION_CHARS = 8000  # a longer question is sent as its start and its end, where the task is usually asked
MAX_REPLY_BYTES = 1 << 20  # a chat completion of a few tokens is ~1 KB: a longer answer is not a verifier's
ALARM_MARGIN_S = 0.25  # of the item's deadline, kept to report a verifier that ran out of time
REPLY_ECHO_CHARS = 80  # of an undecided reply, echoed in details
_VERDICTS = {"true": True, "false": False}
_WRAPPING = " \t\r\n*_`'\"."  # bold, code or quotes around the word, a final period


@dataclass(frozen=True)
class Verification:
    """What the verifier said about one answer."""

    verdict: str  # "equal", "not equal", "undecided", or "error: <what went wrong>"
    reply: str | None = None  # an undecided model's reply, cut short
    cached: bool = False

    @property
    def equal(self) -> bool:
        return self.verdict == "equal"

    def details(self) -> dict[str, object]:
        out: dict[str, object] = {"verifier": self.verdict}
        if self.reply is not None:
            out["verifier_reply"] = self.reply
        if self.cached:
            out["verifier_cached"] = True
        return out


class VerifierError(Exception):
    """The verifier gave no reply to read; the message says what went wrong and what to do."""


def verify(answer: str, reference: str, settings: MathVerifierSettings, question: str | None = None) -> Verification:
    """Ask the verifier model whether `answer` is equivalent to `reference` (for `question`); never raises."""
    key = digest(settings.model, settings.base_url, str(settings.max_tokens), answer, reference, question or "")
    if (known := _CACHE.get(key)) is not None:
        return dataclasses.replace(known, cached=True)
    if len(answer) > MAX_SENT_CHARS or len(reference) > MAX_SENT_CHARS:
        return Verification(f"error: answer or reference longer than {MAX_SENT_CHARS} characters; not sent")
    try:
        reply = ask(verifier_prompt(answer, reference, question), settings)
    except VerifierError as exc:
        return Verification(f"error: {exc}")
    decided = parse_verdict(reply)
    if decided is None:
        outcome = Verification("undecided", reply=reply[:REPLY_ECHO_CHARS].encode("utf-8", "replace").decode())
    else:
        outcome = Verification("equal" if decided else "not equal")
    _CACHE.max_entries = settings.cache_size  # the profile's bound; 0 keeps nothing
    _CACHE.put(key, outcome)
    return outcome


def verifier_prompt(answer: str, reference: str, question: str | None) -> str:
    """The one user message the verifier reads."""
    asked = ""
    if question and question.strip():
        if len(question) > MAX_QUESTION_CHARS:
            half = MAX_QUESTION_CHARS // 2
            question = f"{question[:half]} [...] {question[-half:]}"
        asked = f"<question>{question.strip()}</question>\n\n"
    return PROMPT.format(question=asked, reference=reference, answer=answer)


def parse_verdict(reply: str) -> bool | None:
    """True or False when the reply is that one word (after a thinking model's `</think>`), else None."""
    return _VERDICTS.get(reply.rsplit("</think>", 1)[-1].strip(_WRAPPING).lower())


def ask(prompt: str, settings: MathVerifierSettings) -> str:
    """The model's reply to `prompt` as one user message, at temperature 0; raises VerifierError."""
    timeout_s = _time_allowed(settings.timeout_s)
    url = endpoint(settings.base_url)
    body = {
        "model": settings.model,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": settings.max_tokens,
        "temperature": 0,
    }
    deadline = time.monotonic() + timeout_s
    within = f"{timeout_s:.3g}s" + (" (what the item's deadline left)" if timeout_s < settings.timeout_s else "")
    try:
        with _client().stream("POST", url, json=body, headers=_auth(settings), timeout=timeout_s) as response:
            data = _read(response, deadline, f"{url} sent no complete reply within {within}")
    except httpx.TimeoutException:
        raise VerifierError(f"no reply from {url} within {within}; raise timeout_s or check its load") from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise VerifierError(f"cannot reach {url} ({type(exc).__name__}: {exc}); is it serving?") from None
    if response.status_code != 200:
        raise VerifierError(f"{url} answered HTTP {response.status_code}: {_error_message(data)}")
    return _content(data, url)


def endpoint(base_url: str) -> str:
    """The chat completions URL: `{base_url}/v1/chat/completions`, or `{base_url}/chat/completions` when
    base_url already ends in /v1 (the OpenAI client's convention)."""
    base = base_url.rstrip("/")
    return f"{base}/chat/completions" if base.endswith("/v1") else f"{base}/v1/chat/completions"


@functools.cache
def _client() -> httpx.Client:
    """One per grading worker, made on its first call (never in the forkserver): connections are reused."""
    return httpx.Client()


def _time_allowed(timeout_s: float) -> float:
    """`timeout_s`, cut to what the grading worker's alarm leaves of the item's deadline (no alarm: the
    caller is not a worker, e.g. a test or the CLI grading in-process)."""
    left = signal.getitimer(signal.ITIMER_REAL)[0]
    if left == 0:
        return timeout_s
    allowed = min(timeout_s, left - ALARM_MARGIN_S)
    if allowed <= 0:
        raise VerifierError("no time left of the item's deadline (REWARD_API_ITEM_DEADLINE_S) after the rules")
    return allowed


def _auth(settings: MathVerifierSettings) -> dict[str, str]:
    if settings.api_key_env is None:
        return {}
    key = os.environ.get(settings.api_key_env)
    if not key:
        raise VerifierError(f"{settings.api_key_env} is not set in the reward service's environment")
    return {"Authorization": f"Bearer {key}"}


def _read(response: httpx.Response, deadline: float, late: str) -> bytes:
    """The body, complete by `deadline` and at most MAX_REPLY_BYTES (httpx's timeouts bound each wait)."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise VerifierError(f"{response.url} sent more than {MAX_REPLY_BYTES} bytes; not a chat completion")
        if time.monotonic() > deadline:
            raise VerifierError(late)
        chunks.append(chunk)
    return b"".join(chunks)


def _error_message(data: bytes) -> str:
    """The server's own message (vLLM and OpenAI: `{"error": {"message": ...}}` or `{"message": ...}`), cut
    short; nothing else of a body is echoed, since base_url comes from the request."""
    try:
        body = json.loads(data)
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
    except (ValueError, AttributeError):
        message = None
    return str(message)[:200] if isinstance(message, str) else "no error message"


def _content(data: bytes, url: str) -> str:
    """The reply's text; a body that is not a chat completion is an error that echoes none of it."""
    try:
        content = json.loads(data)["choices"][0]["message"]["content"]
    except (ValueError, LookupError, TypeError):
        content = None
    if not isinstance(content, str):
        raise VerifierError(f"{url} did not answer with a chat completion; is it an OpenAI-compatible server?")
    return content


# Verdicts this worker has seen, keyed by a digest (answers may be long); bounded by the number of
# entries, the cache_size of the profile that asked last; the byte bound is for the few with a reply echo.
_CACHE: LRUCache[Verification] = LRUCache(max_entries=0, max_bytes=64 << 20)
