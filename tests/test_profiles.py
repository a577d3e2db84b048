"""Profile presets and inline overrides (pure logic, no server)."""

from __future__ import annotations

import pytest

from reward_api.profiles import PRESETS, ProfileOverride, resolve_profile


@pytest.mark.parametrize(
    ("spec", "weights", "accuracy_range"),
    [
        (None, {"accuracy": 1.0}, (0.0, 1.0)),
        ("r1", {"accuracy": 1.0, "format": 1.0, "language": 1.0}, (0.0, 1.0)),
        ("dapo", {"accuracy": 1.0, "overlong": 1.0}, (-1.0, 1.0)),
        ("kimi", {"accuracy": 1.0, "kimi_length": 1.0}, (0.0, 1.0)),
        ("cosine", {"cosine": 1.0}, (0.0, 1.0)),
        (ProfileOverride(name="r1", weights={"accuracy": 2.0}), {"accuracy": 2.0}, (0.0, 1.0)),
        (ProfileOverride(name="accuracy", accuracy_range=(-1, 1)), {"accuracy": 1.0}, (-1.0, 1.0)),
    ],
)
def test_resolve_profile(spec, weights, accuracy_range) -> None:
    profile = resolve_profile(spec)
    assert profile.weights == weights
    assert profile.accuracy_range == accuracy_range


def test_overrides_replace_only_the_sections_they_name() -> None:
    profile = resolve_profile(ProfileOverride.model_validate({"name": "dapo", "length": {"max_length": 10000}}))
    assert profile.length.max_length == 10000
    assert profile.length.cache_length == PRESETS["dapo"].length.cache_length
    assert profile.weights == PRESETS["dapo"].weights
    assert profile.format == PRESETS["dapo"].format


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope", "unknown profile 'nope'"),
        (ProfileOverride(name="r1", weights={"speed": 1.0}), "unknown component"),
    ],
)
def test_bad_profiles_say_what_is_wrong(spec, message) -> None:
    with pytest.raises(ValueError, match=message):
        resolve_profile(spec)


@pytest.mark.parametrize(
    ("profile", "components"),
    [
        ("accuracy", ("accuracy",)),
        ("r1", ("accuracy", "format", "language")),
        ("repetition", ("accuracy", "repetition")),
        ("dapo", ("accuracy",)),
    ],
)
def test_text_components_always_include_accuracy(profile, components) -> None:
    assert resolve_profile(profile).text_components() == components


@pytest.mark.parametrize(
    ("accuracy_range", "accuracy", "scaled"), [((0, 1), 1, 1), ((-1, 1), 0, -1), ((-1, 1), 0.5, 0)]
)
def test_scaled_accuracy(accuracy_range, accuracy, scaled) -> None:
    assert resolve_profile(ProfileOverride(accuracy_range=accuracy_range)).scaled_accuracy(accuracy) == scaled
