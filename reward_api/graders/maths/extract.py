"""Final-answer extraction from R1-style completions.

Order of precedence, on the text after the last `</think>` (and inside the last
`<answer>...</answer>` when the completion uses answer tags):

1. the last `\\boxed{...}` / `\\fbox{...}` (balanced, nested braces), together with
   boxes right before it that are joined by a separator ("\\boxed{1} and \\boxed{2}"),
   unless a final answer (GSM8K's `#### N`, "final answer is ...", 最终答案是) follows it
   (boxed intermediate results);
2. GSM8K's final-answer marker: the number after the last `####`, commas removed
   ("#### 1,234" -> "1234");
3. an answer phrase, the last one: "final answer is ...", "the answer is ...", "Answer: ...",
   and in the languages the language grader detects: 答案是 / 答案为 / 最终答案是 / 答案：,
   答えは, 답은 / 정답은, "la réponse est", "die Antwort ist", "la respuesta es",
   "a resposta é", "ответ:" / "ответ равен". The answer ends at the sentence's end
   (". ", "。", a blank line) or where CJK prose resumes ("42입니다" -> "42");
4. a plain final expression: the last line when it reads as math (not CJK prose around
   two math environments or more), else the rightmost math environment (`$...$`, `$$...$$`,
   `\\(...\\)`, `\\[...\\]`) or number.

Cost is linear in the completion: boxes are found with `str.rfind` (C speed) over the
whole region and each box is scanned once with a cap; the `####` marker, phrases and
plain expressions are searched only in the last TAIL_CHARS characters, where a final
answer lives, and every regex here is free of nested quantifiers, so none can backtrack
catastrophically.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass
from itertools import pairwise

THINK_CLOSE = "</think>"
# The `####` marker, phrases and plain expressions are looked for in this many trailing characters only.
TAIL_CHARS = 8000
# A box that never closes (a truncated completion) is cut here, and a box joins the one after it only
# if it starts within this many characters: room for a 30x30 matrix of fractions, or an integer of 4,000
# digits with separators. A box that closes is read whole, however long: cutting it would score a long
# right answer 0.
MAX_BOX_CHARS = 16_000
# At most this many adjacent boxes are joined into one answer.
MAX_JOINED_BOXES = 20

_BOX_COMMANDS = ("\\boxed", "\\fbox")
# Braces, and escaped characters such as \{ that never open or close: a box is scanned at C speed.
_BRACE = re.compile(r"\\.|[{}]", re.DOTALL)
# Text between two boxes that still joins them: short, or a list separator that is not a correction.
_BOX_SEPARATOR = re.compile(r"\b(?:and|or)\b|,|;")
# Words between two boxes that make the second a new result, not the next item of a list.
_BOX_CORRECTION = re.compile(
    r"(?i)\b(?:not|wrong|incorrect|instead|actually|but|correct(?:ed)?|mistake|wait|then|after|"
    r"check(?:ing|ed)?|so|thus|hence|therefore|final(?:ly)?|answer)\b"
)
_ANSWER_TAG = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.DOTALL)
# "final answer is" in the languages the language grader detects; each phrase ends with its connector.
_FINAL_PHRASES = r"\bfinal\s+answer\b|最终答案(?:[是为][：:]?|[：:])?"
_ANCHOR = re.compile(
    rf"(?i){_FINAL_PHRASES}|\banswer\b|答案(?:[是为][：:]?|[：:])|答え(?:は|[：:])|정?답은"
    r"|\bla\s+réponse\s+(?:finale\s+)?est\b|\bdie\s+(?:endgültige\s+)?antwort\s+(?:ist|lautet)\b"
    r"|\bla\s+respuesta\s+(?:final\s+)?es\b|\ba\s+resposta\s+(?:final\s+)?é|\bответ(?:\s*:|\s+равен\b)"
)
_FINAL_ANCHOR = re.compile(rf"(?i){_FINAL_PHRASES}")
_CONNECTOR = re.compile(r"(?i)\bis\b|\bequals\b|\bbe\b|:|=")
_SENTENCE_END = re.compile(r"\.(?=\s|$)|\n\s*\n|[。！？]")
# Where CJK prose resumes after an answer ("42 个", "42입니다", "42です"): letters and full-width punctuation.
_CJK_TEXT = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3\uff01-\uff0f\uff1a-\uff20]")
# GSM8K's final answer: "#### 72" (a "$" may precede the number); one quantifier per position.
_GSM8K_MARK = "####"
_GSM8K_NUMBER = re.compile(r"[ \t]*(?:\\?\$[ \t]*)?(-?\d[\d,]*(?:\.\d+)?)")
_DELIMITER = re.compile(r"\\\$|\$\$|\$|\\\[|\\\]|\\\(|\\\)")
_CLOSER = {"$$": "$$", "$": "$", "\\[": "\\]", "\\(": "\\)"}
_ENV_JOINER = re.compile(r"\s*(?:,\s*)?(?:and|or|,)\s*$")
_NUMBER = re.compile(
    r"(?<![\w.\\])-?(?:\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)(?:\s*/\s*\d+(?:\.\d+)?)?(?:\s*(?:\\?%|percent))?"
)
_WORD = re.compile(r"[A-Za-z]{2,}")
_TEXT_COMMAND = re.compile(r"\\(?:text\w*|mathrm|mbox)\{[^{}]*\}")
# Words that end an answer written in prose ("12, which is ...").
_STOP_WORDS = frozenset(
    {"which", "because", "since", "as", "so", "where", "when", "that", "for", "but", "if", "then"}
    | {"thus", "hence", "is", "are", "was", "were", "we", "it", "this", "the", "note", "i"}
    | {"car", "puisque", "donc", "weil", "denn", "porque", "pues", "pois", "потому", "поскольку", "так"}
)
_TRIM = " \t\r\n.,;:*`\"'"
_LEAD = " \t\r\n*:`\"'"  # what may precede an answer; a leading "." belongs to ".5"


@dataclass(frozen=True)
class Extracted:
    text: str
    source: str  # "boxed", "gsm8k", "phrase" or "plain"


def extract_answer(completion: str) -> Extracted | None:
    """The final answer of a completion, or None when it gives none."""
    region = answer_region(completion)
    tail_start = max(0, len(region) - TAIL_CHARS)
    tail = region[tail_start:]
    boxed = last_boxed(region)
    if boxed is not None:
        # "\\boxed{200} ... The final answer is $10,455$.": a later final answer wins over a box.
        marked = gsm8k_answer(tail, after=boxed[1] - tail_start)
        if marked:
            return Extracted(marked, "gsm8k")
        if _FINAL_ANCHOR.search(region, boxed[1]):
            phrase = phrase_answer(tail, math_spans(tail), _FINAL_ANCHOR, after=boxed[1] - tail_start)
            if phrase:
                return Extracted(phrase, "phrase")
        return Extracted(boxed[0], "boxed") if boxed[0] else None
    marked = gsm8k_answer(tail)
    if marked:
        return Extracted(marked, "gsm8k")
    spans = math_spans(tail)
    phrase = phrase_answer(tail, spans, _ANCHOR)
    if phrase:
        return Extracted(phrase, "phrase")
    plain = plain_answer(tail, spans)
    return Extracted(plain, "plain") if plain else None


def answer_region(completion: str) -> str:
    """The text after the last </think>, narrowed to the last <answer> block if there is one."""
    cut = completion.rfind(THINK_CLOSE)
    region = completion[cut + len(THINK_CLOSE) :] if cut >= 0 else completion
    start = region.rfind("<answer>")
    if start >= 0:
        match = _ANSWER_TAG.match(region, start)
        if match:
            return match.group(1)
    return region


def last_boxed(text: str) -> tuple[str, int] | None:
    """(content, end) of the last box, joined with the boxes listed right before it; None without a box."""
    found = _box_before(text, len(text))
    if found is None:
        return None
    start, content, end = found
    contents = [content]
    for _ in range(MAX_JOINED_BOXES):
        # A box that may join ends within 70 characters of this one and holds at most MAX_BOX_CHARS.
        previous = _box_before(text, start, lower=max(0, start - MAX_BOX_CHARS - 80))
        if previous is None:
            break
        prev_start, prev_content, prev_end = previous
        if prev_end > start:  # a box around this one (`\\boxed{\\boxed{3n}}`): the outer box is the answer
            contents[-1], start, end = prev_content, prev_start, max(end, prev_end)
            continue
        if not _joins(text[prev_end:start], prev_content, contents[-1]):
            break
        if prev_content != contents[-1]:
            contents.append(prev_content)
        start = prev_start
    return ", ".join(reversed(contents)).strip(), end


def _box_before(text: str, limit: int, lower: int = 0) -> tuple[int, str, int] | None:
    """(start, content, end) of the last box command starting in text[lower:limit]."""
    start = max(text.rfind(command, lower, limit) for command in _BOX_COMMANDS)
    if start < 0:
        return None
    pos = start + (6 if text.startswith("\\boxed", start) else 5)
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    if pos < len(text) and text[pos] == "{":
        close = _closing_brace(text, pos)
        if close is None:  # unterminated (e.g. a truncated completion): keep what is there
            return start, text[pos + 1 : pos + MAX_BOX_CHARS].strip().rstrip("$").strip(), len(text)
        return start, text[pos + 1 : close].strip(), close + 1
    # `\boxed 5`: the box holds the next token
    token = re.match(r"\s*([^\s$]+)", text[pos : pos + 200])
    content = token.group(1) if token else ""
    return start, content, pos + (token.end() if token else 0)


def _closing_brace(text: str, open_pos: int) -> int | None:
    depth = 0
    for match in _BRACE.finditer(text, open_pos):
        if match.group() == "{":
            depth += 1
        elif match.group() == "}":
            depth -= 1
            if depth == 0:
                return match.start()
    return None


def _joins(between: str, previous: str, current: str) -> bool:
    if len(between) < 10:
        return not _BOX_CORRECTION.search(between)
    return (
        len(between) < 70
        and previous != current
        and bool(_BOX_SEPARATOR.search(between))
        and not _BOX_CORRECTION.search(between)
    )


def math_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of each math environment, found in one linear pass over the delimiters."""
    spans: list[tuple[int, int, str]] = []
    opener: re.Match[str] | None = None
    for match in _DELIMITER.finditer(text):
        token = match.group()
        if token == "\\$":
            continue
        if opener is None:
            if token in _CLOSER:
                opener = match
            continue
        if token == _CLOSER[opener.group()]:
            content = text[opener.end() : match.start()]
            if opener.group() != "$" or "\n" not in content:  # inline $...$ stays on one line
                spans.append((opener.start(), match.end(), content))
                opener = None
            else:
                opener = match
        elif token in _CLOSER and opener.group() == "$" and "\n" in text[opener.end() : match.start()]:
            opener = match
    return spans


def gsm8k_answer(tail: str, after: int = 0) -> str | None:
    """The number after the last `####` (GSM8K's final-answer line), commas removed, if past `after`."""
    mark = tail.rfind(_GSM8K_MARK)
    if mark < max(after, 0):
        return None
    number = _GSM8K_NUMBER.match(tail, mark + len(_GSM8K_MARK))
    return number.group(1).replace(",", "") if number else None


def phrase_answer(tail: str, spans: list[tuple[int, int, str]], anchors: re.Pattern[str], after: int = 0) -> str | None:
    """The answer stated after the last anchor ("The final answer is $5$", "Answer: 5"), if past `after`."""
    anchor = _last_match(anchors, tail)
    if anchor is None or anchor.start() < after or _inside(anchor.start(), spans):
        return None
    start = anchor.end()
    while start < len(tail) and tail[start] in " \t\r\n*:":
        start += 1
    end = _sentence_end(tail, start, spans)
    prose = _CJK_TEXT.search(tail, start, end)
    if prose and tail[start : prose.start()].strip():
        end = prose.start()
    connectors = [m for m in _CONNECTOR.finditer(tail, anchor.end(), end) if not _inside(m.start(), spans)]
    for begin in [start] + [m.end() for m in reversed(connectors)]:
        answer = _leading_answer(tail, begin, end, spans)
        if answer:
            return answer
    return None


def _sentence_end(text: str, start: int, spans: list[tuple[int, int, str]]) -> int:
    for match in _SENTENCE_END.finditer(text, start, min(len(text), start + 400)):
        if not _inside(match.start(), spans):
            return match.start()
    newline = text.find("\n", start, start + 400)
    return newline if newline >= 0 else min(len(text), start + 400)


def _leading_answer(text: str, begin: int, end: int, spans: list[tuple[int, int, str]]) -> str | None:
    """The math at the start of text[begin:end]: its environments, or a short run of math-like tokens."""
    while begin < end and (text[begin] in _LEAD or text.startswith('\\"', begin)):
        begin += 1
    env = _env_run(text, begin, spans)
    if env is not None:
        return env or None
    words = text[begin:end].split()
    if not words or (len(words) > 1 and _WORD.fullmatch(words[0].strip(_TRIM))):
        return None  # prose such as "The largest $n$ is 34": try the next connector
    return _math_prefix(text[begin:end])


def _env_run(text: str, begin: int, spans: list[tuple[int, int, str]]) -> str | None:
    """Environments starting at `begin` and joined by "and"/"or"/"," ("$1$ and $2$"), as one list."""
    contents = []
    pos = begin
    for start, end, content in spans[bisect_left(spans, (begin,)) :]:
        if start != pos and not (contents and _ENV_JOINER.match(text[pos:start])):
            break
        contents.append(content.strip())
        pos = end
    return ", ".join(contents) if contents else None


def _math_prefix(chunk: str) -> str | None:
    """Tokens up to the first stop word or the second word of prose in a row."""
    kept: list[str] = []
    prose_run = 0
    for token in chunk.split():
        word = token.strip(_TRIM).lower()
        if word in _STOP_WORDS:
            break
        prose_run = prose_run + 1 if _WORD.fullmatch(word) else 0
        if prose_run == 2:
            break
        kept.append(token)
    answer = " ".join(kept).lstrip(_LEAD).rstrip(_TRIM)
    return answer or None


def plain_answer(tail: str, spans: list[tuple[int, int, str]]) -> str | None:
    """The last line when it reads as math, else the rightmost math environment or number."""
    stripped = tail.rstrip().rstrip(".").rstrip()
    line_start = stripped.rfind("\n") + 1
    line = stripped[line_start:].lstrip(_LEAD).rstrip(_TRIM)
    if spans and spans[-1][0] <= line_start and not stripped[spans[-1][1] :].strip(_TRIM):
        return spans[-1][2].strip() or None  # a display block closes the text
    if line and _reads_as_math(line):
        return line
    env = spans[-1] if spans else None
    number = _last_match(_NUMBER, tail)
    if number is not None and (env is None or number.start() >= env[1]):
        return number.group().strip()
    return (env[2].strip() or None) if env else None


def _reads_as_math(line: str) -> bool:
    """A short line of math, not prose ("x = 3", "$1$ and $2$", "\\text{Evelyn}", but not "So x = 3")."""
    words = [word.strip(_TRIM) for word in _TEXT_COMMAND.sub(" ", line).split()]
    if len(line) > 200 or (len(words) > 1 and _WORD.fullmatch(words[0])):
        return False
    if _CJK_TEXT.search(line) and len(math_spans(line)) > 1:
        return False  # CJK prose between math (`因此，$y$ 的范围是 $[1, 3)$。`): the last math is the answer
    prose = [bool(_WORD.fullmatch(word)) and word not in ("and", "or") for word in words]
    if any(a and b for a, b in pairwise(prose)):
        return False  # two words of prose in a row: "2/3 Therefore, the probability"
    return len(line.split()) == 1 or any(ch.isdigit() or ch in "\\$^_{}()[]=+-/" for ch in line)


def _last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    last = deque(pattern.finditer(text), maxlen=1)
    return last[0] if last else None


def _inside(pos: int, spans: list[tuple[int, int, str]]) -> bool:
    """Is `pos` inside a math environment? Spans are sorted and disjoint."""
    index = bisect_left(spans, (pos,)) - 1
    return index >= 0 and spans[index][1] > pos
