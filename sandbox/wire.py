"""JSON wire format of the sandbox: test suites, limits and judge reports as plain dicts.

    {"kind": "stdio", "tests": [{"input": "1 2\\n", "output": "3"}],
     "comparison": {"float_tolerance": 1e-6, "case_sensitive": true}}
    {"kind": "call", "fn_name": "add", "tests": [{"args": [1, 2], "expected": 3}]}
    {"kind": "assert", "tests": [{"code": "assert add(1, 2) == 3"}]}
    {"kind": "program", "tests": [{"code": "def test_add():\\n    assert add(1, 2) == 3"}]}  # language: pytest

Limits are the fields of `sandbox.executor.Limits` (all optional). Pydantic validates
here, at the edge, and only here: past it everything is the dataclasses of
sandbox/judge.py and sandbox/executor.py. A malformed dict raises WireError whose
message names the field (`suite.stdio.tests.2.output: Field required`).
"""

from __future__ import annotations

import base64
import dataclasses
import typing
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
)
from pydantic_core import PydanticCustomError

from sandbox.executor import MAX_TEST_MEMORY_MB, Limits, source_size_error
from sandbox.files import from_base64, sandbox_path
from sandbox.judge import (
    AssertTest,
    CallTest,
    Comparison,
    JudgeReport,
    ProgramTest,
    StdioTest,
    TestSuite,
    TestVerdict,
    Verdict,
)
from sandbox.languages import get_language

_STRICT = ConfigDict(extra="forbid")


class WireError(ValueError):
    """Malformed wire data; the message names the offending field."""


def describe(error: ValidationError | list[dict[str, Any]], prefix: str = "") -> str:
    """`where: what` for the first error, `where` the dotted path of the field."""
    errors = error.errors() if isinstance(error, ValidationError) else error
    if not errors:
        return "invalid input"
    where = ".".join(str(part) for part in errors[0]["loc"] if part != "body")
    where = ".".join(part for part in (prefix, where) if part)
    return f"{where}: {errors[0]['msg']}" if where else errors[0]["msg"]


def check_source_size(code: str) -> str:
    """`code` when within the sandbox's source limit, else a `too_large` error naming the limit.

    Its own error type, so the service answers 413 (the request is too large), not 422.
    """
    if (too_large := source_size_error(code)) is not None:
        raise PydanticCustomError("too_large", too_large)
    return code


class _StdioTest(BaseModel):
    model_config = _STRICT
    input: str
    output: str


class _CallTest(BaseModel):
    model_config = _STRICT
    args: list[Any]
    expected: Any


class _AssertTest(BaseModel):
    model_config = _STRICT
    code: str


class _ProgramTest(BaseModel):
    model_config = _STRICT
    code: str
    prompt: str | None = None  # the code the program continues (compiled tests apart call its open function)


class _Comparison(BaseModel):
    model_config = _STRICT
    float_tolerance: float = Field(Comparison.float_tolerance, ge=0)
    case_sensitive: bool = Comparison.case_sensitive


class _SuiteBase(BaseModel):
    model_config = _STRICT
    fn_name: str | None = None
    comparison: _Comparison = _Comparison()
    files: dict[str, Annotated[bytes, BeforeValidator(from_base64)]] = {}  # path (sandbox/files.py) -> base64
    # content, written before compiling

    @field_validator("files")
    @classmethod
    def _placeable(cls, files: dict[str, bytes]) -> dict[str, bytes]:
        for path in files:
            sandbox_path(path, isolated=True)  # FilePathError is a ValueError: reported under `files`
        return files


class _StdioSuite(_SuiteBase):
    kind: Literal["stdio"]
    tests: list[_StdioTest] = Field(min_length=1)


class _CallSuite(_SuiteBase):
    kind: Literal["call"]
    fn_name: str = Field(min_length=1)
    tests: list[_CallTest] = Field(min_length=1)


class _AssertSuite(_SuiteBase):
    kind: Literal["assert"]
    tests: list[_AssertTest] = Field(min_length=1)


class _ProgramSuite(_SuiteBase):
    kind: Literal["program"]
    tests: list[_ProgramTest] = Field(min_length=1, max_length=1)  # the test code, in the program's language


SuiteModel = Annotated[_StdioSuite | _CallSuite | _AssertSuite | _ProgramSuite, Field(discriminator="kind")]
_TEST_TYPES: dict[str, type] = {"stdio": StdioTest, "call": CallTest, "assert": AssertTest, "program": ProgramTest}


def _limits_model() -> type[BaseModel]:
    """Limits' fields, each optional with Limits' default, the numbers positive, memory_mb at most
    MAX_TEST_MEMORY_MB."""
    hints = typing.get_type_hints(Limits)
    fields = {
        f.name: (hints[f.name], Field(f.default) if hints[f.name] is bool else Field(f.default, gt=0))
        for f in dataclasses.fields(Limits)
    }
    fields["memory_mb"] = (int, Field(Limits.memory_mb, gt=0, le=MAX_TEST_MEMORY_MB))
    return create_model("Limits", __config__=_STRICT, **fields)


LimitsModel = _limits_model()


class JudgeRequest(BaseModel):
    """Body of `POST /v1/judge`."""

    model_config = _STRICT
    language: str
    code: str
    suite: SuiteModel
    limits: LimitsModel = LimitsModel()
    stop_on_first_failure: bool = False

    @field_validator("language")
    @classmethod
    def _known_language(cls, language: str) -> str:
        get_language(language)  # UnknownLanguage is a ValueError: pydantic reports it under `language`
        return language

    @field_validator("code")
    @classmethod
    def _within_source_limit(cls, code: str) -> str:
        return check_source_size(code)

    @field_validator("suite")
    @classmethod
    def _python_only_kinds(cls, suite: BaseModel, info: ValidationInfo) -> BaseModel:
        language = info.data.get("language")
        if suite.kind in ("call", "assert") and language is not None and get_language(language).name != "python":
            raise ValueError(f"{suite.kind} suites run Python code, not {language}; use a stdio or program suite")
        return suite

    def to_suite(self) -> TestSuite:
        return suite_from_model(self.suite)

    def to_limits(self) -> Limits:
        return Limits(**self.limits.model_dump())


def suite_from_model(model: _StdioSuite | _CallSuite | _AssertSuite | _ProgramSuite) -> TestSuite:
    make = _TEST_TYPES[model.kind]
    return TestSuite(
        kind=model.kind,
        tests=tuple(make(**test.model_dump()) for test in model.tests),
        fn_name=model.fn_name,
        comparison=Comparison(**model.comparison.model_dump()),
        files=dict(model.files),
    )


_SUITE_ADAPTER: TypeAdapter = TypeAdapter(SuiteModel)


def suite_from_dict(data: Any) -> TestSuite:
    try:
        return suite_from_model(_SUITE_ADAPTER.validate_python(data))
    except ValidationError as exc:
        raise WireError(describe(exc, "suite")) from None


def suite_to_dict(suite: TestSuite) -> dict[str, Any]:
    data = dataclasses.asdict(suite)
    data["files"] = {path: base64.b64encode(content).decode("ascii") for path, content in suite.files.items()}
    return data


def limits_from_dict(data: Any) -> Limits:
    try:
        return Limits(**LimitsModel.model_validate(data if data is not None else {}).model_dump())
    except ValidationError as exc:
        raise WireError(describe(exc, "limits")) from None


def limits_to_dict(limits: Limits) -> dict[str, Any]:
    return dataclasses.asdict(limits)


class _TestVerdict(BaseModel):
    verdict: Verdict
    time_s: float = 0.0
    detail: str = ""
    name: str = ""


class _Report(BaseModel):
    model_config = ConfigDict(extra="allow")  # JudgeReport.details ride at the top level
    passed: int
    total: int
    tests: list[_TestVerdict]
    compile_error: str | None = None
    sandbox_error: str | None = None


def report_from_dict(data: Any) -> JudgeReport:
    try:
        model = _Report.model_validate(data)
    except ValidationError as exc:
        raise WireError(describe(exc, "report")) from None
    return JudgeReport(
        tests=[TestVerdict(t.verdict, t.time_s, t.detail, t.name) for t in model.tests],
        compile_error=model.compile_error,
        sandbox_error=model.sandbox_error,
        details=dict(model.model_extra or {}),
    )
