"""Wire formats: the native API and the compatibility endpoints (OpenRLHF, slime).

Items are validated one by one (`RewardItem.model_validate`), so a bad item gets
`status: invalid` while the rest of its batch is graded; only a request whose
envelope is malformed is refused as a whole, with a 4xx naming the field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator

from reward_api.profiles import ProfileOverride

Status = Literal["ok", "timeout", "error", "invalid"]


def clean_text(text: str) -> str:
    """Replace lone surrogates (legal in JSON escapes, illegal in UTF-8) with U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class RewardItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    task: str = Field(description="Which grader decides accuracy: `math`, `sort`, ...")
    completion: str = Field(description="The model's output, as sampled (may hold <think>...</think>).")
    reference: Any = Field(None, description="Task-specific: a math answer; the numbers to sort; ...")
    id: str | int | None = Field(None, description="Echoed back in the result.")
    prompt: str | None = Field(None, description="Used by language consistency and the sort task.")
    group: str | int | None = Field(None, description="Items sharing a prompt (group length rewards).")
    num_tokens: int | None = Field(None, ge=0, description="Completion length in tokens (length rewards).")
    target_language: str | None = Field(None, description="ISO 639-1 code for language consistency.")

    @field_validator("completion", "prompt", "target_language")
    @classmethod
    def _clean(cls, value: str | None) -> str | None:
        return None if value is None else clean_text(value)


ItemList = Annotated[
    list[Any],
    WithJsonSchema({"type": "array", "items": RewardItem.model_json_schema()}),
]


class RewardRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: ItemList = Field(description="The completions to grade; each is validated on its own.")
    profile: str | ProfileOverride | None = Field(
        None, description="A preset name (`r1`, `dapo`, `kimi`, `accuracy`, ...) or a preset with overrides."
    )


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
    prompts: list[str] = Field(default_factory=list)
    labels: list[Any] = Field(default_factory=list)


class OpenRLHFResponse(BaseModel):
    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]


class SlimeRequest(BaseModel):
    """slime's remote reward call: one sample."""

    prompt: Any = None
    response: str
    label: Any = None
