"""The code grader: run the answer's program against the reference's tests in the sandbox.

The program is a fenced code block (```lang ... ```) of the answer part: the text after the
last `</think>` (inside `<answer>` when present), as for the math grader. Code that appears
only in the chain of thought is a draft, not an answer: it is never looked at. Of the closed
blocks there, the last one whose info string names a language the sandbox runs is taken
(output samples in a ```text block after the solution do not replace it; nor does a ```bash
block saying how to run it), else the last block. An unclosed fence (a cut-off answer) is
no block. Its language is the reference's `language` where it names one (a fence naming another is a wrong answer:
the fence never chooses the runtime and its allowances), else the fence's, else Python. An answer in a language the
sandbox cannot run is a wrong answer saying why, never a status a trainer masks.

Accuracy is the fraction of tests passed (1 or 0 with `all_or_nothing`); details carry the
judge's verdict per test. A completion without code scores 0 with a reason; a program over
the sandbox's source limit (sandbox.executor.MAX_SOURCE_MB) is a compile error naming it,
whichever backend judges; a sandbox that fails (not the program) raises, so the item reports
`error` rather than a wrong reward.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections import Counter
from dataclasses import dataclass
from typing import Any

from reward_api import call_control
from reward_api.graders.base import InvalidItem, Score
from reward_api.graders.code_reference import CodeReference, parse_reference
from reward_api.graders.maths.extract import answer_region
from reward_api.profiles import CodeSettings
from sandbox.executor import Cancel, source_size_error
from sandbox.files import FilePathError
from sandbox.judge import JudgeBackend, JudgeReport, LocalJudge, compile_error_report
from sandbox.languages import LanguageError, LanguageUnavailable, UnknownLanguage, get_language

# Per-test verdicts echoed in `details`; details travel back to the trainer with every item.
MAX_ECHOED_TESTS = 50
# A fence line: indentation, three or more backticks, the info string. No nested quantifiers:
# each line start costs at most its own length.
_FENCE = re.compile(r"^([ \t]*)(`{3,})([^`\n]*)$", re.MULTILINE)


class SandboxError(RuntimeError):
    """The sandbox itself failed; the item reports `error`."""


@dataclass(frozen=True)
class CodeBlock:
    code: str
    language: str | None  # named by the fence, when the sandbox knows the language


def grade_code(
    completion: str, reference: object, settings: CodeSettings, backend: JudgeBackend, max_run_s: float = math.inf
) -> Score:
    ref = parse_reference(reference, settings, max_run_s)
    block = extract_code(completion)
    if block is None:
        return Score(0.0, {"reason": "no fenced code block in the answer"})
    # The reference's language where it names one: a fence must not choose another runtime and its allowances.
    chosen_by_answer = ref.suite.kind != "program" and ref.language is None and block.language is not None
    language = (block.language if chosen_by_answer else ref.language) or "python"
    details: dict[str, Any] = {"language": language, "code_chars": len(block.code)}
    if ref.suite.kind in ("call", "assert") and (block.language or "python") != "python":
        return Score(0.0, details | {"reason": f"{ref.suite.kind} tests need Python, the answer is {block.language}"})
    if ref.language is not None and block.language not in (None, ref.language) and ref.suite.kind != "program":
        return Score(
            0.0, details | {"reason": f"the reference asks for {ref.language}, the answer is {block.language}"}
        )
    program = ref.program(block.code)
    # Judged here too: a remote sandbox refuses a request this large (413), which would be no verdict.
    if (too_large := source_size_error(program)) is not None:
        report = compile_error_report(len(ref.suite.tests), too_large)
    else:
        try:
            report = _judge(backend, language, program, ref)
        except LanguageError as exc:  # not enabled here, its toolchain missing, or no toolchain runs it here
            if chosen_by_answer:  # the answer's choice, not the item's fault: a wrong answer, never a masked status
                return Score(0.0, details | {"reason": f"the answer's language cannot run here: {exc}"})
            raise InvalidItem(str(exc)) from None
        except FilePathError as exc:  # a reference file where the program's own source goes
            raise InvalidItem(f"reference.files: {exc}") from None
    if report.sandbox_error:
        raise SandboxError(report.sandbox_error[-500:])
    all_passed = report.passed == len(report.tests) > 0
    value = float(all_passed) if settings.all_or_nothing else report.pass_fraction
    return Score(value, details | _report_details(report, ref))


def _judge(backend: JudgeBackend, language: str, program: str, ref: CodeReference) -> JudgeReport:
    """Judge, letting the pool see the run's CPU and stop it (call_control.py) when judging happens here."""
    control = call_control.current()
    if control is None or not isinstance(backend, LocalJudge):
        return backend.judge(language, program, ref.suite, ref.limits, ref.stop_on_first_failure)
    cancel = Cancel()
    control.attach(cancel)
    try:
        return backend.judge(language, program, ref.suite, ref.limits, ref.stop_on_first_failure, cancel)
    finally:
        control.attach(None)


def extract_code(completion: str) -> CodeBlock | None:
    """The answer's program, or None when its answer part has no closed fenced block.

    A shell block (```bash) is the program only when no other language's block is there: answers often end
    with how to run the solution (`python main.py < input.txt`)."""
    last: CodeBlock | None = None
    last_named: CodeBlock | None = None
    last_shell: CodeBlock | None = None
    for info, code in _fenced_blocks(answer_region(completion)):
        last = CodeBlock(code, _fence_language(info))
        if last.language == "bash":
            last_shell = last
        elif last.language is not None:
            last_named = last
    return last_named or last_shell or last


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of every closed block; a fence line inside a block is body, as in CommonMark."""
    blocks: list[tuple[str, str]] = []
    opening: re.Match[str] | None = None
    for fence in _FENCE.finditer(text):
        if opening is None:
            opening = fence
        elif not fence.group(3).strip() and len(fence.group(2)) >= len(opening.group(2)):
            body = text[opening.end() + 1 : fence.start()]
            blocks.append((opening.group(3), textwrap.dedent(body) if opening.group(1) else body))
            opening = None
    return blocks


def _fence_language(info: str) -> str | None:
    words = info.split()
    if not words:
        return None
    try:
        return get_language(words[0]).name
    except LanguageUnavailable:  # a language the sandbox knows it cannot run: judged, so the item says why
        return words[0]
    except UnknownLanguage:
        return None


def _report_details(report: JudgeReport, ref: CodeReference) -> dict[str, Any]:
    details = report.to_dict()
    details["verdicts"] = dict(Counter(str(test.verdict) for test in report.tests))
    if len(details["tests"]) > MAX_ECHOED_TESTS:
        details["tests_not_shown"] = len(details["tests"]) - MAX_ECHOED_TESTS
        details["tests"] = details["tests"][:MAX_ECHOED_TESTS]
    if ref.tests_in_reference > len(ref.suite.tests):
        details["tests_in_reference"] = ref.tests_in_reference
    return details
