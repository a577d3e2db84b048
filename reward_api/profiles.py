"""Reward profiles: which components make up the reward, their weights and settings.

A profile is a preset name (`r1`, `dapo`, `kimi`, or one component alone) or an
inline object that starts from a preset and overrides weights and settings:

    {"name": "r1", "weights": {"language": 0.1}, "format": {"mode": "lenient"}}

The reward of an item is

    reward = sum(weight[c] * component[c] for c in weights)

where the `accuracy` component is the task grader's value in [0, 1] mapped
linearly onto `accuracy_range` (DAPO's +1/-1 is `accuracy_range = (-1, 1)`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, WithJsonSchema, create_model, model_validator

# Components computed from an item's own text, in a worker process.
TEXT_COMPONENTS = ("accuracy", "format", "language", "repetition")
# Components computed from lengths, correctness and groups, after the text ones.
LENGTH_COMPONENTS = ("overlong", "cosine", "kimi_length")
COMPONENTS = TEXT_COMPONENTS + LENGTH_COMPONENTS

# Every number in a profile is finite and bounded, and `false` is not 0: a weight of 1e308 overflows the
# reward's sum to inf and NaN propagates, and JSON cannot carry either (the reward would read `null`).
# With |weight|, |accuracy_range| and every component's bound at most MAX_MAGNITUDE, a reward stays
# within 7 * MAX_MAGNITUDE**2, finite. A field's own bound goes inside: `Annotated[Number, Field(ge=0)]`
# (a bound given in the field's `Field()` would be overridden by Number's).
MAX_MAGNITUDE = 1e6
Number = Annotated[float, Strict(), Field(allow_inf_nan=False, ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE)]
# Lengths, token counts and limits: far above any real one, and exact as floats in length arithmetic.
MAX_COUNT = 10**9
Count = Annotated[int, Strict(), Field(le=MAX_COUNT)]
# Weights name components; the schema lists them, and Profile says which key is unknown.
Weights = Annotated[dict[str, Number], Field(json_schema_extra={"propertyNames": {"enum": list(COMPONENTS)}})]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MathVerifierSettings(_Section):
    """A verifier model (OpenAI-compatible chat API, e.g. `vllm serve`) for math answers the rules reject;
    exact behaviour in `reward_api.graders.maths.verifier`."""

    base_url: str = Field(
        max_length=2000,
        pattern=r"^https?://[^/?#\s]+",
        description="The server, e.g. `http://127.0.0.1:8000` for `vllm serve`; the verifier POSTs to "
        "`{base_url}/v1/chat/completions` (a base_url ending in `/v1` is taken as it is).",
    )
    model: str = Field(
        min_length=1, max_length=500, description="The model name the server serves, e.g. `zhangchenxu/TinyV-1.5B`."
    )
    timeout_s: Annotated[Number, Field(gt=0, le=600)] = Field(
        5.0,
        description="Seconds to connect, and again for the whole reply; cut to what is left of the item's "
        "deadline (REWARD_API_ITEM_DEADLINE_S). A call past it keeps the rules' verdict, with "
        "`verifier: error: ...` in the item's details.",
    )
    max_tokens: Count = Field(
        8, gt=0, description="Tokens the model may generate: 8 for a True/False model, ~512 for a thinking one."
    )
    api_key_env: str | None = Field(
        None,
        pattern=r"^MATH_VERIFIER_[A-Z0-9_]+$",
        description="The service's environment variable holding the server's API key (vLLM's `--api-key`), "
        "sent as a bearer token; only `MATH_VERIFIER_*` names, so a request cannot send other secrets away.",
    )
    cache_size: Count = Field(
        10_000,
        ge=0,
        le=1_000_000,
        description="Verdicts each grading worker remembers, keyed by model, base_url, max_tokens, answer and "
        "reference (LRU, at most 64 MB of them); 0 remembers none. Failed calls are never remembered.",
    )


class MathSettings(_Section):
    """Answer extraction and equivalence for `task: math`."""

    rel_tol: Annotated[Number, Field(ge=0)] = Field(
        1e-9,
        description="Relative tolerance when either side is a decimal approximation "
        "that carries no stated precision; exact values always compare exactly.",
    )
    percent_equals_fraction: bool = Field(
        True, description="Accept `50%` for a reference of `0.5` or `1/2` and vice versa."
    )
    ignore_units: bool = Field(True, description="Strip units and text wrappers such as `\\text{cm}`.")
    verifier: MathVerifierSettings | None = Field(
        None,
        description="A verifier model asked about answers the rules reject (TinyV-style); none by default. "
        "Its accuracy is the chosen model's.",
    )


class FormatSettings(_Section):
    """The R1 `<think>...</think>` answer format; exact rules in `reward_api.graders.format`."""

    mode: Literal["strict", "lenient", "tag_count"] = Field(
        "strict",
        description="strict: the whole completion is <think>...</think> then a non-empty answer "
        "(a completion with no <think> and one </think> counts: the chat template opened the block); "
        "lenient: one well-ordered think block anywhere, non-empty answer after it; "
        "tag_count: 1/len(tags) per expected tag seen exactly once, 0.25 each with answer tags.",
    )
    think_open: str = Field("<think>", min_length=1)
    think_close: str = Field("</think>", min_length=1)
    answer_open: str | None = Field(
        None, min_length=1, description="Also require the answer inside these tags, e.g. <answer>."
    )
    answer_close: str | None = Field(None, min_length=1, description="Set together with answer_open.")

    @model_validator(mode="after")
    def _answer_tags_paired(self) -> FormatSettings:
        if (self.answer_open is None) != (self.answer_close is None):
            raise ValueError("answer_open and answer_close must be set together")
        return self


class LanguageSettings(_Section):
    """DeepSeek-R1 language consistency of the chain of thought; rules in `reward_api.graders.language`."""

    target_language: str | None = Field(
        None,
        description="ISO 639-1 code; an item's own `target_language` wins. When both are absent, the prompt's "
        "language when detected confidently (a script that implies it, such as Han, or 3+ words clearly of one "
        "language), else the chain of thought's own dominant language: the value is then how consistently it "
        "keeps to one language. `details.language.target_source` says which.",
    )
    languages: tuple[str, ...] = Field(
        ("en", "zh", "ja", "ko", "fr", "de", "es", "pt", "it", "ru"),
        min_length=1,
        description="ISO 639-1 codes the language identifier (lingua) chooses among for Latin, Cyrillic, "
        "Arabic and Devanagari text; the target is always added. Other scripts (Han, Kana, Hangul, ...) "
        "are attributed by script. Each Latin-script language costs a worker about 30 MB and 0.15 s "
        "to load.",
    )


class LengthSettings(_Section):
    """Length shaping: DAPO soft overlong, open-r1 cosine, Kimi k1.5 group length."""

    max_length: Count = Field(20480, gt=0, description="DAPO L_max, in tokens.")
    cache_length: Count = Field(4096, ge=0, description="DAPO L_cache: the soft-penalty window before L_max.")
    cosine_max_length: Count = Field(1000, gt=0, description="open-r1 cosine: length at which the cosine ends.")
    cosine_min_value_wrong: Number = -1.0
    cosine_max_value_wrong: Number = -0.5
    cosine_min_value_correct: Number = 0.5
    cosine_max_value_correct: Number = 1.0
    repetition_ngram_size: Count = Field(3, gt=0)
    repetition_max_penalty: Annotated[Number, Field(le=0)] = -1.0

    @model_validator(mode="after")
    def _cache_fits(self) -> LengthSettings:
        if self.cache_length > self.max_length:
            raise ValueError("cache_length must not exceed max_length")
        return self


class CodeSettings(_Section):
    """Judging for `task: code`; a reference's own limits win over these defaults."""

    all_or_nothing: bool = Field(
        False,
        description="Accuracy 1 only when every test passes, else 0, instead of the pass fraction; "
        "also stops at the first failure unless the reference sets stop_on_first_failure.",
    )
    stop_on_first_failure: bool = Field(
        False, description="Stop at the first failing test; the rest report `skipped` and count as failed."
    )
    time_limit_s: Annotated[Number, Field(gt=0)] = Field(
        2.0, description="CPU seconds per test when the reference sets no time_limit."
    )
    memory_limit_mb: Count = Field(512, gt=0, description="Memory per test when the reference sets no memory_limit.")
    total_time_limit_s: Annotated[Number, Field(gt=0)] = Field(
        60.0,
        description="The whole run (compiling and every test) when the reference sets no total_time_limit; "
        "tests not run in time report `skipped`. Capped by the service's REWARD_API_CODE_DEADLINE_S.",
    )
    max_tests: Count = Field(100, gt=0, description="Run at most this many of a reference's tests (the first ones).")


class Profile(_Section):
    name: str = "custom"
    weights: Weights = Field(
        default_factory=lambda: {"accuracy": 1.0},
        description="Component -> weight; the reward is the weighted sum of these components.",
    )
    accuracy_range: tuple[Number, Number] = Field(
        (0.0, 1.0), description="The accuracy component in [0, 1] maps linearly onto [low, high]."
    )
    correct_threshold: Number = Field(
        1.0, description="Accuracy at or above which an item counts as correct (length rewards)."
    )
    failure_reward: Number = Field(0.0, description="Reward of an item whose status is not ok.")
    math: MathSettings = MathSettings()
    format: FormatSettings = FormatSettings()
    language: LanguageSettings = LanguageSettings()
    length: LengthSettings = LengthSettings()
    code: CodeSettings = CodeSettings()

    @model_validator(mode="after")
    def _known_components(self) -> Profile:
        unknown = sorted(set(self.weights) - set(COMPONENTS))
        if unknown:
            raise ValueError(f"unknown component(s) {unknown} in weights; known: {list(COMPONENTS)}")
        return self

    def text_components(self) -> tuple[str, ...]:
        """Text components this profile needs; accuracy is always graded."""
        return tuple(c for c in TEXT_COMPONENTS if c == "accuracy" or c in self.weights)

    def scaled_accuracy(self, accuracy: float) -> float:
        low, high = self.accuracy_range
        return low + (high - low) * accuracy


PRESETS: dict[str, Profile] = {
    "r1": Profile(name="r1", weights={"accuracy": 1.0, "format": 1.0, "language": 1.0}),
    "dapo": Profile(name="dapo", weights={"accuracy": 1.0, "overlong": 1.0}, accuracy_range=(-1.0, 1.0)),
    "kimi": Profile(name="kimi", weights={"accuracy": 1.0, "kimi_length": 1.0}),
    **{c: Profile(name=c, weights={c: 1.0}) for c in COMPONENTS},
}
DEFAULT_PROFILE = "accuracy"


SECTIONS = ("math", "format", "language", "length", "code")
# A preset's name: the schema lists the presets; resolve_profile names an unknown one and lists them.
PresetName = Annotated[str, WithJsonSchema({"type": "string", "enum": sorted(PRESETS)})]


def _all_optional(model: type[BaseModel], name: str, **types: Any) -> type[_Section]:
    """`model`'s fields, every one optional (absent or null keeps the preset's value), each with the type,
    bounds and description of the field it overrides, so an override cannot drift from its section.
    `types` replace some fields' types. Cross-field checks run on the merged profile, in resolve_profile."""
    fields: dict[str, Any] = {
        field: (
            types.get(field, info.rebuild_annotation()) | None,
            Field(None, description=info.description, json_schema_extra=info.json_schema_extra),
        )
        for field, info in model.model_fields.items()
    }
    return create_model(name, __base__=_Section, __doc__=f"Fields of {model.__name__} to override.", **fields)


class ProfileOverride(
    _all_optional(
        Profile,
        "ProfileFields",
        **{
            section: _all_optional(Profile.model_fields[section].annotation, f"{section.title()}Override")
            for section in SECTIONS
        },
    )
):
    """An inline profile in a request: a preset plus overrides.

    Top-level fields replace the preset's; a settings section (`math`, `format`,
    `language`, `length`, `code`) is merged field by field into the preset's section.
    """

    name: PresetName = Field(DEFAULT_PROFILE, description="The preset to start from.")


def resolve_profile(spec: str | ProfileOverride | None) -> Profile:
    """Turn a request's `profile` into a Profile; raises ValueError naming what is wrong."""
    if spec is None:
        spec = DEFAULT_PROFILE
    if isinstance(spec, str):
        spec = ProfileOverride(name=spec)
    if spec.name not in PRESETS:
        raise ValueError(f"unknown profile {spec.name!r}; presets: {sorted(PRESETS)}")
    merged = PRESETS[spec.name].model_dump()
    for key, value in spec.model_dump(exclude_none=True, exclude={"name"}).items():
        merged[key] = merged[key] | value if key in SECTIONS else value
    return Profile.model_validate(merged)
