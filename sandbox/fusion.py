"""SandboxFusion's `POST /run_code`, answered the way SandboxFusion answers it.

verl (`sandbox_fusion.url`) and other SandboxFusion clients post one program with one
stdin and read back the compile and run results. Field names, defaults, null
conventions and status rules follow SandboxFusion's own code:
`sandbox/server/sandbox_api.py` (RunCodeRequest, RunCodeResponse, parse_run_status)
and `sandbox/runners/types.py` (CommandRunResult, CommandRunStatus, Language).

- no compile step (Python, Node.js): `compile_result` is null; a Python syntax error is a
  run that exited with code 1, as it is for `python main.py`, and byte-compiling Python is
  bounded by `run_timeout` (it is part of `python main.py`'s run there);
- `code` over the sandbox's MAX_SOURCE_MB is refused before it runs (`code: ...`, type
  `too_large`; the service answers 413);
- a failed or timed-out compile: `run_result` is null;
- `TimeLimitExceeded` results have a null `return_code`; a program killed by a signal
  has `return_code` = -signal (as asyncio reports it); killed for printing more than
  the output limit: -9;
- status: `SandboxError` if any result is `Error` (message: its stderr), else `Failed` on
  a time limit or a non-zero return code, else `Success`; `message` is empty unless
  `SandboxError`;
- `memory_limit_MB` <= 0 (SandboxFusion: unlimited) gets the service's default bound;
- `files` (path -> base64, written before compiling; a null content, or a name holding
  `IGNORE_THIS_FILE`, is skipped) and `fetch_files` (paths whose contents come back base64 in
  `files`; a missing one is left out) as `restore_files` and `run_commands` treat them there:
  a path relative to the program's directory or absolute inside the sandbox (sandbox/files.py;
  anywhere else is a 422 naming the path);

verl's client (`verl/utils/reward_score/sandbox_fusion/utils.py`, call_sandbox_api) reads
for compile_timeout + run_timeout + 10 s and retries only a 504: the service starts a run
only when it can still finish within that deadline (`start_within_s`), else answers 504.
"""

from __future__ import annotations

import signal
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, field_validator

from sandbox.executor import MAX_TEST_MEMORY_MB, Execution, Limits, ProcessResult
from sandbox.files import decoded_files
from sandbox.languages import Language, LanguageError, get_language
from sandbox.wire import check_source_size

# SandboxFusion's `Language` literal: anything else is a 422 there, and here unless it is one
# of our own language names (c, javascript, ...).
FUSION_LANGUAGES = frozenset(
    {
        "python", "python2", "cpp", "nodejs", "go", "go_test", "java", "php", "csharp", "bash", "typescript", "sql",
        "rust", "cuda", "lua", "R", "perl", "D_ut", "ruby", "scala", "julia", "pytest", "junit",
        "kotlin_script", "jest", "verilog", "python_gpu", "lean", "swift", "racket", "gtest", "react",
    }
)  # fmt: skip
_IGNORED_FILE = "IGNORE_THIS_FILE"  # SandboxFusion's restore_files skips a name holding this
_SLACK_S = 10.0  # on top of compile and run time: sandbox start-up and teardown
_VERL_READ_MARGIN_S = 10.0  # verl's API_TIMEOUT: it waits compile_timeout + run_timeout + this for an answer
START_UP_S = 2.0  # sandbox start-up and teardown and the HTTP round trip (0.1 s on an idle host), generously


def _checked_base64(files: dict[str, str | None]) -> dict[str, str | None]:
    decoded_files(files)  # a ValueError naming the path whose content is not base64: a 422 under `files`
    return files


# SandboxFusion's `files`: path -> base64 content (a null content is skipped), checked as the request arrives.
Base64Files = Annotated[dict[str, str | None], AfterValidator(_checked_base64)]


class RunCodeRequest(BaseModel):
    """SandboxFusion's RunCodeRequest: same fields, types and defaults."""

    compile_timeout: float = Field(10, description="compile timeout for compiled languages")
    run_timeout: float = Field(10, description="code run timeout")
    memory_limit_MB: int = Field(
        -1, le=MAX_TEST_MEMORY_MB, description="maximum memory allowed in megabytes (<= 0: the service's default)"
    )
    code: str = Field(..., description="the code to run")
    stdin: str | None = Field(None, description="optional string to pass into stdin")
    language: str = Field(..., description="the language or execution mode to run the code")
    files: Base64Files = Field(
        {},
        description="files to write before the run: path (relative to the program's directory, or absolute under "
        "/sandbox or /tmp) -> base64 content",
    )
    fetch_files: list[str] = Field([], description="paths whose contents come back base64 in the answer's `files`")

    @field_validator("language")
    @classmethod
    def _known_language(cls, language: str) -> str:
        if language in FUSION_LANGUAGES:
            return language
        get_language(language)  # raises UnknownLanguage (a ValueError): reported under `language`
        return language

    @field_validator("code")
    @classmethod
    def _within_source_limit(cls, code: str) -> str:
        return check_source_size(code)

    def given_files(self) -> dict[str, bytes]:
        """The files to write, decoded; those SandboxFusion skips (null content, IGNORE_THIS_FILE) left out."""
        return {path: content for path, content in decoded_files(self.files).items() if _IGNORED_FILE not in path}

    def resolve_language(self) -> Language | None:
        """Our language for this request; None for SandboxFusion languages we do not run."""
        try:
            return get_language(self.language)
        except LanguageError:
            return None

    def limits(self, default_memory_mb: int) -> Limits:
        memory_mb = self.memory_limit_MB if self.memory_limit_MB > 0 else default_memory_mb
        language = self.resolve_language()
        compiled = language is not None and language.compile is not None
        return Limits(
            time_s=self.run_timeout,
            wall_s=self.run_timeout,
            memory_mb=memory_mb,
            compile_s=self.compile_timeout if compiled else self.run_timeout,
            total_s=2 * self.compile_timeout + self.run_timeout + _SLACK_S,  # compiles get 2x their CPU time as wall
        )

    def client_deadline_s(self) -> float:
        """How long verl's client waits for the answer (call_sandbox_api's `request_timeout`)."""
        return self.compile_timeout + self.run_timeout + _VERL_READ_MARGIN_S

    def start_within_s(self, language: Language) -> float:
        """The longest this run may wait for a worker and still answer within `client_deadline_s`.

        The run is counted at its limits (a compile at its CPU limit; its wall limit, twice that, is only
        reached on a starved host), so a run that starts in time finishes in time whatever the program does.
        Python's byte-compiling is not counted (milliseconds; bounded by run_timeout): only a program made to
        compile slowly answers later, as the time limit its run would be.
        """
        compile_s = self.compile_timeout if language.compile is not None else 0.0
        return self.client_deadline_s() - (compile_s + self.run_timeout + START_UP_S)


def command_result(result: ProcessResult) -> dict[str, Any]:
    """SandboxFusion's CommandRunResult of one process."""
    timed_out = result.status == "timeout"
    return {
        "status": "TimeLimitExceeded" if timed_out else "Finished",
        "execution_time": result.wall_s,
        "return_code": None if timed_out else _return_code(result),
        "stdout": result.stdout,
        "stderr": result.stderr,
    }


def _return_code(result: ProcessResult) -> int | None:
    if result.status == "signaled" and result.signal is not None:
        return -result.signal
    if result.status == "output_limit":
        return -signal.SIGKILL
    return result.exit_code


def _missing(execution: Execution) -> dict[str, Any]:
    """A stage that produced no result: cut off by the run's time budget, or the sandbox failed (a run starved
    past its budget too: no verdict)."""
    if execution.timed_out and execution.sandbox_error is None:
        return {"status": "TimeLimitExceeded", "execution_time": None, "return_code": None, "stdout": "", "stderr": ""}
    return sandbox_error_result(execution.sandbox_error or "the sandbox ended without a result")


def sandbox_error_result(message: str) -> dict[str, Any]:
    return {"status": "Error", "execution_time": None, "return_code": None, "stdout": None, "stderr": message}


def unsupported(reason: str) -> dict[str, Any]:
    """A language this sandbox cannot run (`reason` names it and why): a sandbox-side error, as there."""
    return response(None, sandbox_error_result(reason))


def run_code_response(language: Language, execution: Execution) -> dict[str, Any]:
    return response(*_results(language, execution), execution.fetched)


def _results(language: Language, execution: Execution) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    compile_result = run_result = None
    compiled = execution.compile
    if language.compile is None and compiled is not None and not compiled.ok:  # a failed run there (Python's syntax)
        run_result = command_result(compiled)
    elif language.compile is not None and compiled is None:
        compile_result = _missing(execution)
    else:
        compile_result = command_result(compiled) if language.compile is not None else None
        if compiled is None or compiled.ok:
            run = execution.tests[0]
            run_result = command_result(run) if run is not None else _missing(execution)
    return compile_result, run_result


def response(
    compile_result: dict[str, Any] | None, run_result: dict[str, Any] | None, files: dict[str, str] | None = None
) -> dict[str, Any]:
    """SandboxFusion's RunCodeResponse, status and message by its parse_run_status rules."""
    results = [r for r in (compile_result, run_result) if r is not None]
    status, message = "Success", ""
    if errors := [r for r in results if r["status"] == "Error"]:
        status, message = "SandboxError", errors[0]["stderr"] or ""
    elif any(r["status"] == "TimeLimitExceeded" or r["return_code"] not in (None, 0) for r in results):
        status = "Failed"
    return {
        "status": status,
        "message": message,
        "compile_result": compile_result,
        "run_result": run_result,
        "executor_pod_name": None,
        "files": files or {},
    }
