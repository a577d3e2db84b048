"""DeepSeek-R1 format reward: thinking between `<think>` and `</think>`, then an answer.

Modes (value 1.0 when the rules hold, else 0.0, except `tag_count`):

- `strict`: the completion is optional whitespace, one think block, then a non-empty
  answer. Chat templates such as DeepSeek-R1's and Qwen3's put `<think>` in the prompt,
  so the completion starts inside the block: a completion with no `<think>` and exactly
  one `</think>` counts as that case (the block is everything before `</think>`).
- `lenient`: exactly one think block, anywhere, `<think>` before `</think>` (or the
  template-opened case above), and a non-empty answer after it.
- `tag_count`: open-r1's `tag_count_reward`: each expected tag (think tags, plus answer
  tags when configured) seen exactly once earns 1/len(tags), i.e. 0.25 each with answer
  tags. Unlike open-r1 the tags are counted bare, without the surrounding newlines, and an
  empty think block earns nothing.

In every mode an empty think block (`<think></think>`, or no letter or digit in it: `<think>...</think>`)
fails: the format reward is for thinking, and a policy finds the empty block quickly.

With `answer_open`/`answer_close` the answer must also be one tag pair holding non-empty
text: in strict mode the pair is the whole answer, in lenient mode it may be surrounded
by other text. Every check is str.count/str.find, linear in the input.

`details["problems"]` lists what failed, e.g. "missing </think>", "2 <think> tags",
"empty answer"; it is empty when the format holds.
"""

from __future__ import annotations

from reward_api.graders.base import Score
from reward_api.graders.thought import is_blank
from reward_api.profiles import FormatSettings


def grade_format(completion: str, settings: FormatSettings) -> Score:
    if settings.mode == "tag_count":
        return _tag_count(completion, settings)
    problems = _think_problems(completion, settings, strict=settings.mode == "strict")
    return Score(0.0 if problems else 1.0, {"mode": settings.mode, "problems": problems})


def _tag_count(completion: str, settings: FormatSettings) -> Score:
    tags = [settings.think_open, settings.think_close]
    if settings.answer_open and settings.answer_close:
        tags += [settings.answer_open, settings.answer_close]
    counts = {tag: completion.count(tag) for tag in tags}
    problems = [_count_problem(tag, n) for tag, n in counts.items() if n != 1]
    value = sum(n == 1 for n in counts.values()) / len(tags)
    open_at, close_at = completion.find(settings.think_open), completion.find(settings.think_close)
    if 0 <= open_at < close_at and is_blank(completion[open_at + len(settings.think_open) : close_at]):
        problems, value = [*problems, f"empty {settings.think_open}"], 0.0
    return Score(value, {"mode": "tag_count", "tag_counts": counts, "problems": problems})


def _count_problem(tag: str, count: int) -> str:
    return f"missing {tag}" if count == 0 else f"{count} {tag} tags"


def _think_problems(completion: str, settings: FormatSettings, strict: bool) -> list[str]:
    open_tag, close_tag = settings.think_open, settings.think_close
    opens, closes = completion.count(open_tag), completion.count(close_tag)
    problems = [_count_problem(close_tag, closes)] if closes != 1 else []
    if opens > 1:
        problems.append(_count_problem(open_tag, opens))
    if problems:
        return problems
    close_at = completion.find(close_tag)
    thought_at = 0  # the template opened the block: the thought is everything before </think>
    if opens == 1:
        open_at = completion.find(open_tag)
        if open_at > close_at:
            return [f"{close_tag} before {open_tag}"]
        if strict and completion[:open_at].strip():
            problems.append(f"text before {open_tag}")
        thought_at = open_at + len(open_tag)
    if is_blank(completion[thought_at:close_at]):
        problems.append(f"empty {open_tag}")
    answer = completion[close_at + len(close_tag) :]
    return problems + _answer_problems(answer, settings, strict)


def _answer_problems(answer: str, settings: FormatSettings, strict: bool) -> list[str]:
    if not answer.strip():
        return ["empty answer"]
    open_tag, close_tag = settings.answer_open, settings.answer_close
    if not (open_tag and close_tag):
        return []
    opens, closes = answer.count(open_tag), answer.count(close_tag)
    problems = [_count_problem(tag, n) for tag, n in ((open_tag, opens), (close_tag, closes)) if n != 1]
    if problems:
        return problems
    open_at, close_at = answer.find(open_tag), answer.find(close_tag)
    if open_at > close_at:
        return [f"{close_tag} before {open_tag}"]
    if strict and (answer[:open_at].strip() or answer[close_at + len(close_tag) :].strip()):
        problems.append(f"text outside {open_tag}...{close_tag}")
    if not answer[open_at + len(open_tag) : close_at].strip():
        problems.append(f"empty {open_tag}")
    return problems
