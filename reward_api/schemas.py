"""Wire formats: the native API and the compatibility endpoints (OpenRLHF, slime).

Items are validated one by one (`RewardItem.model_validate`), so a bad item gets
`status: invalid` while the rest of its batch is graded; only a request whose
envelope is malformed is refused as a whole, with a 4xx naming the field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)
from pydantic_core import PydanticCustomError

from reward_api.grading import TASKS
from reward_api.profiles import Count, PresetName, ProfileOverride
from service_kit.errors import ErrorBody

Status = Literal["ok", "timeout", "error", "invalid"]


def clean_text(text: str) -> str:
    """Replace lone surrogates (legal in JSON escapes, illegal in UTF-8) with U+FFFD."""
    if text.isascii():  # most texts: a flag CPython keeps, where encoding would copy the whole text
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class RewardItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    # The schema lists the tasks; at run time an unknown one makes its item `invalid`, not the batch.
    task: str = Field(
        description="Which grader decides accuracy; `auto`: code when the reference holds tests, else math.",
        json_schema_extra={"enum": [*sorted(TASKS), "auto"]},
    )
    completion: str = Field(description="The model's output, as sampled (may hold <think>...</think>).")
    reference: Any = Field(None, description="Task-specific: a math answer; the numbers to sort; ...")
    id: str | int | None = Field(None, description="Echoed back in the result.")
    prompt: str | None = Field(None, description="Used by language consistency and the sort task.")
    group: str | int | None = Field(None, description="Items sharing a prompt (group length rewards).")
    group_size: Annotated[int, Strict()] | None = Field(
        None,
        ge=1,
        le=65536,
        description="How many samples the group holds in all, across requests: group components (kimi_length) wait "
        "for all of them, at most the request's `group_wait_s`, then are computed over the samples that came "
        "(`details.group.formed`: `partial`). Without it, the group is the request's items sharing `group`.",
    )
    num_tokens: Count | None = Field(None, ge=0, description="Completion length in tokens (length rewards).")
    target_language: str | None = Field(None, description="ISO 639-1 code for language consistency.")

    @field_validator("completion", "prompt", "target_language", "id", "group")
    @classmethod
    def _clean(cls, value: str | int | None) -> str | int | None:
        """Echoed or hashed texts must encode: a lone surrogate in one item's id would fail its batch's reply."""
        return clean_text(value) if isinstance(value, str) else value

    @field_validator("reference")
    @classmethod
    def _shallow(cls, value: Any) -> Any:
        if nesting_depth(value) > MAX_REFERENCE_DEPTH:
            raise ValueError(f"nested more than {MAX_REFERENCE_DEPTH} levels deep; send the answer or test cases flat")
        return value


# A reference is an answer, a list to sort or test cases: a few levels at most. Much deeper
# nesting is hostile, and would overflow the stack of whatever walks it (pickle, json).
MAX_REFERENCE_DEPTH = 32


def nesting_depth(value: Any) -> int:
    """How deep lists and objects nest in `value` (0 for a scalar), without recursion."""
    if not isinstance(value, dict | list | tuple):  # most references: an answer string
        return 0
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list | tuple):
            deepest = max(deepest, depth + 1)
            if deepest > MAX_REFERENCE_DEPTH:
                return deepest
            stack.extend((child, depth + 1) for child in node)
    return deepest


ItemList = Annotated[
    list[Any],
    WithJsonSchema({"type": "array", "items": RewardItem.model_json_schema()}),
]


def _preset_as_override(value: Any) -> Any:
    return {"name": value} if isinstance(value, str) else value


# A preset name or a preset with overrides, validated as one model so that an error names the field
# (`profile.weights.format`), not the branch of a union that did not match.
ProfileSpec = Annotated[
    ProfileOverride | None,
    BeforeValidator(_preset_as_override, json_schema_input_type=PresetName | ProfileOverride | None),
]


GroupWait = Annotated[
    float | None,
    Field(
        gt=0,
        le=3600,
        description="The most this request's items with `group_size` wait for the rest of their groups (seconds; "
        "keep it under the client's timeout), at most the service's REWARD_API_GROUP_WAIT_S; then their group "
        "components are computed over the samples that came.",
    ),
]


class RewardRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: ItemList = Field(description="The completions to grade; each is validated on its own.")
    profile: ProfileSpec = Field(
        None, description="A preset name (`r1`, `dapo`, `kimi`, `accuracy`, ...) or a preset with overrides."
    )
    group_wait_s: GroupWait = None


class GroupWithdrawal(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group: str | int = Field(description="The group, as its items carry it.")
    group_size: int = Field(ge=1, le=65536, description="The group's size, as its items carry it.")
    samples: int = Field(1, ge=1, le=65536, description="How many of its samples will not come.")


class WithdrawRequest(BaseModel):
    """Samples of groups that will not come (aborted, filtered out): their groups complete over the others."""

    model_config = ConfigDict(extra="forbid")

    groups: list[GroupWithdrawal] = Field(max_length=4096, description="At most 4096 a request.")
    profile: ProfileSpec = Field(None, description="The profile the groups' items are graded with.")


class WithdrawResponse(BaseModel):
    withdrawn: int = Field(description="Samples withdrawn.")


class RewardResult(BaseModel):
    id: str | int | None = None
    reward: float
    components: dict[str, float]
    status: Status
    details: dict[str, Any]


class RewardResponse(BaseModel):
    results: list[RewardResult]


class OpenRLHFRequest(BaseModel):
    """OpenRLHF's remote reward model call; `query` is prompt + response with special tokens."""

    query: list[str]
    prompts: list[str] = Field(default_factory=list, description="One per query, or none.")
    labels: list[Any] = Field(default_factory=list, description="One per query, or none.")

    @field_validator("prompts", "labels")
    @classmethod
    def _one_per_query(cls, value: list[Any], info: ValidationInfo) -> list[Any]:
        """OpenRLHF may send empty lists; a list of another length would pair answers with the wrong queries."""
        queries = info.data.get("query")
        if value and queries is not None and len(value) != len(queries):
            raise PydanticCustomError(
                "length_mismatch",
                "{count} {field} for {queries} queries; send one per query, or none",
                {"count": len(value), "field": info.field_name, "queries": len(queries)},
            )
        return value


class OpenRLHFResponse(BaseModel):
    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]


class SlimeRequest(BaseModel):
    """slime's remote reward call: one sample."""

    prompt: Any = None
    response: str
    label: Any = None


class SlimeKeyedResult(BaseModel):
    """`/slime?reward_key=K`: the reward under K, next to the item's components, status and details."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"additionalProperties": {"type": "number"}})

    components: dict[str, float]
    status: Status
    details: dict[str, Any]


class CodeReadiness(BaseModel):
    available: bool = Field(description="Whether code items are graded; when false they are answered `error`.")
    isolation: str = Field(
        description="Isolation level of code runs: bwrap+cgroup2, bwrap+cgroup1, bwrap+rlimits, none, "
        "sandbox-service (judged elsewhere) or unavailable."
    )
    detail: str = Field(description="What the level guarantees, or why code cannot be graded and what to do.")


class Readiness(BaseModel):
    ready: bool
    workers: int = Field(description="Grading workers alive.")
    want: int = Field(description="Grading workers configured.")
    code: CodeReadiness


# Requests that run as they are from /docs ("Try it out"); tests/test_api_contract.py sends each one.
_THINK_AND_ANSWER = "<think>2 + 2 is 4.</think> The answer is \\boxed{4}."
REWARDS_EXAMPLES: dict[str, dict[str, Any]] = {
    "math": {
        "summary": "Math with the R1 profile: accuracy + format + language",
        "value": {"items": [{"id": "q1", "task": "math", "completion": _THINK_AND_ANSWER, "reference": "4"}],
                  "profile": "r1"},
    },
    "sort": {
        "summary": "Sort: the numbers come from the reference",
        "value": {"items": [{"task": "sort", "completion": "<think>smallest first</think> 1 2 3",
                             "reference": [3, 1, 2]}]},
    },
    "code": {
        "summary": "Code: a program run against stdin/stdout tests in the sandbox",
        "value": {"items": [{"task": "code",
                             "completion": "```python\na, b = map(int, input().split())\nprint(a + b)\n```",
                             "reference": {"tests": [{"input": "1 2\n", "output": "3\n"},
                                                     {"input": "10 -4\n", "output": "6\n"}]}}]},
    },
    "dapo": {
        "summary": "DAPO (+1/-1 accuracy, soft overlong penalty) with its length window overridden",
        "value": {
            "items": [{"task": "math", "completion": "\\boxed{4}", "reference": "4", "num_tokens": 3500}],
            "profile": {"name": "dapo", "length": {"max_length": 4096, "cache_length": 1024}},
        },
    },
}  # fmt: skip
_CHATML_PROMPT = "<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n"
OPENRLHF_EXAMPLES: dict[str, dict[str, Any]] = {
    "math": {
        "summary": "Queries as OpenRLHF sends them: prompt + response with special tokens",
        "value": {"query": [_CHATML_PROMPT + _THINK_AND_ANSWER + "<|im_end|>", _CHATML_PROMPT + "\\boxed{5}<|im_end|>"],
                  "prompts": [_CHATML_PROMPT, _CHATML_PROMPT], "labels": ["4", "4"]},
    },
    "sort": {
        "summary": "A label that selects another task",
        "value": {"query": ["1 2 3"], "labels": ['{"task": "sort", "reference": [3, 1, 2]}']},
    },
}  # fmt: skip
SLIME_EXAMPLES: dict[str, dict[str, Any]] = {
    "math": {
        "summary": "One sample: the response alone and its label",
        "value": {"prompt": "What is 2 + 2?", "response": _THINK_AND_ANSWER, "label": "4"},
    },
    "chat": {
        "summary": "A chat prompt and a label that selects the sort task",
        "value": {"prompt": [{"role": "user", "content": "Sort 3 1 2"}], "response": "1 2 3",
                  "label": {"task": "sort", "reference": [3, 1, 2]}},
    },
}  # fmt: skip


class NotReady(ErrorBody, Readiness):
    """/readyz while workers are starting: the error contract plus the readiness fields."""
